#!/usr/bin/env bash
# What stdout cannot take is lost output, and the command says so and exits 4
# (an error), whatever it decided: a JSON document cut short must not read as
# a verdict. /dev/full refuses every write (ENOSPC); >&- closes stdout.
#   stdout_lost.sh LSTMCHECK
set -uo pipefail
exe=$1
[ -w /dev/full ] || { echo "SKIP: no /dev/full here"; exit 77; }
small=(--device cpu --rnns cpu --seqLength 5 --hiddenSize 7 --inputSize 6 --miniBatch 3)
fails=0
expect_lost() { # NAME REDIRECT ARGS...
  local name=$1 redirect=$2 err rc
  shift 2
  case $redirect in
  full) err=$("$exe" "$@" 2>&1 >/dev/full) ;;
  closed) err=$("$exe" "$@" 2>&1 >&-) ;;
  esac
  rc=$?
  if [ $rc = 4 ] && grep -q "^lstmcheck: standard output could not be written" <<<"$err"; then
    echo "PASS $name: exit 4, said"
  else
    echo "FAIL $name: exit $rc (want 4 and the line); stderr:"; echo "$err"
    fails=$((fails + 1))
  fi
}
expect_lost check_full full check "${small[@]}"
expect_lost bench_json_full full bench "${small[@]}" --nloops 2 --warmup 1 --print-json full
expect_lost bench_json_closed closed bench "${small[@]}" --nloops 2 --warmup 1 --print-json
expect_lost help_full full --help
expect_lost list_closed closed list
# and a stdout that took it all is no error
out=$("$exe" check "${small[@]}" 2>&1) && grep -q "1 passed" <<<"$out" \
  || { echo "FAIL: check to a pipe: $out"; fails=$((fails + 1)); }
[ $fails = 0 ] && echo "PASS: lost output is an error" || exit 1
