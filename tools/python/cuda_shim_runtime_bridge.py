"""Routes cuda.bindings.runtime's simple entry points to cuda-shim's libcudart.so.13.

Why: cuda.bindings.runtime carries NVIDIA's runtime linked statically, and that runtime
talks to the driver through NVIDIA's private export tables (cuGetExportTable), which
cuda-shim does not emulate. Every call through it fails. cuda.core uses it for a few
calls (Device.sync, the device count without NVML, Device.pci_bus_id); this bridge
replaces those module functions, and the other simple ones below, with calls into our
libcudart.so.13, much as LD_LIBRARY_PATH replaces a dynamically linked libcudart.

`cuda-shim run` puts this folder on PYTHONPATH; sitecustomize.py installs the hook. It acts
only when the loaded libcuda.so.1 is cuda-shim's, so on a real driver nothing changes.
Set CUDA_SHIM_PYTHON_BRIDGE=0 to turn it off.
"""
import ctypes
import importlib.abc
import importlib.machinery
import os
import sys

TARGET = "cuda.bindings.runtime"

# name -> (C argument kinds, Python argument count). "out_int"/"out_uint"/"out_size"
# are out-parameters, returned after the error code in order, as cuda.bindings does.
_SIMPLE = {
    "cudaDeviceSynchronize": (),
    "cudaDeviceReset": (),
    "cudaGetLastError": (),
    "cudaPeekAtLastError": (),
    "cudaGetDeviceCount": ("out_int",),
    "cudaGetDevice": ("out_int",),
    "cudaRuntimeGetVersion": ("out_int",),
    "cudaDriverGetVersion": ("out_int",),
    "cudaGetDeviceFlags": ("out_uint",),
    "cudaSetDevice": ("int",),
    "cudaSetDeviceFlags": ("uint",),
    "cudaInitDevice": ("int", "uint", "uint"),
    "cudaDeviceGetStreamPriorityRange": ("out_int", "out_int"),
    "cudaMemGetInfo": ("out_size", "out_size"),
    "cudaDeviceGetAttribute": ("out_int", "enum", "int"),
    "cudaDeviceCanAccessPeer": ("out_int", "int", "int"),
}

_CTYPES = {"int": ctypes.c_int, "uint": ctypes.c_uint, "enum": ctypes.c_int, "size": ctypes.c_size_t}


def _is_cuda_shim():
    try:
        return hasattr(ctypes.CDLL("libcuda.so.1"), "cuShimGetVersion")
    except OSError:
        return False


def _make_simple(rt, cfunc, kinds, pyname):
    err_t = rt.cudaError_t
    outs = [k[4:] for k in kinds if k.startswith("out_")]

    def call(*args):
        if len(args) != len(kinds) - len(outs):
            raise TypeError(f"{pyname}() takes {len(kinds) - len(outs)} arguments ({len(args)} given)")
        out_vals = [_CTYPES[k]() for k in outs]
        c_args, it_in, it_out = [], iter(args), iter(out_vals)
        for k in kinds:
            if k.startswith("out_"):
                c_args.append(ctypes.byref(next(it_out)))
            else:
                c_args.append(_CTYPES[k](int(next(it_in))))
        err = err_t(cfunc(*c_args))
        if not outs:
            return (err,)
        if err != err_t.cudaSuccess:
            return (err,) + (None,) * len(outs)
        return (err,) + tuple(v.value for v in out_vals)

    call.__name__ = call.__qualname__ = pyname
    call.__doc__ = f"{pyname}: routed to cuda-shim's libcudart.so.13 (see cuda_shim_runtime_bridge)."
    return call


def _make_pci_bus_id(rt, cfunc):
    err_t = rt.cudaError_t

    def cudaDeviceGetPCIBusId(length, device):
        buf = ctypes.create_string_buffer(b" " * int(length), int(length))
        err = err_t(cfunc(buf, ctypes.c_int(int(length)), ctypes.c_int(int(device))))
        if err != err_t.cudaSuccess:
            return (err, None)
        return (err, buf.raw)

    return cudaDeviceGetPCIBusId


def patch(rt):
    """Replaces the module's functions; returns the names it replaced."""
    lib = ctypes.CDLL("libcudart.so.13")
    done = []
    for name, kinds in _SIMPLE.items():
        if not hasattr(rt, name) or not hasattr(lib, name):
            continue
        cfunc = getattr(lib, name)
        cfunc.restype = ctypes.c_int
        setattr(rt, name, _make_simple(rt, cfunc, kinds, name))
        done.append(name)
    if hasattr(rt, "cudaDeviceGetPCIBusId"):
        cfunc = lib.cudaDeviceGetPCIBusId
        cfunc.restype = ctypes.c_int
        rt.cudaDeviceGetPCIBusId = _make_pci_bus_id(rt, cfunc)
        done.append("cudaDeviceGetPCIBusId")
    rt._cuda_shim_bridged = tuple(done)
    return done


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        if _is_cuda_shim():
            patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader)
        return spec


def install():
    if os.environ.get("CUDA_SHIM_PYTHON_BRIDGE", "1") == "0":
        return
    if TARGET in sys.modules:  # imported before us: patch in place
        if _is_cuda_shim():
            patch(sys.modules[TARGET])
        return
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
