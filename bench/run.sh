#!/usr/bin/env bash
# Runs the benchmark suite in well under a minute.
#   bench/run.sh [BUILD_DIR] [extra Google Benchmark flags...]
# e.g. bench/run.sh build --benchmark_filter=Memcpy --benchmark_format=json
# Read "speedup": the real driver's time / ours (bandwidth: ours / the real driver's);
# the real figures are /work/shared/REAL_DRIVER.md's, compiled into bench_core.cpp.
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
build=${1:-$root/build}
[[ $# -gt 0 ]] && shift
for b in bench_core bench_pool bench_ipc; do
  if [[ ! -x $build/bin/$b ]]; then
    echo "run.sh: $build/bin/$b not found; build it with: cmake --build $build -j2 --target $b" >&2
    exit 2
  fi
done

# Tracing or explaining every call would measure the printing, not the driver.
unset CUDA_SHIM_TRACE CUDA_SHIM_EXPLAIN

# Fresh-process benchmarks run a fixed 20 iterations each; the rest 0.3 s each.
for b in bench_core bench_pool bench_ipc; do
  "$build/bin/cuda-shim" run -- "$build/bin/$b" --benchmark_min_time=0.3 --benchmark_counters_tabular=false "$@"
done
