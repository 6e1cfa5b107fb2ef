#!/usr/bin/env bash
# A runner with a dropout mask of its own (LSTMCHECK_OWN_MASK, as cuDNN's
# cudnn_dropout) through the perf workflow: its timing, at p = 0.4, is
# compared with nothing (the test plugin's stand-in mask would fail any
# comparison), and every output labels it unchecked at p > 0: the baseline
# entry `update` writes, `show` (text and JSON), `compare` (text, JSON,
# markdown, SVG); an entry without the label is not compared. bench's and
# check's outputs: plugin_test in CMakeLists.txt.
#   own_mask.sh LSTMCHECK PLUGIN WORK_DIR
set -euo pipefail
lstmcheck=$1 plugin=$2 dir=$3
shape=(--device cpu --seqLength 4 --hiddenSize 8 --inputSize 5 --miniBatch 2 --numLayers 2)
label='dropout p=0.4 with its own mask: unchecked at p > 0 (checked at p = 0)'
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck source=../unit/record_baseline.sh
source "$(dirname "${BASH_SOURCE[0]}")/../unit/record_baseline.sh"
record_baseline "$dir/update.log" "$lstmcheck" baseline update --plugin "$plugin" --baseline-dir "$dir" --allow-dirty \
  --nloops 20 --no-progress "${shape[@]}"
expect() { # WHAT FILE: FILE holds the label
  grep -qF "$label" "$2" || { echo "FAIL: $1 does not label the timing unchecked:"; cat "$2"; exit 1; }
}
file=$(ls "$dir"/*.json)
grep -qF "\"unchecked\": \"$label\"" "$file" || { echo "FAIL: the baseline entry has no unchecked label:"; cat "$file"; exit 1; }
"$lstmcheck" baseline show --plugin "$plugin" --baseline-dir "$dir" --device cpu > "$dir/show.txt"
expect "baseline show" "$dir/show.txt"
"$lstmcheck" baseline show --plugin "$plugin" --baseline-dir "$dir" --device cpu --json > "$dir/show.json"
expect "baseline show --json" "$dir/show.json"
for format in text json; do
  rc=0
  flags=()
  [ $format = json ] && flags=(--json --markdown "$dir/report.md" --plot "$dir/report.svg")
  "$lstmcheck" baseline compare --plugin "$plugin" --baseline-dir "$dir" --max-seconds 5 "${flags[@]}" "${shape[@]}" \
    > "$dir/compare.$format" 2> "$dir/compare.$format.err" || rc=$?
  # any verdict may fall on a busy machine; what must hold is a comparison (no WRONG: nothing timed was compared)
  case $rc in 0 | 1 | 3) ;; *) echo "FAIL: compare exited $rc"; cat "$dir/compare.$format"*; exit 1 ;; esac
  if grep -q "WRONG\|differ" "$dir/compare.$format" "$dir/compare.$format.err"; then
    echo "FAIL: the unchecked timing was compared with a reference:"; cat "$dir/compare.$format"*; exit 1
  fi
  expect "baseline compare ($format)" "$dir/compare.$format"
done
for report in md svg; do # markup: '>' written as an entity
  grep -qF 'unchecked at p &gt; 0 (checked at p = 0)' "$dir/report.$report" \
    || { echo "FAIL: the $report report does not label it:"; cat "$dir/report.$report"; exit 1; }
done
# an entry whose label is not the timing's now (edited out here) is not compared with it
sed -i '/"unchecked":/d' "$file"
rc=0
"$lstmcheck" baseline compare --plugin "$plugin" --baseline-dir "$dir" --max-seconds 5 "${shape[@]}" \
  > "$dir/compare.edited" 2>&1 || rc=$?
grep -q "SKIP own_mask:lstm.*the baseline entry says its timing was 'checked', this runner's is '$label'" \
  "$dir/compare.edited" && [ $rc = 3 ] \
  || { echo "FAIL: an entry without the label was compared (exit $rc):"; cat "$dir/compare.edited"; exit 1; }
echo "PASS: own_mask:lstm timed unchecked at p > 0 and labelled so in every output"
