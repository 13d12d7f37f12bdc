#!/bin/sh
# Checks the cuda-shim launcher (options become the documented environment, the child's
# exit status comes back unchanged, mistakes are refused) and cuda-shim-info's listing.
# Usage: test_tools.sh BUILD_BIN_DIR VERSION [SANITIZER]
set -u

bin=$1
version=$2
sanitized=${3:-}
shim=$bin/cuda-shim
libdir=$(CDPATH='' cd -- "$bin/../lib" && pwd -P)
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # check DESCRIPTION EXPECTED_STATUS COMMAND...
  what=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" != "$want" ]; then
    printf 'FAIL: %s: exit %s, want %s\n' "$what" "$got" "$want"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  else
    printf 'ok:   %s\n' "$what"
  fi
}

check "child's exit status comes back" 7 "$shim" run -- sh -c 'exit 7'
check "command without --" 0 "$shim" run true
check "signal status comes back" 143 "$shim" run -- sh -c 'kill -TERM $$'

check "options become the environment" 0 "$shim" run --explain --trace --devices 3 \
  --driver-version 13.3 -- sh -c '
    test "$CUDA_SHIM_EXPLAIN" = 1 && test "$CUDA_SHIM_TRACE" = 1 &&
    test "$CUDA_SHIM_DEVICES" = 3 && test "$CUDA_SHIM_DRIVER_VERSION" = 13030 &&
    test -z "${LD_PRELOAD:-}"'
check "--opt=value spelling, numeric driver version" 0 "$shim" run --devices=2 \
  --driver-version=13000 -- sh -c 'test "$CUDA_SHIM_DEVICES" = 2 && test "$CUDA_SHIM_DRIVER_VERSION" = 13000'
check "LD_LIBRARY_PATH starts with the library dir" 0 env LD_LIBRARY_PATH=/old "$shim" run -- \
  sh -c "test \"\$LD_LIBRARY_PATH\" = '$libdir:/old'"

printf 'devices = 2\n' >"$tmp/shim.conf"
check "--config exports an absolute path" 0 sh -c "cd '$tmp' && '$shim' run --config shim.conf -- \
  sh -c 'test \"\$CUDA_SHIM_CONFIG\" = \"\$(pwd -P)/shim.conf\"'"

ln -s "$shim" "$tmp/cuda-shim-link"
check "works through a symlink" 0 "$tmp/cuda-shim-link" run -- sh -c \
  "test \"\${LD_LIBRARY_PATH%%:*}\" = '$libdir'"

# Preloading our (possibly sanitizer-instrumented) libcuda into sh is only safe unsanitized.
if [ -z "$sanitized" ]; then
  check "--preload sets LD_PRELOAD to our libraries" 0 "$shim" run --preload -- sh -c \
    "test \"\$LD_PRELOAD\" = '$libdir/libcuda.so.1:$libdir/libcudart.so.13:$libdir/libnvidia-ml.so.1:$libdir/libnvJitLink.so.13'"
fi

check "unknown option refused" 2 "$shim" run --no-such-option -- true
check "no command refused" 2 "$shim" run --explain
check "bad --devices refused" 2 "$shim" run --devices two -- true
check "bad --driver-version refused" 2 "$shim" run --driver-version 13.x -- true
check "missing --config file refused" 2 "$shim" run --config "$tmp/nope" -- true
check "unknown subcommand refused" 2 "$shim" frobnicate
check "--help" 0 "$shim" --help
check "--version" 0 sh -c "'$shim' --version | grep -qx 'cuda-shim $version'"
check "missing libraries reported" 2 env CUDA_SHIM_LIBDIR="$tmp" "$shim" run -- true

# cuda-shim-info through the launcher: exit status 0 and the nvidia-smi shapes.
uuid='GPU-[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}'
check "info -L lists two devices with UUIDs" 0 sh -c "'$shim' info --devices 2 -L >'$tmp/list' &&
  test \$(wc -l <'$tmp/list') = 2 &&
  grep -q '^GPU 0: .* (UUID: $uuid)\$' '$tmp/list' && grep -q '^GPU 1: .* (UUID: $uuid)\$' '$tmp/list' &&
  test \$(cut -d'(' -f2 '$tmp/list' | sort -u | wc -l) = 2"
check "info summary" 0 sh -c "'$shim' info --driver-version 13.0 >'$tmp/info' &&
  grep -q '^Driver Version: 13.0 (cuDriverGetVersion 13000)' '$tmp/info' &&
  grep -q '^GPU 0: .* (UUID: $uuid)\$' '$tmp/info' &&
  grep -q '^  Total memory: *[1-9][0-9]* MiB' '$tmp/info' &&
  grep -q '^  Memory used: *[0-9][0-9]* MiB of [1-9][0-9]* MiB (every process)' '$tmp/info' &&
  grep -q '^  Processes: *[0-9]' '$tmp/info' &&
  grep -q '^  PCI bus id: *[0-9a-fA-F]\{4,8\}:[0-9a-fA-F]\{2\}:[0-9a-fA-F]\{2\}\.[0-7]\$' '$tmp/info'"
check "info takes its options in any order" 0 sh -c "'$shim' info -L --devices 3 >'$tmp/list3' &&
  test \$(wc -l <'$tmp/list3') = 3"
check "info: option without its value refused" 2 "$shim" info -L --devices
check "info: unknown option reaches cuda-shim-info and is refused" 2 "$shim" info -L --bogus
check "out-of-range device count names the valid range" 0 sh -c "CUDA_SHIM_DEVICES=577 '$shim' info -L 2>'$tmp/err' >/dev/null;
  grep -q \"CUDA_SHIM_DEVICES: devices = '577' is not a device count: 0 to 576 are valid (keeping 1)\" '$tmp/err'"
# NVL72-class machines and the largest NVLink domains: every device listed, each at its own PCI address.
for n in 72 576; do
  check "$n devices, each with its own PCI bus id and UUID" 0 sh -c "'$shim' info --devices $n >'$tmp/many' 2>&1 &&
    test \$(grep -c '^GPU [0-9]*: ' '$tmp/many') = $n &&
    test \$(grep '^  PCI bus id:' '$tmp/many' | sort -u | wc -l) = $n &&
    test \$(grep -o 'UUID: GPU-[0-9a-f-]*' '$tmp/many' | sort -u | wc -l) = $n &&
    ! grep '^  PCI bus id:' '$tmp/many' | grep -qv ':[01][0-9a-f]\\.0\$'"
done
check "bad driver version names the valid form" 0 sh -c "CUDA_SHIM_DRIVER_VERSION=13.x '$shim' info -L 2>'$tmp/err' >/dev/null;
  grep -q \"CUDA_SHIM_DRIVER_VERSION: driver_version = '13.x' is not a driver version\" '$tmp/err'"
# The demo through a pipe: the explanation of its deliberate error comes right before the line
# that reports that error, and a trace starts with the program's own first call.
check "demo's explanation in order through a pipe" 0 sh -c "'$shim' run --explain -- '$bin/cuda-shim-demo' 2>&1 |
  grep -B1 '^deliberate error:' | head -1 | grep -q '^cuda-shim: cudaMemcpy -> cudaErrorInvalidMemcpyDirection'"
check "trace shows no call of the emulator to itself" 0 sh -c "'$shim' run --trace -- '$bin/cuda-shim-demo' 2>&1 >/dev/null |
  head -1 | grep -q '^cuda-shim: #1 cudaGetDeviceCount -> success | \*count=1 | '"
check "--trace=FILE writes a fresh timeline" 0 sh -c "echo stale >'$tmp/t.json' &&
  '$shim' run --trace='$tmp/t.json' -- '$bin/cuda-shim-demo' >/dev/null 2>&1;
  head -1 '$tmp/t.json' | grep -qx '\[' && grep -q '\"name\":\"cudaGetDeviceCount\"' '$tmp/t.json'"
check "info reports a newer driver version" 0 sh -c "'$shim' info --driver-version 13030 |
  grep -q '^Driver Version: 13.3 (cuDriverGetVersion 13030)'"

# The registry views, on a registry of their own.
check "endpoints on an empty fabric" 0 sh -c "CUDA_SHIM_REGISTRY=cuda-shim-tools-\$\$ '$shim' endpoints |
  grep -qx 'no logical endpoints'"
check "ipc names its segment" 0 sh -c "CUDA_SHIM_REGISTRY=cuda-shim-tools-\$\$ '$shim' ipc |
  grep -q '^registry /dev/shm/cuda-shim-tools-'"

# gc: a segment other users could have written, planted under a name of the tools test's own
# and older than a minute (younger ones may be a registry being made), is reported and removed.
check "gc reports and removes a segment open to others" 0 sh -c "f=/dev/shm/cuda-shim-tools-gc-\$\$ &&
  printf x >\$f && chmod 644 \$f && touch -d '2 minutes ago' \$f && '$shim' gc >'$tmp/gc' &&
  grep -q \"^\$f: mode 644, not 0600: .*; removed\\\$\" '$tmp/gc' && test ! -e \$f"

[ "$failures" = 0 ] || { printf '%s launcher check(s) failed\n' "$failures"; exit 1; }
