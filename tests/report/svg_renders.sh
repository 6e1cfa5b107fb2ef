#!/usr/bin/env bash
# The plots are well-formed XML (xmllint) and render (rsvg-convert, from
# Debian's librsvg2-bin): the one of the real compare run (compare_run.sh)
# the one the unit test report_writers draws from fixed results (a
# SLOWER, a FASTER, an INCONCLUSIVE, a whisker cut at the edge), and the
# history plot history_steps draws (a SLOWER step, an unreadable version). Skips (77)
# where rsvg-convert is missing; ci/install-deps.sh installs it.
#   svg_renders.sh WORK_DIR UNIT_TESTS
set -euo pipefail
dir=$1 unit_tests=$2
command -v rsvg-convert > /dev/null || { echo "SKIP: rsvg-convert is not installed (apt-get install librsvg2-bin)"; exit 77; }
LSTMCHECK_REPORT_OUT=$dir "$unit_tests" report_writers
LSTMCHECK_REPORT_OUT=$dir "$unit_tests" history_steps
for svg in "$dir/compare.svg" "$dir/report_writers.svg" "$dir/history_steps.svg"; do
  if command -v xmllint > /dev/null; then
    xmllint --noout "$svg" || { echo "FAIL: $svg is not well-formed XML"; exit 1; }
  fi
  rsvg-convert --format png --output "${svg%.svg}.png" "$svg" || { echo "FAIL: rsvg-convert cannot render $svg"; exit 1; }
  [ -s "${svg%.svg}.png" ] || { echo "FAIL: rsvg-convert drew nothing for $svg"; exit 1; }
done
echo "PASS: the three plots are well-formed and render"
