#!/usr/bin/env bash
# The differential kernel tester's GPU side, in one command (docs/difftest.md, Kernels):
#
#   tools/difftest/kernel_record.sh record OUT_DIR [COUNT]
#       on a GPU machine: builds the runner against NVIDIA's headers (one g++ line), generates
#       COUNT cases a family (default 50) from fixed seeds plus the hand-written kernels, runs
#       each twice on NVIDIA's driver and writes OUT_DIR/{recorded.tar.gz,report.txt,gpu.txt}
#       (the tar holds recorded/<family>.kcase: the cases with NVIDIA's bytes as expect).
#   tools/difftest/kernel_record.sh diff RECORDED [EMU_LIB_DIR]
#       anywhere: replays a recording (recorded.tar.gz or its folder) on the emulator and prints
#       the per-family divergence counts (EMU_LIB_DIR: build/lib by default).
#   tools/difftest/kernel_record.sh minimize OUT_DIR [COUNT] [EMU_LIB_DIR]
#       on a GPU machine, once kernels run on the emulator: runs the cases on both drivers,
#       prints the per-family counts and minimizes up to KDIFF_MINIMIZE (3) diverging cases a
#       family into OUT_DIR/kept.tar.gz (review them, then add them to tests/difftest/kernels).
#
# Environment: KDIFF_SEED (1), KDIFF_FAMILIES (all; comma-separated, see kgen.py), KDIFF_EXCLUDE
# (instruction texts to leave out, comma-separated, e.g. the ones the engine refuses), KDIFF_JOBS
# (nproc), KDIFF_MIN_S (300: the minimizer's time), NVIDIA_CUDA_ROOT (/usr/local/cuda); to rehearse
# without a GPU, KDIFF_LIB (system: NVIDIA's driver) names another driver's folder, e.g. build/lib
# with CUDA_SHIM_KERNELS=skip, and KDIFF_RUNNER a difftest binary already built.
# Needs python3 (the GPU image has it) for the generator, g++ and, for `minimize` without
# EMU_LIB_DIR, CMake to build the emulator.
set -uo pipefail
mode=${1:?usage: kernel_record.sh record|diff|minimize ...}
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${NVIDIA_CUDA_ROOT:-/usr/local/cuda}
jobs=${KDIFF_JOBS:-$(nproc)}
seed=${KDIFF_SEED:-1}
fams=${KDIFF_FAMILIES:-all}
work=$(mktemp -d /tmp/kdiff.XXXXXX)
trap 'rm -rf "$work"' EXIT

build_runner() {  # $1: include dir of a cuda.h
  if [[ -n ${KDIFF_RUNNER:-} ]]; then cp "$KDIFF_RUNNER" "$work/difftest"; return; fi
  g++ -std=c++20 -O1 -I"$1" "$root/tools/difftest/difftest.cpp" -o "$work/difftest" -ldl -lpthread > "$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; exit 3; }
}
generate() {  # $1: cases per family
  python3 "$root/tools/difftest/kgen.py" gen --families "$fams" --count "$1" --seed "$seed" --exclude "${KDIFF_EXCLUDE:-}" "$work/cases" &&
    python3 "$root/tools/difftest/kgen.py" hand "$work/cases" || exit 4
  "$work/difftest" kernel check "$work/cases" > "$work/check.txt" || { tail -5 "$work/check.txt"; exit 4; }
}
label() {
  local g
  g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
  echo "${g:-no GPU}, CUDA toolkit $(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h")"
}

case $mode in
record)
  out=${2:?usage: kernel_record.sh record OUT_DIR [COUNT]}
  count=${3:-50}
  mkdir -p "$out"
  build_runner "$cuda/include"
  generate "$count"
  label > "$out/gpu.txt"
  "$work/difftest" kernel record --lib "${KDIFF_LIB:-system}" --label "$(cat "$out/gpu.txt")" --jobs "$jobs" --repeat 2 \
    --out "$work/recorded" "$work/cases" | tee "$out/report.txt"
  echo "seed $seed, $count cases a family, families $fams" >> "$out/report.txt"
  tar czf "$out/recorded.tar.gz" -C "$work" recorded
  ls -la "$out"
  ;;
diff)
  rec=${2:?usage: kernel_record.sh diff RECORDED [EMU_LIB_DIR]}
  emu=${3:-$root/build/lib}
  [[ -z ${KDIFF_RUNNER:-} && -x $root/build/bin/difftest ]] && KDIFF_RUNNER=$root/build/bin/difftest
  build_runner "$root/include/cuda_shim"
  if [[ -f $rec ]]; then tar xzf "$rec" -C "$work" && rec=$work/recorded; fi
  "$work/difftest" kernel replay --lib "$emu" --jobs "$jobs" ${KDIFF_FAMILIES:+--family "$KDIFF_FAMILIES"} "$rec"
  exit $?
  ;;
minimize)
  out=${2:?usage: kernel_record.sh minimize OUT_DIR [COUNT] [EMU_LIB_DIR]}
  count=${3:-50}
  emu=${4:-}
  mkdir -p "$out"
  if [[ -z $emu ]]; then
    cmake -S "$root" -B "$work/emu" -DCUDA_SHIM_TESTS=OFF -DCUDA_SHIM_BENCH=OFF > "$out/build.log" 2>&1 &&
      cmake --build "$work/emu" -j"$jobs" --target cuda >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 2; }
    emu=$work/emu/lib
  fi
  emu=$(cd "$emu" && pwd)
  build_runner "$cuda/include"
  generate "$count"
  "$work/difftest" kernel diff --a "${KDIFF_LIB:-system}" --b "$emu" --label "$(label)" --jobs "$jobs" --minimize "${KDIFF_MINIMIZE:-3}" \
    --minimize-seconds "${KDIFF_MIN_S:-300}" --out "$work/diff" "$work/cases" | tee "$out/report.txt"
  cp "$work/diff/divergences.txt" "$out/"
  tar czf "$out/kept.tar.gz" -C "$work/diff" kept
  ;;
*)
  echo "kernel_record.sh: record|diff|minimize" >&2
  exit 2
  ;;
esac
