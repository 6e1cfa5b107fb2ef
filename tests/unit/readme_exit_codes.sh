#!/usr/bin/env bash
# README's "Exit codes" block is what `lstmcheck --help` ends with, to the
# letter (the text comes from src/base/status.def; README quotes it).
#   readme_exit_codes.sh LSTMCHECK README
set -uo pipefail
exe=$1 readme=$2
help=$("$exe" --help) || { echo "FAIL: lstmcheck --help exited $?"; exit 1; }
block=$(sed -n '/^Exit codes (/,$p' <<<"$help")
[ -n "$block" ] || { echo "FAIL: lstmcheck --help has no 'Exit codes (' block:"; echo "$help"; exit 1; }
# the fenced block of README's section that starts with the same heading
quoted=$(awk '/^```/ { if (inside) exit; next } /^Exit codes \(/ { inside = 1 } inside' "$readme")
if [ "$quoted" != "$block" ]; then
  echo "FAIL: README's exit codes differ from lstmcheck --help's:"
  diff <(echo "$quoted") <(echo "$block")
  exit 1
fi
echo "PASS: README quotes the $(grep -c '^  [0-9]' <<<"$block") exit codes of --help"
