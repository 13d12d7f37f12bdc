#!/bin/sh
# Does our libcudart.so.13 export everything nvcc-built code asks of the runtime?
#
#   symbol_coverage.sh LIBCUDART OBJECT...
#       the objects' undefined cuda* and __cuda* symbols (those no other object given defines:
#       nvcc -dlink's __cudaRegisterLinkedBinary_* are the objects' own) must each appear in
#       `nm -D LIBCUDART` as NAME@@libcudart.so.13.
#   symbol_coverage.sh --compile NVCC LIBCUDART SOURCE...
#       by hand, for any nvcc: compiles each SOURCE (-arch=sm_90) as is, with
#       --default-stream per-thread, and with -rdc=true plus one nvcc -dlink over the -rdc objects,
#       then checks as above.
# Prints the symbols referenced (the __cuda* ones on their own line) and any missing; exits 1
# when one is missing.
set -eu

if [ "${1:-}" = "--compile" ]; then
  [ $# -ge 4 ] || { echo "usage: $0 --compile NVCC LIBCUDART SOURCE..." >&2; exit 2; }
  nvcc=$2 lib=$3
  shift 3
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$nvcc" --version | tail -n 1
  objs="" rdc=""
  for src in "$@"; do
    base=$(basename "$src" .cu)
    "$nvcc" -std=c++17 -arch=sm_90 -I"$(dirname "$src")" -c "$src" -o "$tmp/$base.o"
    "$nvcc" -std=c++17 -arch=sm_90 -I"$(dirname "$src")" --default-stream per-thread -c "$src" -o "$tmp/$base.ptsz.o"
    "$nvcc" -std=c++17 -arch=sm_90 -I"$(dirname "$src")" -rdc=true -c "$src" -o "$tmp/$base.rdc.o"
    objs="$objs $tmp/$base.o $tmp/$base.ptsz.o"
    rdc="$rdc $tmp/$base.rdc.o"
  done
  # shellcheck disable=SC2086
  "$nvcc" -arch=sm_90 -dlink $rdc -o "$tmp/dlink.o"
  # shellcheck disable=SC2086
  exec sh "$0" "$lib" $objs $rdc "$tmp/dlink.o"
fi

[ $# -ge 2 ] || { echo "usage: $0 LIBCUDART OBJECT..." >&2; exit 2; }
lib=$1
shift
for o in "$@"; do
  [ -f "$o" ] || { echo "symbol_coverage: no such object: $o" >&2; exit 2; }
done

undefined=$(nm -u "$@" | awk 'NF == 2 && $1 == "U" { print $2 }' | grep -E '^(__)?cuda' | sort -u)
defined=$(nm --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u)
wanted=$(printf '%s\n' "$undefined" | grep -vxF -e "$defined" -e '' || true)
exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | grep '@@libcudart\.so\.13$' | sed 's/@@.*//' | sort -u)

missing=""
for s in $wanted; do
  printf '%s\n' "$exported" | grep -qxF "$s" || missing="$missing $s"
done

echo "referenced __cuda*:" $(printf '%s\n' "$wanted" | grep '^__cuda' || true)
echo "referenced cuda*:" $(printf '%s\n' "$wanted" | grep '^cuda' || true)
if [ -n "$missing" ]; then
  echo "symbol_coverage: FAIL: not exported by $lib as NAME@@libcudart.so.13:$missing" >&2
  exit 1
fi
echo "symbol_coverage: PASS ($(printf '%s\n' "$wanted" | grep -c .) symbols, all exported as NAME@@libcudart.so.13)"
