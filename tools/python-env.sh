#!/usr/bin/env bash
# Makes a Python virtual environment with the real clients the Python tests drive:
# cuda-core, cuda-bindings, pytest and numpy from PyPI, at the versions in
# tests/python/requirements.txt. Needs python3-venv (Debian). CMake finds .venv by itself.
# Usage: tools/python-env.sh [VENV_DIR]   (default: .venv in the repository root)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$root/.venv}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  -r "$root/tests/python/requirements.txt"
"$venv/bin/python" -c "import cuda.core, cuda.bindings; print('python env ready:', '$venv', 'cuda.core', cuda.core.__version__)"
