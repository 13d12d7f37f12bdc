#!/usr/bin/env bash
# Build and run the conformance tests against NVIDIA's real driver (no Boost, no fmt
# needed). Used on a lent GPU machine: Catch2's single header travels in .gpu/.
# Usage: .ci/real-gpu.sh [OUT_DIR]
set -uo pipefail
out=${1:-/tmp/real-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
nvidia-smi -L 2>&1 | tee "$out/gpu.txt"
cmake -S "$root" -B /tmp/build-real -DCUDA_SHIM_BACKEND=real -DCATCH2_SINGLE_HEADER_DIR="$root/.gpu" \
  -DCUDA_SHIM_BENCH=OFF >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 2; }
cmake --build /tmp/build-real -j8 >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 3; }
cd /tmp/build-real && ctest --output-on-failure -j4 2>&1 | tee "$out/ctest.log"
rc=${PIPESTATUS[0]}
# Per-test detail for the record: every assertion, for the closing note.
for t in /tmp/build-real/bin/conf_*; do echo "=== $(basename "$t")"; "$t" -r compact 2>&1 | tail -60; done >"$out/detail.txt" 2>&1
exit "$rc"
