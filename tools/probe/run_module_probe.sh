#!/usr/bin/env bash
# Runs the module probe and the module conformance test on a GPU machine (repository root):
#   tools/probe/run_module_probe.sh [OUTDIR]      (default: $OUT)
# Builds tests/conformance/module_kernels.cu's images (fat binary, sm_90 cubin, sm_100 cubin, PTX) and
# probe_module.cu with the toolkit's nvcc, runs the probe (once as is, once with
# CUDA_MODULE_LOADING=EAGER for the module/function/library sections), then builds
# tests/conformance/test_module.cpp against NVIDIA's driver (CUDA_SHIM_BACKEND=real; Catch2's
# header from .gpu/catch2) and runs each of its test cases in a process of its own.
set -uo pipefail
out=${1:-${OUT:?give OUTDIR or set OUT}}
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
work=/tmp/probe_module
mkdir -p "$work"
log=$out/build.log
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  "$nvcc" --version | tail -n 2
} > "$log" 2>&1

k=tests/conformance/module_kernels.cu
"$nvcc" -fatbin -arch=sm_90 $k -o $work/kernels.fatbin >> "$log" 2>&1
"$nvcc" -cubin -arch=sm_90 $k -o $work/kernels.sm_90.cubin >> "$log" 2>&1
"$nvcc" -cubin -arch=sm_100 $k -o $work/kernels.sm_100.cubin >> "$log" 2>&1
"$nvcc" -ptx -arch=sm_90 $k -o $work/kernels.ptx >> "$log" 2>&1
"$nvcc" -std=c++17 -O1 -arch=sm_90 -Itools/probe tools/probe/probe_module.cu -o $work/probe_module -lcuda >> "$log" 2>&1
ls -l $work >> "$log"

# Driver 580 hangs on truncated fat binaries: those sections are left out (each would wait for
# its alarm); every other section runs in a child of its own, 20 s at most.
export PROBE_ALARM=20 PROBE_SKIP=fatbin_truncated,fatbin_header
{
  echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $("$nvcc" --version | tail -n 1)"
  timeout 400 $work/probe_module $work
} > "$out/probe_module.txt" 2>&1
CUDA_MODULE_LOADING=EAGER PROBE_ONLY='load$,lazylib,module,func,library' timeout 100 $work/probe_module $work \
  > "$out/probe_module.eager.txt" 2>&1

b=/tmp/b
{
  cmake -S . -B $b -DCUDA_SHIM_BACKEND=real -DCATCH2_SINGLE_HEADER_DIR="$PWD/.gpu" -DCUDA_SHIM_BENCH=OFF \
    -DCUDA_SHIM_NVCC="$nvcc" -DNVIDIA_CUDA_ROOT="$cuda"
  cmake --build $b --target conf_test_module -j 16
} >> "$log" 2>&1
t=$b/bin/conf_test_module
res=$out/test_module.real.txt
: > "$res"
if [ -x $t ]; then
  $t --list-test-names-only 2>/dev/null | grep -v '^$' | while IFS= read -r name; do
    echo "=== $name" >> "$res"
    spec=$(printf '%s' "$name" | sed 's/[],[\\]/\\&/g')  # Catch2: escape , [ ] and \\
    timeout 60 $t "$spec" >> "$res" 2>&1
    echo "=== rc=$? $name" >> "$res"
  done
  echo "=== whole binary" >> "$res"
  timeout 120 $t >> "$res" 2>&1
  echo "=== rc=$?" >> "$res"
else
  echo "no test binary" >> "$res"
fi
