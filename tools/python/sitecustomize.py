"""Loaded by every Python started under `cuda-shim run` (this folder is on PYTHONPATH).

Installs cuda_shim_runtime_bridge's import hook, then runs the sitecustomize this one
shadows, if there is one further along sys.path, so an environment's own keeps working.
"""
import importlib.util
import os
import sys

try:
    import cuda_shim_runtime_bridge

    cuda_shim_runtime_bridge.install()
except Exception as e:  # never break the interpreter's start
    print(f"cuda-shim: the Python runtime bridge did not install: {e}", file=sys.stderr)


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_cuda_shim_chained_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


_chain()
