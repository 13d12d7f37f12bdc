#!/bin/sh
# Runs tools/probe/probe_nvml.cpp on NVIDIA's driver and NVML (a GPU machine), or with --emu on
# a cuda-shim build's libcuda.so.1 and libnvidia-ml.so.1, and writes its lines to OUT_FILE:
#   tools/probe/run_nvml_probe.sh OUT_FILE                  # NVIDIA's, against the toolkit
#   tools/probe/run_nvml_probe.sh --emu BUILD_DIR OUT_FILE  # ours; then diff with probe_nvml.h100.txt
# The recorded answers are probe_nvml.<gpu>.txt beside it.
set -eu
here=$(dirname -- "$0")
emu=
if [ "${1:-}" = "--emu" ]; then emu=$(cd "$2" && pwd); shift 2; fi
out=${1:?usage: run_nvml_probe.sh [--emu BUILD_DIR] OUT_FILE}
if [ -z "$emu" ]; then
  cuda=${NVIDIA_CUDA_ROOT:-/usr/local/cuda}
  g++ -std=c++20 -O1 -I"$cuda/include" "$here/probe_nvml.cpp" -o /tmp/probe_nvml -L"$cuda/lib64/stubs" -lcuda -ldl
  { nvidia-smi -L; /tmp/probe_nvml; } >"$out" 2>&1
else
  g++ -std=c++20 -O1 -I"$here/../../include/cuda_shim" "$here/probe_nvml.cpp" -o /tmp/probe_nvml.emu -L"$emu/lib" -lcuda -ldl
  { "$emu/bin/cuda-shim-info" 2>/dev/null | head -3; "$emu/bin/cuda-shim" run -- /tmp/probe_nvml.emu; } >"$out" 2>&1
fi
