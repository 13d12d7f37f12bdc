#!/usr/bin/env bash
# Build and run the conformance tests against NVIDIA's real driver (no Boost, no fmt
# needed). Used on a lent GPU machine: Catch2's single header travels in .gpu/.
# Usage: .ci/real-gpu.sh [OUT_DIR]   -> OUT_DIR/conf.txt (every binary's compact report)
# The pool and multi-device tests see every GPU (they have sections for a second device);
# the others expect one (CUDA_VISIBLE_DEVICES=0).
set -uo pipefail
out=${1:-/tmp/real-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
nvidia-smi -L > "$out/conf.txt" 2>&1
cmake -S "$root" -B /tmp/build-real -DCUDA_SHIM_BACKEND=real -DCATCH2_SINGLE_HEADER_DIR="$root/.gpu" \
  -DCUDA_SHIM_BENCH=OFF > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 2; }
cmake --build /tmp/build-real -j16 >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 3; }
rc=0
for t in /tmp/build-real/bin/conf_*; do
  n=$(basename "$t")
  if [[ $n == conf_test_mempool_* || $n == conf_test_multidevice* ]]; then vis=${ALL_GPUS:-$(seq -s, 0 $(( $(nvidia-smi -L | wc -l) - 1 )))}; else vis=0; fi
  echo "=== $n (CUDA_VISIBLE_DEVICES=$vis)" >> "$out/conf.txt"
  CUDA_VISIBLE_DEVICES=$vis timeout 150 "$t" -r compact >> "$out/conf.txt" 2>&1
  r=$?
  echo "--- $n rc=$r" >> "$out/conf.txt"
  [[ $r -ne 0 ]] && rc=1
done
grep -E "^--- |Passed all|test cases" "$out/conf.txt"
exit "$rc"
