#!/usr/bin/env bash
# The README's second command: build what changed and run every test, 2 at a time.
#   tools/test.sh [BUILD_DIR] [ctest options...]     e.g. tools/test.sh build -L python
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
build=${1:-$root/build}
[[ $# -gt 0 ]] && shift
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2 "$@"
