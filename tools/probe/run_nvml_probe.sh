#!/bin/sh
# Builds tools/probe/probe_nvml.cpp against NVIDIA's toolkit and runs it on a GPU machine:
#   tools/probe/run_nvml_probe.sh OUT_FILE
set -eu
here=$(dirname -- "$0")
cuda=${NVIDIA_CUDA_ROOT:-/usr/local/cuda}
g++ -std=c++20 -O1 -I"$cuda/include" "$here/probe_nvml.cpp" -o /tmp/probe_nvml -L"$cuda/lib64/stubs" -lcuda -ldl
{ nvidia-smi -L; /tmp/probe_nvml; } >"$1" 2>&1
