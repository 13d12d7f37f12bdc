#!/usr/bin/env bash
# The differential test on a GPU machine, in one command (docs/difftest.md):
#   tools/difftest/gpu.sh OUT_DIR [COUNT] [EMU_LIB_DIR]
# Builds the runner (one g++ line, NVIDIA's headers) and, unless EMU_LIB_DIR holds a build of
# ours (libcuda.so.1, libcudart.so.13), the emulator; generates COUNT sequences plus the
# questions; runs each on NVIDIA's driver and on the emulator; minimizes every divergence and
# writes OUT_DIR/{report.txt,divergences.txt,questions.txt,gpu.txt,cases/*.case}.
# Environment: DIFFTEST_SEED (1), DIFFTEST_BAD (0.1: the rate of wrong arguments),
# DIFFTEST_KNOWN (a report.txt whose groups are not minimized again), DIFFTEST_JOBS (nproc),
# DIFFTEST_BATCH_S (230) and
# DIFFTEST_MIN_S (200) bound the two phases; DIFFTEST_DEPS, a folder of libraries our build
# needs that the machine lacks; DIFFTEST_A (system: NVIDIA's driver) and
# DIFFTEST_CUDA_INCLUDE, to rehearse it without a GPU.
set -uo pipefail
out=${1:?usage: gpu.sh OUT_DIR [COUNT] [EMU_LIB_DIR]}
count=${2:-2000}
emu=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${NVIDIA_CUDA_ROOT:-/usr/local/cuda}
jobs=${DIFFTEST_JOBS:-$(nproc)}
work=$(mktemp -d /tmp/difftest-gpu.XXXXXX)
mkdir -p "$out"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 > "$out/gpu.txt"
else
  echo "no GPU (rehearsal)" > "$out/gpu.txt"
fi
label="$(cat "$out/gpu.txt"), CUDA 13.0"
if [[ -z $emu ]]; then
  cmake -S "$root" -B "$work/emu" -DCUDA_SHIM_TESTS=OFF -DCUDA_SHIM_BENCH=OFF > "$out/build.log" 2>&1 &&
    cmake --build "$work/emu" -j"$jobs" --target cuda cudart >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 2; }
  emu=$work/emu/lib
fi
emu=$(cd "$emu" && pwd)
g++ -std=c++20 -O1 -I"${DIFFTEST_CUDA_INCLUDE:-$cuda/include}" "$root/tools/difftest/difftest.cpp" \
  -o "$work/difftest" -ldl -lpthread || exit 3
# NVIDIA's runtime for the cuda* ops on the real side; never our folder (it holds a libcuda.so.1).
export LD_LIBRARY_PATH=$cuda/lib64${DIFFTEST_DEPS:+:$DIFFTEST_DEPS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$work/difftest" gen --seed "${DIFFTEST_SEED:-1}" --count "$count" --bad "${DIFFTEST_BAD:-0.1}" --questions 1 --probes 1 \
  "$work/seqs" || exit 4
"$work/difftest" diff --a "${DIFFTEST_A:-system}" --b "$emu" --jobs "$jobs" --label "$label" ${DIFFTEST_KNOWN:+--known "$DIFFTEST_KNOWN"} \
  --batch-seconds "${DIFFTEST_BATCH_S:-230}" --minimize-seconds "${DIFFTEST_MIN_S:-200}" "$work/seqs" "$out"
rc=$?
rm -rf "$work"
exit $rc
