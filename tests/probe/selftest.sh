#!/usr/bin/env bash
# The probe runner checks itself (docs/probe.md): case files with a mistake are refused, a
# recorded answer that differs fails --check and names the op, a `known` case is reported but
# passes, a skipped case passes. Usage: selftest.sh DIFFTEST LIBDIR
set -uo pipefail
dt=$1 lib=$2
t=$(mktemp -d /tmp/probe-selftest.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

printf 'case a.one\n  dev_attr 115 0\ncase a.one\n  dev_attr 115 0\n' > "$t/dup.cases"
out=$("$dt" probe --list "$t/dup.cases" 2>&1); [[ $? == 2 && $out == *"defined twice"* ]] || fail "a duplicate name: $out"
printf '  dev_attr 115 0\n' > "$t/orphan.cases"
out=$("$dt" probe --list "$t/orphan.cases" 2>&1); [[ $? == 2 && $out == *"before the file's first"* ]] || fail "an op outside a case: $out"
printf 'case Bad Name\n  dev_attr 115 0\n' > "$t/name.cases"
out=$("$dt" probe --list "$t/name.cases" 2>&1); [[ $? == 2 && $out == *"case name"* ]] || fail "a bad name: $out"
printf 'case a.empty\n' > "$t/empty.cases"
out=$("$dt" probe --list "$t/empty.cases" 2>&1); [[ $? == 2 && $out == *"has no op"* ]] || fail "an empty case: $out"

mkdir "$t/c"
printf 'case s.attr\n  dev_attr 115 0   # pools supported\ncase s.bad\n  dev_attr 115 99\ncase s.skip\n  need_devices 9999\n  dev_attr 115 0\n' > "$t/c/s.cases"
"$dt" probe --lib "$lib" --out "$t/rec.jsonl" "$t/c" > /dev/null || fail "recording"
grep -q '"probe":"header"' "$t/rec.jsonl" || fail "no header line"
grep -q '{"case":"s.skip","i":0,"op":"need_devices","rc":0,"skip":' "$t/rec.jsonl" || fail "need_devices did not skip: $(cat "$t/rec.jsonl")"
! grep -q '"case":"s.skip","i":1,"op":"dev_attr"' "$t/rec.jsonl" || fail "a skipped case ran on"
"$dt" probe --lib "$lib" --check "$t/rec.jsonl" "$t/c" > "$t/same.txt" || fail "a run against its own recording: $(cat "$t/same.txt")"
# A recorded answer that differs: the check fails and names the case, the op and both records.
sed 's/"case":"s.bad","i":0,"op":"dev_attr","rc":[0-9]*/"case":"s.bad","i":0,"op":"dev_attr","rc":12345/' "$t/rec.jsonl" > "$t/wrong.jsonl"
out=$("$dt" probe --lib "$lib" --check "$t/wrong.jsonl" "$t/c"); [[ $? == 1 && $out == *"FAIL s.bad"* && $out == *"dev_attr 115 99"* && $out == *'"rc":12345'* ]] || fail "a wrong answer passed: $out"
printf 'case s.attr\n  dev_attr 115 0\ncase s.bad\n  known the emulator differs here on purpose (selftest)\n  dev_attr 115 99\n' > "$t/c/s.cases"
out=$("$dt" probe --lib "$lib" --check "$t/wrong.jsonl" "$t/c"); [[ $? == 0 && $out == *"KNOWN s.bad"* ]] || fail "a known case: $out"
# A case the recording lacks is NEW, not a failure.
printf 'case s.new\n  dev_attr 16 0\n' > "$t/c/n.cases"
out=$("$dt" probe --lib "$lib" --check "$t/rec.jsonl" "$t/c"); [[ $? == 0 && $out == *"NEW  s.new"* ]] || fail "an unrecorded case: $out"
echo "probe selftest: ok"
