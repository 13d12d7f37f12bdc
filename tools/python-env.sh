#!/usr/bin/env bash
# Makes a Python virtual environment with the real clients the Python tests drive:
# cuda-core, cuda-bindings, pytest and numpy from PyPI, at the versions in
# tests/python/requirements.txt. Needs python3-venv (Debian). CMake finds .venv by itself.
# Usage: tools/python-env.sh [VENV_DIR]   (default: .venv in the repository root)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$root/.venv}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  -r "$root/tests/python/requirements.txt"
# NVIDIA's CUDA 13.3 headers, for the logical endpoint ABI test only (tests/abi): taken from the
# runtime wheel and kept beside the environment, never installed into it (cuda.pathfinder would
# then find NVIDIA's libcudart there instead of ours).
hdr="$venv/cuda-13.3/include"
if [ ! -f "$hdr/cuda.h" ]; then
  tmp=$(mktemp -d)
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
    -d "$tmp" nvidia-cuda-runtime==13.3.29
  "$venv/bin/python" - "$tmp" "$hdr" <<'PY'
import glob, os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
with zipfile.ZipFile(glob.glob(os.path.join(src, "*.whl"))[0]) as z:
    for n in z.namelist():
        if n.startswith("nvidia/cu13/include/") and not n.endswith("/"):
            out = os.path.join(dst, n[len("nvidia/cu13/include/"):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(z.read(n))
PY
  rm -rf "$tmp"
fi
"$venv/bin/python" -c "import cuda.core, cuda.bindings; print('python env ready:', '$venv', 'cuda.core', cuda.core.__version__)"
