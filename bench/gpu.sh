#!/usr/bin/env bash
# On a GPU machine: the same benchmark binaries on NVIDIA's driver and runtime, then on ours;
# Google Benchmark JSON into OUT (bench/report.py render OUT turns it into docs/performance.md).
#   bench/gpu.sh PACK OUT [report.py collect flags...]     (PACK from bench/pack.sh)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
pack=$(cd "${1:?usage: bench/gpu.sh PACK OUT}" && pwd -P)
out=${2:?usage: bench/gpu.sh PACK OUT}
shift 2
ulimit -n "$(ulimit -Hn)" 2> /dev/null || true
CUDA_SHIM_BENCH_DEPS=$pack/deps python3 "$root/bench/report.py" collect "$out" --build "$pack" --real yes "$@"
