#!/usr/bin/env bash
# What is timed is what was checked (docs/perf.md): the lazy plugin computes
# on its first call and returns at once afterwards. It passes the gate; every
# command that times it must call it wrong, keep none of its times, and say
# which timed iteration differed.
#   timed_check.sh LSTMCHECK GOOD_PLUGIN LAZY_PLUGIN WORK_DIR
set -uo pipefail
lstmcheck=$1 good=$2 lazy=$3 dir=$4
shape=(--device cpu --seqLength 4 --hiddenSize 8 --inputSize 5 --miniBatch 2)
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck source=expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

expect check 0 "PASS lazy:lstm" -- "$lstmcheck" check --plugin "$lazy" "${shape[@]}"
expect bench 1 "FAIL lazy:lstm" "(timed iteration" "(its times are discarded)" -- \
  "$lstmcheck" bench --plugin "$lazy" "${shape[@]}" --nloops 5 --warmup 1 --no-progress
expect update 1 "WRONG" "results of its timed calls differ" "refusing to record a baseline for lazy:lstm" -- \
  "$lstmcheck" baseline update --plugin "$lazy" --baseline-dir "$dir/update" --allow-dirty --nloops 5 --no-progress "${shape[@]}"
if ls "$dir"/update/*.json >/dev/null 2>&1 && grep -q 'lazy:lstm' "$dir"/update/*.json; then
  echo "FAIL update: a baseline entry of lazy:lstm was written"
  fails=$((fails + 1))
fi

# compare against an entry recorded by the good plugin under the lazy one's name
# shellcheck source=../unit/record_baseline.sh
source "$(dirname "${BASH_SOURCE[0]}")/../unit/record_baseline.sh"
record_baseline "$dir/update-good.log" "$lstmcheck" baseline update --plugin "$good" --baseline-dir "$dir/base" \
  --allow-dirty --nloops 10 --no-progress "${shape[@]}"
sed -i 's/"good:lstm"/"lazy:lstm"/' "$dir"/base/*.json
expect compare 1 "WRONG" "results of its timed calls differ" -- \
  "$lstmcheck" baseline compare --plugin "$lazy" --baseline-dir "$dir/base" --max-seconds 5 "${shape[@]}"

[ $fails = 0 ] && echo "PASS: lazy:lstm is wrong wherever it is timed" || { echo "$fails failed"; exit 1; }
