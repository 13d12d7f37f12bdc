#!/usr/bin/env bash
# The README's first command: set up a fresh Debian 12 / Ubuntu machine, build, run the demo.
#   tools/setup.sh [BUILD_DIR [CMAKE_OPTIONS...]]     (default: build)
# 1. Debian packages (apt-get, through sudo unless root); 2. .venv with the Python clients the
# tests drive (tools/python-env.sh); 3. .nvcc with nvcc from PyPI (tools/nvcc-env.sh);
# 4. configure and build with 2 jobs; 5. the demo, with explanations on. CI (.ci/run) runs this.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
build=${1:-$root/build}
[[ $# -gt 0 ]] && shift
cd -- "$root"

step() { printf '\n::: %s\n' "$*"; }

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
step "Debian packages"
"${sudo[@]}" apt-get update </dev/null
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  cmake g++ make libboost-dev libfmt-dev catch2 libbenchmark-dev clang libclang-rt-14-dev \
  mesa-vulkan-drivers libvulkan1 libvulkan-dev python3 python3-venv pkg-config libzstd-dev liblz4-dev </dev/null

step "Python clients (.venv) and nvcc from PyPI (.nvcc)"
tools/python-env.sh </dev/null
tools/nvcc-env.sh </dev/null

step "configure and build ($build)"
# REQUIRE: the Python and nvcc tests were just set up, so their absence is an error, not a skip.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDA_SHIM_REQUIRE_PYTHON_TESTS=ON \
  -DCUDA_SHIM_REQUIRE_NVCC=ON "$@" </dev/null
cmake --build "$build" -j2

step "the demo"
"$build/bin/cuda-shim" run --explain -- "$build/bin/cuda-shim-demo"
