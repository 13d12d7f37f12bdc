#!/usr/bin/env bash
# The Python tests (tests/python) and the drop-in program against NVIDIA's real driver, on a
# lent GPU machine: cuda-core / cuda-bindings / cuda-pathfinder wheels for that machine's
# Python travel in .whl/ (tests/python/requirements.txt's versions); pytest and numpy are there.
# Usage: .ci/real-gpu-python.sh [OUT_DIR]  -> OUT_DIR/pytest.txt, OUT_DIR/dropin.txt
set -uo pipefail
out=${1:-/tmp/real-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  "$root"/.whl/*.whl || exit 2
export PYTHONPATH=/tmp/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
rc=0
(cd "$root/tests/python" && python3 -c 'import cuda.core, cuda.bindings; print("cuda.core", cuda.core.__version__, "cuda.bindings", cuda.bindings.__version__)' &&
  timeout 500 python3 -m pytest -q -p no:cacheprovider -rs .) > "$out/pytest.txt" 2>&1 || rc=1
tail -3 "$out/pytest.txt"
g++ -std=c++17 -O1 -o /tmp/dropin_memory "$root/tests/dropin/dropin_memory.cpp" -I/usr/local/cuda/include \
  -L/usr/local/cuda/lib64 -lcudart -lcuda -ldl > "$out/dropin.txt" 2>&1 &&
  timeout 120 /tmp/dropin_memory >> "$out/dropin.txt" 2>&1 || rc=1
tail -1 "$out/dropin.txt"
exit "$rc"
