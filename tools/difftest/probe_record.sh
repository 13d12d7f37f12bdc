#!/usr/bin/env bash
# Records NVIDIA's answers to every probe case on a GPU machine (docs/probe.md), in one command:
#   tools/difftest/probe_record.sh OUT_DIR      -> OUT_DIR/nvidia.jsonl (+ build.log)
# PROBE_SECONDS bounds the run: cases not started by then are left, and the same command on the
# same OUT_DIR (its nvidia.jsonl.parts/ kept) does only those (exit 3 until every case is done).
# Builds difftest against NVIDIA's headers (a -DCUDA_SHIM_BACKEND=real CMake build) and runs the
# cases of tests/probe/cases on the system's libcuda.so.1, one process each, PROBE_JOBS (nproc)
# at a time. The header line names the GPU, the driver and the CUDA version it reports. Copy the
# file to tests/probe/recorded/nvidia.jsonl to make it what the emulator and the tests are held to.
set -uo pipefail
out=${1:?usage: probe_record.sh OUT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/probe-record.XXXXXX)
mkdir -p "$out"
cmake -S "$root" -B "$work" -DCUDA_SHIM_BACKEND=real -DCUDA_SHIM_TESTS=OFF -DCUDA_SHIM_BENCH=OFF > "$out/build.log" 2>&1 &&
  cmake --build "$work" -j"$(nproc)" --target difftest >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 2; }
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
label="${gpu:-no GPU}, ${ngpu} GPU(s), CUDA toolkit $(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "${NVIDIA_CUDA_ROOT:-/usr/local/cuda}/include/cuda.h")"
"$work/bin/difftest" probe --lib system --jobs "${PROBE_JOBS:-$(nproc)}" --label "$label" \
  --out "$out/nvidia.jsonl" --resume --seconds "${PROBE_SECONDS:-1000000}" --timeout "${PROBE_TIMEOUT:-30}" \
  "$root/tests/probe/cases"
rc=$?
rm -rf "$work"
exit $rc
