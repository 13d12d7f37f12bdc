#!/usr/bin/env bash
# Runs every benchmark binary on cuda-shim and prints Google Benchmark's tables.
#   bench/run.sh [BUILD_DIR] [extra Google Benchmark flags...]
# e.g. bench/run.sh build --benchmark_filter=Memcpy
# For the comparison with NVIDIA's driver and the checked-in figures: bench/report.py
# (docs/benchmarks.md).
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
build=${1:-$root/build}
[[ $# -gt 0 ]] && shift
shopt -s nullglob
benches=("$build"/bin/bench_*)
if [[ ${#benches[@]} -eq 0 ]]; then
  echo "run.sh: no bench_* in $build/bin; build them with: cmake --build $build -j2" >&2
  exit 2
fi

# Tracing or explaining every call would measure the printing, not the driver.
unset CUDA_SHIM_TRACE CUDA_SHIM_EXPLAIN

for b in "${benches[@]}"; do
  "$build/bin/cuda-shim" run -- "$b" --benchmark_min_time=0.3 --benchmark_counters_tabular=false "$@"
done
