#!/usr/bin/env bash
# A plugin's runner through the perf workflow, keyed by plugin and runner:
# `baseline update` records it as <plugin>:<runner>, `show` lists it, and
# `compare` finds that entry (not an A/B) and reports it in markdown.
#   baseline.sh LSTMCHECK PLUGIN WORK_DIR
set -euo pipefail
lstmcheck=$1 plugin=$2 dir=$3
shape=(--device cpu --seqLength 4 --hiddenSize 8 --inputSize 5 --miniBatch 2)
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck source=../unit/record_baseline.sh
source "$(dirname "${BASH_SOURCE[0]}")/../unit/record_baseline.sh"
record_baseline "$dir/update.log" "$lstmcheck" baseline update --plugin "$plugin" --baseline-dir "$dir" --allow-dirty \
  --nloops 20 --no-progress "${shape[@]}"
"$lstmcheck" baseline show --baseline-dir "$dir" --device cpu | grep "good:lstm" \
  || { echo "FAIL: baseline show lists no good:lstm"; exit 1; }
rc=0
"$lstmcheck" baseline compare --plugin "$plugin" --baseline-dir "$dir" --max-seconds 5 --json \
  --markdown "$dir/report.md" "${shape[@]}" > "$dir/compare.json" || rc=$?
cat "$dir/compare.json" "$dir/report.md"
# SAME, FASTER, SLOWER or INCONCLUSIVE are all possible on a busy machine;
# what must hold is that the plugin's own entry was found and compared
# (a WRONG runner or an error will not: exit 1 only with a SLOWER in the counts)
grep -q '"wrong": 0,' "$dir/compare.json" && grep -q '"errors": 0' "$dir/compare.json" \
  || { echo "FAIL: the compare failed"; exit 1; }
case $rc in
  0 | 3) ;;
  1) grep -q '"slower": [1-9]' "$dir/compare.json" || { echo "FAIL: exit 1 without a SLOWER"; exit 1; } ;;
  *) echo "FAIL: compare exited $rc"; exit 1 ;;
esac
grep -q '"runner":[[:space:]]*"good:lstm"' "$dir/compare.json" && grep -q '"mode":[[:space:]]*"baseline"' "$dir/compare.json" \
  || { echo "FAIL: compare did not compare good:lstm against its baseline entry"; exit 1; }
grep -q '| `good:lstm` | s4-l1-i5-h8-b2 | forward |' "$dir/report.md" \
  || { echo "FAIL: the markdown report has no forward row of good:lstm"; exit 1; }
echo "PASS: good:lstm recorded, found and compared under its plugin's name"
