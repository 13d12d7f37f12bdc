#!/usr/bin/env bash
# Remakes cuda_core_driver_entries.txt: the driver entry points cuda.core (and our tests'
# cuda.bindings calls) make while the Python suites run on the emulator, found with
# CUDA_SHIM_TRACE, as base names (cuStreamDestroy_v2 -> cuStreamDestroy) that
# cuda.bindings.driver knows. Usage: record_cuda_core_entries.sh BUILD_DIR PYTHON
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
build=$1 py=$2
cd "$here/.."
trace=$(mktemp)
CUDA_SHIM_TRACE=1 PYTHONDONTWRITEBYTECODE=1 "$build/bin/cuda-shim" run -- "$py" -m pytest -q -s \
  --deselect test_bindings_driver.py . 2>"$trace" >/dev/null || true
grep -oE '^cuda-shim: #[0-9]+ cu[A-Za-z0-9_]+' "$trace" | sed -E 's/^cuda-shim: #[0-9]+ //; s/(_v[0-9]+)?(_ptsz|_ptds)?$//' | sort -u |
  "$py" -c '
import sys
from cuda.bindings import driver
names = [n.strip() for n in sys.stdin if n.strip()]
skip = {"cuGetProcAddress", "cuGetExportTable"}  # how entries are found (ours: libcudart asks for its table)
print("\n".join(n for n in names if hasattr(driver, n) and n not in skip))
' > "$here/cuda_core_driver_entries.txt"
rm -f "$trace"
wc -l "$here/cuda_core_driver_entries.txt"
