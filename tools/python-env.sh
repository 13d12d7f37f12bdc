#!/usr/bin/env bash
# Makes a Python virtual environment with the real clients the Python tests drive:
# cuda-core, cuda-bindings, pytest and numpy from PyPI, at the versions in
# tests/python/requirements.txt, and the tests of CuPy's sdist for tests/upstream. Needs
# python3-venv (Debian). CMake finds .venv by itself.
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
# CuPy's own tests of its CUDA layer (tests/upstream): the wheel has none, its sdist has them. Only
# tests/ and pyproject.toml (their pytest configuration) are kept, in $venv/upstream; the sdist is
# the one of the pinned cupy-cuda13x, checked against its sha256.
[ -f "$venv/upstream/cupy-14.2.0/pyproject.toml" ] || "$venv/bin/python" - "$venv/upstream" <<'PY'
import hashlib, io, os, shutil, sys, tarfile, tempfile, urllib.request
URL = ("https://files.pythonhosted.org/packages/dc/10/"
       "059a92d40b161ea24607c9e41a75098812ca7021f2b565524f87beba15c9/cupy-14.2.0.tar.gz")
SHA256 = "cfed725e612178cfbdbf62f4a3a598b60edecbbca718c0d4580c21a16ae4a62c"
dst = sys.argv[1]
with urllib.request.urlopen(URL, timeout=300) as r:
    data = r.read()
if hashlib.sha256(data).hexdigest() != SHA256:
    sys.exit(f"{URL}: sha256 {hashlib.sha256(data).hexdigest()}, expected {SHA256}")
os.makedirs(dst, exist_ok=True)
tmp = tempfile.mkdtemp(dir=dst)  # unpacked aside, then renamed: never half a folder in place
with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    keep = [m for m in tar.getmembers() if (m.isfile() or m.isdir()) and ".." not in m.name.split("/")
            and (m.name.startswith("cupy-14.2.0/tests/") or m.name == "cupy-14.2.0/pyproject.toml")]
    tar.extractall(tmp, keep, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
shutil.rmtree(os.path.join(dst, "cupy-14.2.0"), ignore_errors=True)
os.rename(os.path.join(tmp, "cupy-14.2.0"), os.path.join(dst, "cupy-14.2.0"))
os.rmdir(tmp)
PY
"$venv/bin/python" -c "import cuda.core, cuda.bindings; print('python env ready:', '$venv', 'cuda.core', cuda.core.__version__)"
