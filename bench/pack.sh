#!/usr/bin/env bash
# Packs the built benchmarks for a GPU machine that cannot build them (no Google Benchmark,
# no network): PACK/bin/bench_*, PACK/lib/{libcuda.so.1,libcudart.so.13} (ours, stripped) and
# PACK/deps (libbenchmark). There: bench/gpu.sh PACK OUT runs them on NVIDIA's driver and ours.
#   bench/pack.sh [BUILD_DIR] PACK_DIR
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
if [[ $# -ge 2 ]]; then build=$1; shift; else build=$root/build; fi
pack=${1:?usage: bench/pack.sh [BUILD_DIR] PACK_DIR}
rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib" "$pack/deps"
for f in "$build"/bin/bench_*; do strip -o "$pack/bin/$(basename "$f")" "$f"; done
for l in libcuda.so.1 libcudart.so.13; do strip -o "$pack/lib/$l" "$build/lib/$l"; done
ln -s libcuda.so.1 "$pack/lib/libcuda.so"
# Libraries the benchmarks need beyond libc/libstdc++ (Google Benchmark's shared library).
ldd "$pack/bin/"bench_* | awk '/libbenchmark/ {print $3}' | sort -u | xargs -r -I{} cp -L {} "$pack/deps/"
git -C "$root" rev-parse --short HEAD > "$pack/commit.txt" 2> /dev/null || true
du -sh "$pack"
