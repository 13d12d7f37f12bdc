#!/bin/sh
# run_fuzz.sh FUZZER CORPUS_DIR WORK_DIR corpus|bounded
#   corpus:  runs every kept input once (regressions).
#   bounded: fuzzes for CUDA_SHIM_FUZZ_SECONDS (default 60) from the kept corpus; new inputs go
#            to WORK_DIR/new (the repository's corpus is never written), crashes to
#            WORK_DIR/artifacts. Prints libFuzzer's final statistics (executions reached).
set -eu
fuzzer=$1 corpus=$2 work=$3 mode=$4
# The emulator keeps process-wide singletons on purpose; they stay reachable, so leak checks
# stay on. Each input's own leaks are what the harness checks.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
mkdir -p "$work/artifacts"
case $mode in
  corpus)
    set -- "$corpus"/*
    [ -e "$1" ] || { echo "no corpus in $corpus" >&2; exit 1; }
    exec "$fuzzer" -artifact_prefix="$work/artifacts/" "$@" ;;
  bounded)
    rm -rf "$work/new"; mkdir -p "$work/new"
    # -len_control=0: programs of full length from the start (a short session never grows them).
    exec "$fuzzer" -max_total_time="${CUDA_SHIM_FUZZ_SECONDS:-60}" -max_len=1024 -len_control=0 -timeout=30 \
      -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
      "$work/new" "$corpus" ;;
  *) echo "mode must be corpus or bounded" >&2; exit 2 ;;
esac
