#!/bin/sh
# Runs "$@" (dropin_memory, maybe through the launcher). Passes when it exits 0 AND its summary
# says that it and its child processes ran on cuda-shim: ctest's PASS_REGULAR_EXPRESSION alone
# would ignore the exit status, so a crash after the summary would pass.
out=$("$@")
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit "$rc"
printf '%s\n' "$out" | grep -q 'dropin_memory: PASS (libcuda cuda-shim, child processes cuda-shim;' && exit 0
echo "expect_on_shim.sh: the summary does not say that both processes ran on cuda-shim" >&2
exit 1
