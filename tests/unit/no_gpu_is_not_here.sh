#!/usr/bin/env bash
# Every command asked for --device cuda on a machine without a GPU says so
# and exits 3 (could not run here), none 4 (an error): check, bench (also
# under --trace, whose GPU trace needs the device), profile (its built-in
# trace), baseline show, update, compare; and list says why once.
# Skipped where a GPU is there, or where CUDA is not built (exit 2, tested
# by unit.cli_cuda_not_built).
#   no_gpu_is_not_here.sh LSTMCHECK WORK_DIR
set -uo pipefail
exe=$1 work=$2
listed=$("$exe" list --device cuda 2>&1)
grep -q "no: no CUDA device" <<<"$listed" || { echo "SKIP: not a CUDA build without a GPU"; exit 77; }
# list gives the probe's reason once, below the table, not on every CUDA row
said=$(grep -c "no CUDA device: " <<<"$listed")
[ "$said" = 1 ] && grep -q "^CUDA in this build: yes; no CUDA device: " <<<"$listed" ||
  { echo "FAIL list: the reason for no CUDA device is said $said times, want once below the table"; echo "$listed" | tail -5; exit 1; }
rm -rf "$work" && mkdir -p "$work"
small=(--device cuda --seqLength 5 --hiddenSize 7 --inputSize 6 --miniBatch 3)
fails=0
expect_3() { # NAME ARGS...
  local name=$1 out rc
  shift
  out=$("$exe" "$@" 2>&1)
  rc=$?
  if [ $rc = 3 ] && grep -q "no CUDA device" <<<"$out"; then
    echo "PASS $name: exit 3"
  else
    echo "FAIL $name: exit $rc (want 3, naming 'no CUDA device'); output:"; echo "$out" | tail -5
    fails=$((fails + 1))
  fi
}
expect_3 check check "${small[@]}"
expect_3 bench bench "${small[@]}" --nloops 2 --warmup 1
expect_3 bench_trace bench "${small[@]}" --nloops 2 --warmup 1 --trace "$work/bench-trace.json"
expect_3 profile profile "${small[@]}" --nloops 2 --sleep-between-seconds 0 --out-dir "$work/profile"
# an external profiler that is there, on a machine without a GPU (a stand-in nsys that must not run)
mkdir -p "$work/bin" && printf '#!/bin/sh\necho "the stand-in nsys ran"; exit 9\n' > "$work/bin/nsys" && chmod +x "$work/bin/nsys"
PATH="$work/bin:$PATH" expect_3 profile_nsys profile "${small[@]}" --tool nsys --out-dir "$work/profile-nsys"
expect_3 baseline_show baseline show "${small[@]}" --baseline-dir "$work/b"
expect_3 baseline_update baseline update "${small[@]}" --allow-dirty --baseline-dir "$work/b"
expect_3 baseline_compare baseline compare "${small[@]}" --baseline-dir "$work/b"
[ $fails = 0 ] && echo "PASS: no GPU is 'not here' for every command" || exit 1
