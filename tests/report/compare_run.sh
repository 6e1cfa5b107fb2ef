#!/usr/bin/env bash
# The report tests' setup: one `baseline compare` of the cpu runner at a
# tiny shape against a baseline recorded just before (a few seconds of
# timing), writing --json, --markdown and --plot of the same run.
#   compare_run.sh LSTMCHECK WORK_DIR
set -euo pipefail
lstmcheck=$1 dir=$2
shape=(--device cpu --rnns cpu --seqLength 4 --hiddenSize 8 --inputSize 5 --miniBatch 2)
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck source=../unit/record_baseline.sh
source "$(dirname "${BASH_SOURCE[0]}")/../unit/record_baseline.sh"
# a skip leaves its line in SKIPPED, for the tests that read this run's files
rc=0
out=$(record_baseline "$dir/update.log" "$lstmcheck" baseline update --baseline-dir "$dir" --allow-dirty \
  --nloops 20 --no-progress "${shape[@]}") || rc=$?
if [ $rc != 0 ]; then
  echo "$out"
  [ $rc = 77 ] && echo "$out" > "$dir/SKIPPED"
  exit $rc
fi
rc=0
"$lstmcheck" baseline compare --baseline-dir "$dir" --max-seconds 5 --json --markdown "$dir/compare.md" \
  --plot "$dir/compare.svg" "${shape[@]}" > "$dir/compare.json" || rc=$?
# any verdict will do (a busy machine decides what it decides); a WRONG
# runner or an error will not (exit 1 only with a SLOWER in the counts)
json=$dir/compare.json
grep -q '"wrong": 0,' "$json" && grep -q '"errors": 0' "$json" || { echo "FAIL: the compare failed:"; cat "$json"; exit 1; }
case $rc in
  0 | 3) ;;
  1) grep -q '"slower": [1-9]' "$json" || { echo "FAIL: exit 1 without a SLOWER"; cat "$json"; exit 1; } ;;
  *) echo "FAIL: compare exited $rc"; exit 1 ;;
esac
for f in compare.json compare.md compare.svg; do
  [ -s "$dir/$f" ] || { echo "FAIL: no $dir/$f"; exit 1; }
done
echo "PASS: one compare wrote $dir/compare.{json,md,svg}"
