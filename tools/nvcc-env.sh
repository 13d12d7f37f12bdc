#!/usr/bin/env bash
# Installs NVIDIA's CUDA compiler from PyPI (nvidia-cuda-nvcc, which brings nvidia-nvvm,
# nvidia-cuda-crt and nvidia-cuda-runtime's headers; and nvidia-cuda-cccl) into its own virtual
# environment, so a machine without a CUDA toolkit can build the nvcc test programs. It is kept apart from
# .venv on purpose: the runtime wheel ships NVIDIA's libcudart.so.13, which cuda.pathfinder
# would find in .venv before ours. CMake finds .nvcc by itself (tests/nvcc).
# Usage: tools/nvcc-env.sh [DIR]   (default: .nvcc in the repository root)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$root/.nvcc}
version=13.5.37
python3 -m venv "$venv"
# nvidia-cuda-cccl: CCCL's headers (cuda/std/...), which cooperative_groups.h includes
# (tests/nvcc/grid_sync.cu); 13.3.5.0.6 is the newest on PyPI, and nvcc finds include/cccl itself.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "nvidia-cuda-nvcc==$version" \
  "nvidia-cuda-cccl==13.3.5.0.6"
nvcc=$(echo "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc)
"$nvcc" --version | tail -n 2
echo "nvcc ready: $nvcc"
