#!/usr/bin/env bash
# Several `baseline update` runs at once into one machine's file (different
# shapes): every run's entry is in the file afterwards. Without the lock
# around read-merge-write each run rewrote the file it had read at its start,
# and all but the last writer's entries were lost, every run exiting 0.
#   baseline_concurrent_update.sh LSTMCHECK
set -euo pipefail
lstmcheck=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sizes=(3 4 5 6 7 8 9 10)
for h in "${sizes[@]}"; do
  "$lstmcheck" baseline update --rnns cpu --seqLength 2 --numLayers 1 --inputSize 2 --hiddenSize "$h" \
    --miniBatch 1 --nloops 5 --allow-dirty --no-progress --baseline-dir "$dir" >"$dir/log.$h" 2>&1 &
done
fail=0
for job in $(jobs -p); do wait "$job" || fail=1; done
[ "$fail" = 0 ] || { cat "$dir"/log.*; echo "FAIL: an update exited non-zero"; exit 1; }
n=$("$lstmcheck" baseline show --baseline-dir "$dir" --json |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["entries"]))')
echo "${#sizes[@]} concurrent updates, $n entries in the file"
[ "$n" = "${#sizes[@]}" ] || { echo "FAIL: entries were lost"; exit 1; }
ls "$dir" | grep -q '\.tmp\.' && { echo "FAIL: a temporary file was left"; exit 1; }
exit 0
