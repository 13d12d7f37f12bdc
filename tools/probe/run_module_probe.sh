#!/usr/bin/env bash
# Runs the module probe (tools/probe/module/) and the module conformance test, on NVIDIA's driver
# or on cuda-shim, from the repository root:
#   tools/probe/run_module_probe.sh [OUTDIR]                   on a GPU machine (default: $OUT)
#   tools/probe/run_module_probe.sh --emu BUILD_DIR [OUTDIR]   on cuda-shim's BUILD_DIR/lib
#                                                              (default OUTDIR: /tmp/probe_module.emu)
# Both modes build tests/conformance/module_kernels.cu's images (fat binary, sm_90 cubin,
# sm_100 cubin, PTX) and the probe with the toolkit's nvcc ($CUDA_HOME, default /usr/local/cuda),
# and write the same files into OUTDIR: probe_module.txt (the whole probe), probe_module.eager.txt
# (CUDA_MODULE_LOADING=EAGER, the module/function/library sections) and build.log. On the GPU
# machine it then builds tests/conformance/test_module*.cpp against NVIDIA's driver
# (CUDA_SHIM_BACKEND=real; Catch2's header from .gpu/catch2) and runs each of their test cases in a
# process of its own (test_module.real.txt); with --emu it runs BUILD_DIR's conf_test_module* the
# same way, if built (test_module.emu.txt), and compares the probe's two files with the recorded
# tools/probe/probe_module.h200.txt and probe_module.eager.h200.txt (comment lines left out):
# the differing lines go to probe_module.diff and probe_module.eager.diff, a count to stdout.
set -uo pipefail
emu=
if [ "${1:-}" = --emu ]; then
  emu=$(cd "${2:?--emu needs BUILD_DIR}" && pwd) || exit 2
  shift 2
  out=${1:-${OUT:-/tmp/probe_module.emu}}
else
  out=${1:-${OUT:?give OUTDIR or set OUT}}
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
work=/tmp/probe_module${emu:+.emu}
mkdir -p "$work"
log=$out/build.log
if [ -n "$emu" ]; then
  machine="cuda-shim $emu"
  if [ -x "$emu/bin/cuda-shim" ]; then
    on() { "$emu/bin/cuda-shim" run -- "$@"; }
  else
    on() { LD_LIBRARY_PATH="$emu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
  fi
else
  machine=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
  on() { "$@"; }
fi
{
  if [ -n "$emu" ]; then echo "$machine"; else nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; fi
  "$nvcc" --version | tail -n 2
} > "$log" 2>&1

k=tests/conformance/module_kernels.cu
"$nvcc" -fatbin -arch=sm_90 $k -o $work/kernels.fatbin >> "$log" 2>&1
"$nvcc" -cubin -arch=sm_90 $k -o $work/kernels.sm_90.cubin >> "$log" 2>&1
"$nvcc" -cubin -arch=sm_100 $k -o $work/kernels.sm_100.cubin >> "$log" 2>&1
"$nvcc" -ptx -arch=sm_90 $k -o $work/kernels.ptx >> "$log" 2>&1
# runtime.cu holds the device code (it #includes module_kernels.cu); the rest is host C++.
"$nvcc" -std=c++17 -O1 -arch=sm_90 tools/probe/module/*.cpp tools/probe/module/runtime.cu \
  -o $work/probe_module -lcuda >> "$log" 2>&1
ls -l $work >> "$log"

# Driver 580 hangs on truncated fat binaries: those sections are left out in both modes, so the
# files compare (PROBE_SKIP= runs them); every other section runs in a child of its own, 20 s at most.
export PROBE_ALARM=20 PROBE_SKIP=${PROBE_SKIP-fatbin_truncated,fatbin_header}
{
  echo "# $machine; $("$nvcc" --version | tail -n 1)"
  on timeout 400 $work/probe_module $work
} > "$out/probe_module.txt" 2>&1
CUDA_MODULE_LOADING=EAGER PROBE_ONLY='load$,lazylib,module,func,library' on timeout 100 $work/probe_module $work \
  > "$out/probe_module.eager.txt" 2>&1

# The module tests' binaries (tests/conformance/test_module*.cpp).
mods="conf_test_module conf_test_module_library conf_test_module_launch"

# Each test case of the Catch2 binaries in a process of its own, then each whole binary.
run_tests() {  # RESULT_FILE BIN_DIR
  local res=$1 t
  : > "$res"
  for t in $mods; do run_binary "$2/$t" "$res"; done
}
run_binary() {  # BINARY RESULT_FILE
  local t=$1 res=$2
  if [ ! -x "$t" ]; then
    echo "no test binary $t" >> "$res"
    return
  fi
  $t --list-test-names-only 2>/dev/null | grep -v '^$' | while IFS= read -r name; do
    echo "=== $name" >> "$res"
    spec=$(printf '%s' "$name" | sed 's/[],[\\]/\\&/g')  # Catch2: escape , [ ] and \\
    timeout 60 $t "$spec" >> "$res" 2>&1
    echo "=== rc=$? $name" >> "$res"
  done
  echo "=== whole binary $t" >> "$res"
  timeout 120 $t >> "$res" 2>&1
  echo "=== rc=$?" >> "$res"
}

if [ -z "$emu" ]; then
  b=/tmp/b
  {
    cmake -S . -B $b -DCUDA_SHIM_BACKEND=real -DCATCH2_SINGLE_HEADER_DIR="$PWD/.gpu" -DCUDA_SHIM_BENCH=OFF \
      -DCUDA_SHIM_NVCC="$nvcc" -DNVIDIA_CUDA_ROOT="$cuda"
    cmake --build $b --target $mods -j 16
  } >> "$log" 2>&1
  run_tests "$out/test_module.real.txt" $b/bin
  exit 0
fi

run_tests "$out/test_module.emu.txt" "$emu/bin"
# The emulator's answers against the recorded driver's: lines only one side has, in order.
status=0
for f in probe_module probe_module.eager; do
  diff <(grep -v '^#' "tools/probe/$f.h200.txt") <(grep -v '^#' "$out/$f.txt") > "$out/$f.diff"
  n=$(grep -c '^[<>]' "$out/$f.diff")
  echo "$f: $n lines differ from tools/probe/$f.h200.txt ($out/$f.diff: < recorded, > emulator)"
  [ "$n" = 0 ] || status=1
done
exit $status
