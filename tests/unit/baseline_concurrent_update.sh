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
declare -A pids
for h in "${sizes[@]}"; do
  "$lstmcheck" baseline update --rnns cpu --seqLength 2 --numLayers 1 --inputSize 2 --hiddenSize "$h" \
    --miniBatch 1 --nloops 5 --allow-dirty --no-progress --baseline-dir "$dir" >"$dir/log.$h" 2>&1 &
  pids[$h]=$!
done
# An update may be refused for the machine's noise alone: on tiny shapes with
# eight updates on a few cores a measurement's run-to-run noise can pass the
# 100% a baseline file holds (BASELINE_LIMITS); the update then exits 3 (not
# here now) naming the noise. That is not the lock's doing: such a run is
# left out of the count; any other failure fails the test.
ok=0 noisy=0
for h in "${sizes[@]}"; do
  rc=0; wait "${pids[$h]}" || rc=$?
  if [ "$rc" = 0 ]; then ok=$((ok + 1))
  elif [ "$rc" = 3 ] && grep -q "run-to-run noise" "$dir/log.$h"; then noisy=$((noisy + 1))
  else cat "$dir/log.$h"; echo "FAIL: the update of hiddenSize $h exited $rc"; exit 1
  fi
done
if [ "$ok" -lt 2 ]; then
  echo "SKIP: $noisy of ${#sizes[@]} updates measured noise beyond what a baseline holds; too few wrote to test the lock"
  exit 77
fi
n=$("$lstmcheck" baseline show --baseline-dir "$dir" --json |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["entries"]))')
echo "${#sizes[@]} concurrent updates ($noisy refused for noise), $n entries in the file"
[ "$n" = "$ok" ] || { echo "FAIL: entries were lost ($ok updates wrote one each)"; exit 1; }
ls "$dir" | grep -q '\.tmp\.' && { echo "FAIL: a temporary file was left"; exit 1; }
exit 0
