#!/usr/bin/env bash
# One fuzz.* test: fuzzes a libFuzzer target for SECONDS, starting from the
# committed seeds (which it never writes into) and what earlier runs found
# in WORK/corpus. The whole log stays in WORK/fuzz.log; this prints a
# summary, or on a crash the report and how to reproduce it.
#   run_fuzzer.sh FUZZER SECONDS SEED_CORPUS WORK DICT
set -euo pipefail
fuzzer=$1 seconds=$2 seeds=$3 work=$4 dict=$5
rm -rf "$work/artifacts" # this run's findings only
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/fuzz.log
# the targets' scratch files (fuzz_baseline_reader's round trip): in memory, gone after the run
TMPDIR=$(mktemp -d -p "$([ -w /dev/shm ] && echo /dev/shm || echo "$work")" fuzz.XXXXXX)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
rc=0
# -timeout: an input slower than 25 s is a hang; -rss_limit_mb: libFuzzer's default, said
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -dict="$dict" -timeout=25 -rss_limit_mb=2048 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" > "$log" 2>&1 || rc=$?
# libFuzzer exits 77 on a finding, the skip code of these tests: any finding is exit 1 here
if [ $rc -ne 0 ]; then
  tail -n 40 "$log"
  echo "FAIL: $(basename "$fuzzer") exited $rc (log: $log)"
  for a in "$work"/artifacts/*; do
    [ -e "$a" ] || continue
    echo "reproduce: $fuzzer $a"
    seed=$(for s in "$seeds"/*; do if cmp -s "$a" "$s"; then echo "$s"; fi; done)
    if [ -n "$seed" ]; then
      echo "the input is the committed seed $seed: that finding is still open"
    else
      echo "after the fix, keep the input as a regression seed: cp $a $seeds/ (docs/fuzzing.md)"
    fi
  done
  exit 1
fi
# stat::number_of_executed_units, stat::average_exec_per_sec, ... and the last status line
grep -a '^stat::' "$log" | tr '\n' ' '
echo
grep -a -E '^#[0-9]+' "$log" | tail -n 1
echo "PASS: $(basename "$fuzzer"): ${seconds} s without a finding; corpus $(ls "$work/corpus" | wc -l) inputs in $work/corpus"
