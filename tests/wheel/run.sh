#!/usr/bin/env bash
# The Python package, as a user gets it: builds the wheel from the source tree (pip wheel, i.e.
# scikit-build-core driving CMake), installs it into a clean virtual environment with the pinned
# cuda-core / cuda-bindings / numpy / pytest, then, WITHOUT the launcher or LD_LIBRARY_PATH:
#   - cuda.core's memory tests (tests/python) through the pytest plugin (-p cuda_shim);
#   - the plugin's fixtures, enabled by -p (autoload off) and by the ini option (autoload on);
#   - that the plugin stays inert unless enabled;
#   - the console command: cuda-shim --version / info / run;
#   - activate()'s refusal when another libcuda.so.1 is loaded first (a dummy one built here).
# Usage: tests/wheel/run.sh [SOURCE_DIR]   (needs python3-venv, a C compiler and PyPI or pip's cache)
# KEEP_WHEEL_TMP=1 keeps the temporary folder (wheel, build, venv) for a look afterwards.
set -euo pipefail

src=$(cd -- "${1:-$(dirname -- "${BASH_SOURCE[0]}")/../..}" && pwd)
here=$src/tests/wheel
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-shim-wheel.XXXXXX")
if [[ -z ${KEEP_WHEEL_TMP:-} ]]; then
  trap 'rm -rf -- "$tmp"' EXIT
else
  echo "keeping $tmp"
fi

# Nothing of the caller's emulator setup may leak in: the wheel alone must provide it.
unset LD_LIBRARY_PATH LD_PRELOAD CUDA_SHIM_LIBDIR PYTEST_ADDOPTS PYTEST_PLUGINS
for v in $(env | sed -n 's/^\(CUDA_SHIM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

step() { printf '\n::: %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

step "clean virtual environment"
python3 -m venv "$tmp/venv"
py=$tmp/venv/bin/python

step "building the wheel (CMake, 2 jobs; build folder $tmp/build)"
start=$(date +%s)
if ! CMAKE_BUILD_PARALLEL_LEVEL=2 "$py" -m pip wheel --no-deps -w "$tmp/dist" \
    --config-settings=build-dir="$tmp/build" "$src" >"$tmp/build.log" 2>&1; then
  tail -n 60 "$tmp/build.log"
  fail "pip wheel failed"
fi
echo "built in $(($(date +%s) - start)) s"
wheels=("$tmp"/dist/cuda_shim-*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || fail "expected one cuda_shim wheel in $tmp/dist"
wheel=${wheels[0]}
echo "$(basename -- "$wheel")"
# No extension module, but native libraries: any Python 3, this platform only.
[[ $(basename -- "$wheel") == cuda_shim-*-py3-none-linux_x86_64.whl ]] || fail "unexpected wheel tag"
"$py" - "$wheel" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["cuda_shim/__init__.py", "cuda_shim/pytest_plugin.py", "cuda_shim/lib/libcuda.so.1",
        "cuda_shim/lib/libcudart.so.13", "cuda_shim/lib/libnvJitLink.so.13", "cuda_shim/bin/cuda-shim",
        "cuda_shim/bin/cuda-shim-info"]
missing = [n for n in need if n not in names]
assert not missing, f"missing from the wheel: {missing}"
# Zip files hold no symlinks: development names (libcuda.so) would be whole copies.
copies = [n for n in names if n.startswith("cuda_shim/lib/") and n.endswith(".so")]
assert not copies, f"the wheel carries development symlinks as copies: {copies}"
print(len(names), "files, libraries and launcher present")
PY

step "installing the wheel and the pinned clients"
grep -E '^(cuda-core|cuda-bindings|cuda-pathfinder|numpy|pytest)==' "$src/tests/python/requirements.txt" >"$tmp/req.txt"
"$py" -m pip install --quiet "$wheel" -r "$tmp/req.txt"
bin=$tmp/venv/bin

step "cuda-shim console command"
version=$("$py" -c 'import cuda_shim; print(cuda_shim.__version__)')
[[ $("$bin/cuda-shim" --version) == "cuda-shim $version" ]] || fail "cuda-shim --version is not $version"
"$bin/cuda-shim" info --devices 2 | tee "$tmp/info.txt"
grep -q '^GPU 1' "$tmp/info.txt" || fail "cuda-shim info --devices 2 did not list GPU 1"
"$bin/cuda-shim" run --devices 3 -- "$py" -c '
import ctypes
from cuda.bindings import driver as cu
assert hasattr(ctypes.CDLL("libcuda.so.1"), "cuShimGetVersion"), "not on the emulator"
cu.cuInit(0)
assert cu.cuDeviceGetCount()[1] == 3
print("cuda-shim run: 3 emulated devices")'
"$py" -m cuda_shim --version

step "activate() in a program, no launcher"
"$py" -c '
import cuda_shim, os
cuda_shim.activate(devices=2)
from cuda.bindings import driver as cu
from cuda.core import Device
Device(1).set_current()
assert cu.cuDeviceGetCount()[1] == 2
print("activate(): 2 devices, libdir", cuda_shim.libdir())'

step "refusal when another libcuda.so.1 is loaded first"
mkdir -p "$tmp/other"
echo 'int cuInit(unsigned int flags) { return 100; }' >"$tmp/other/fake.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$tmp/other/libcuda.so.1" "$tmp/other/fake.c"
"$py" - "$tmp/other/libcuda.so.1" <<'PY'
import ctypes, sys
ctypes.CDLL(sys.argv[1])  # as if NVIDIA's driver had been loaded by an earlier import
import cuda_shim
try:
    cuda_shim.activate()
except cuda_shim.ActivationError as e:
    assert sys.argv[1] in str(e), e
    print("refused:", e)
else:
    sys.exit("activate() accepted a process that has another libcuda.so.1")
PY
# The plugin turns that into a usage error (exit status 4) naming the library.
set +e
(cd "$tmp" && "$py" - "$tmp/other/libcuda.so.1" >"$tmp/refuse.log" 2>&1 <<'PY'
import ctypes, sys
ctypes.CDLL(sys.argv[1])
import pytest
sys.exit(pytest.main(["-p", "cuda_shim", "-q", "--co"]))
PY
)
rc=$?
set -e
cat "$tmp/refuse.log"
[[ $rc -eq 4 ]] && grep -q "another libcuda.so.1" "$tmp/refuse.log" || fail "the plugin did not refuse (exit $rc)"

step "the plugin is inert unless enabled (autoload on, then off)"
mkdir -p "$tmp/inert" && cp "$here/test_inert.py" "$tmp/inert/" && printf '[pytest]\n' >"$tmp/inert/pytest.ini"
(cd "$tmp/inert" && "$py" -m pytest -q -p no:cacheprovider)
(cd "$tmp/inert" && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$py" -m pytest -q -p no:cacheprovider)

step "fixtures: pytest -p cuda_shim --cuda-shim-devices 2 (autoload off)"
mkdir -p "$tmp/cmdline" && cp "$here/test_fixtures.py" "$tmp/cmdline/" && printf '[pytest]\n' >"$tmp/cmdline/pytest.ini"
(cd "$tmp/cmdline" && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "$py" -m pytest -q -rs -p no:cacheprovider \
  -p cuda_shim --cuda-shim-devices 2) | tee "$tmp/cmdline.log"
grep -q "1 skipped" "$tmp/cmdline.log" || fail "the cuda_shim_devices(3) marker did not skip"

step "fixtures: ini option cuda_shim = true (autoload on)"
mkdir -p "$tmp/ini" && cp "$here/test_fixtures.py" "$tmp/ini/"
printf '[pytest]\ncuda_shim = true\ncuda_shim_devices = 2\n' >"$tmp/ini/pytest.ini"
(cd "$tmp/ini" && "$py" -m pytest -q -p no:cacheprovider)

step "cuda.core's memory tests through the plugin (tests/python, unchanged)"
(cd "$src/tests/python" && "$py" -m pytest -q -p cuda_shim test_upstream_memory.py test_upstream_memory_pools.py \
  test_device_memory_resource.py)

echo
echo "wheel test passed"
