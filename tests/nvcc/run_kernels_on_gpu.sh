#!/usr/bin/env bash
# Builds the kernel programs of tests/nvcc (CTest label `kernels`) with a CUDA toolkit's nvcc and
# runs each on the machine's GPU with NVIDIA's driver, no cuda-shim: the same sources must pass
# there, which is what makes their expectations the GPU's. One line per program and build:
#   PASS|FAIL  PROGRAM  BUILD  (exit code; the program's last line)
# and, for a failure, the program's output below it, indented. Exits non-zero if any failed.
# Usage: tests/nvcc/run_kernels_on_gpu.sh [PROGRAM...]      (default: all of them)
#   NVCC=/usr/local/cuda/bin/nvcc (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   ARCH=sm_90 (the -arch of the default build), KEEP=DIR (build there and keep it)
set -uo pipefail
src=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${ARCH:-sm_90}
if [ ! -x "$nvcc" ]; then echo "run_kernels_on_gpu.sh: no nvcc (set NVCC)" >&2; exit 2; fi
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(vector_add reduction matmul histogram streams pool_ipc_kernel managed
  device_printf device_assert illegal_address dynamic_shared device_calls grid_sync device_malloc graphs arrays
  textures)
# The CMake build's -gencode set (tests/nvcc/CMakeLists.txt, _gencode).
gencode=(-gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75
  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100)
# A run on cuda-shim by mistake (its libcuda.so.1 first on the path) is not a GPU run.
unset NVCC_TEST_EXPECT_SHIM CUDA_SHIM_KERNELS
echo "nvcc: $("$nvcc" --version | tail -n 1); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
failed=0
for p in "${programs[@]}"; do
  for build in default gencode shared; do
    case $build in
      default) flags=(-arch="$arch"); link=() ;;
      gencode) flags=("${gencode[@]}"); link=() ;;
      shared) flags=(-arch="$arch"); link=(-cudart shared) ;;
    esac
    exe=$out/${p}_$build
    log=$out/${p}_$build.log
    if ! "$nvcc" -std=c++17 -I"$src" "${flags[@]}" "${link[@]}" "$src/$p.cu" -o "$exe" >"$log" 2>&1; then
      printf 'FAIL  %-16s %-8s (nvcc failed)\n' "$p" "$build"
      sed 's/^/    | /' "$log"
      failed=$((failed + 1))
      continue
    fi
    timeout 300 "$exe" >"$log" 2>&1
    rc=$?
    last=$(grep -v '^$' "$log" | tail -n 1)
    if [ $rc -eq 0 ] && grep -q "PASS" <<<"$last" && grep -q "libcuda NVIDIA" <<<"$last"; then
      printf 'PASS  %-16s %-8s (%s)\n' "$p" "$build" "$last"
    else
      printf 'FAIL  %-16s %-8s (exit %d; %s)\n' "$p" "$build" $rc "$last"
      sed 's/^/    | /' "$log"
      failed=$((failed + 1))
    fi
  done
done
echo "run_kernels_on_gpu.sh: $failed failed"
[ $failed -eq 0 ]
