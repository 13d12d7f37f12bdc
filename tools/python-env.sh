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
# NVIDIA's headers, for ABI tests only, taken from PyPI wheels and kept beside the environment,
# never installed into it (cuda.pathfinder would then find NVIDIA's libraries there instead of
# ours): CUDA 13.3's (the logical endpoint ABI test, tests/abi) and nvml.h (tests/nvml).
unpack_headers() {  # unpack_headers PACKAGE==VERSION DEST_DIR
  local dst=$2 tmp
  tmp=$(mktemp -d)
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
    -d "$tmp" "$1"
  "$venv/bin/python" - "$tmp" "$dst" <<'PY'
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
}
[ -f "$venv/cuda-13.3/include/cuda.h" ] || unpack_headers nvidia-cuda-runtime==13.3.29 "$venv/cuda-13.3/include"
[ -f "$venv/nvml/include/nvml.h" ] || unpack_headers nvidia-nvml-dev==13.5.37 "$venv/nvml/include"
"$venv/bin/python" -c "import cuda.core, cuda.bindings; print('python env ready:', '$venv', 'cuda.core', cuda.core.__version__)"
