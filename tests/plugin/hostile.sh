#!/usr/bin/env bash
# Plugins that break the runner ABI's rules on the caller's memory, each a
# runner's own ERROR (exit 4) that spoils nothing of lstmcheck's or of the
# runners after it (docs/plugins.md, "What a plugin cannot spoil"):
#   unterminated    an error message with no NUL byte (forward, available):
#                   one clean line, the message cut at its buffer's size
#   writes_inputs   forward writes its inputs: cpu, run after it in the
#                   same process, still passes, and the culprit is named
#   long_description a description of two lines, 310 characters: one line
#                   of 200 in list
#   markup          a message of HTML, markdown, CR, ESC, a C1 CSI, invalid
#                   UTF-8 (forward; available): printed escaped, no control
#                   byte anywhere; --markdown shows it as text, not markup
#   openmp          a runner on OpenMP after onednn (OpenMP too) in one
#                   command: onednn runs in a child of its own, so neither
#                   hangs (libgomp is not fork-safe: src/device/openmp.h);
#                   exit 77 where the onednn runner is not built
#   openmp_load     a plugin whose loading starts OpenMP threads in
#                   lstmcheck's process: the limit's oneDNN half, forked
#                   after them, hangs until its own deadline, and bench
#                   goes on with OpenBLAS's limit and says why (exit 77
#                   where oneDNN is not built: no such half)
#   hostile.sh CASE LSTMCHECK PLUGINS_DIR WORK_DIR
set -uo pipefail
case_name=$1 lstmcheck=$2 plugins=$3 work=$4
small=(--device cpu --seqLength 5 --hiddenSize 7 --inputSize 6 --miniBatch 3)
msg_max=511 # lstmcheck_error's msg holds 511 characters and its NUL
mkdir -p "$work"
# shellcheck source=expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

# n U's: what is left of the plugin's message once cut to a buffer of n characters
us() { printf 'U%.0s' $(seq "$1"); }
# an ERROR line whose reason is prefix + the message, cut at the reason's size
cut_line() { # RUNNER REASON_PREFIX
  echo "^ERROR $1: $2$(us $((msg_max - ${#2})))"
}

case $case_name in
unterminated)
  u=$plugins/libunterminated.so
  line=$(cut_line unterminated:lstm "unterminated:lstm forward: ")
  expect check 4 "$line" "PASS cpu" "1 passed, 0 failed, 0 skipped, 1 with an error" -- \
    "$lstmcheck" check --plugin "$u" --rnns unterminated:lstm cpu "${small[@]}"
  expect check_in_process 4 "$line" "PASS cpu" "1 passed, 0 failed, 0 skipped, 1 with an error" -- \
    env LSTMCHECK_ISOLATE=0 "$lstmcheck" check --plugin "$u" --rnns unterminated:lstm cpu "${small[@]}"
  expect bench 4 "$line (not timed)" -- \
    "$lstmcheck" bench --plugin "$u" --rnns unterminated:lstm cpu "${small[@]}" --nloops 2 --warmup 1 --no-progress
  ;;
unterminated_available)
  u=$plugins/libunterminated_available.so
  expect check 4 "$(cut_line unterminated_available:lstm "")" "PASS cpu" -- \
    "$lstmcheck" check --plugin "$u" --rnns unterminated_available:lstm cpu "${small[@]}"
  # list prints the message itself: it ends where its buffer does, nothing read past it
  out=$("$lstmcheck" list --plugin "$u" 2>&1)
  if grep -qx "unterminated_available:lstm .* no: U\{$msg_max\}" <<<"$out"; then
    echo "PASS list"
  else
    echo "FAIL list: no line of unterminated_available:lstm ending in 'no: ' and $msg_max U's:"
    grep -a "unterminated_available:lstm" <<<"$out" | cut -c1-700 | cat -v
    fails=$((fails + 1))
  fi
  ;;
writes_inputs)
  w=$plugins/libwrites_inputs.so
  changed="ERROR writes_inputs:lstm: writes_inputs:lstm changed its inputs"
  expect check_in_process 4 "$changed" "PASS cpu" "1 passed, 0 failed, 0 skipped, 1 with an error" -- \
    env LSTMCHECK_ISOLATE=0 "$lstmcheck" check --plugin "$w" --rnns writes_inputs:lstm cpu "${small[@]}"
  expect check 4 "$changed" "PASS cpu" "1 passed, 0 failed, 0 skipped, 1 with an error" -- \
    "$lstmcheck" check --plugin "$w" --rnns writes_inputs:lstm cpu "${small[@]}"
  # --trace runs every runner in this process; cpu, after it, is timed ("cpu" in the JSON)
  rm -f "$work/trace.json"
  expect bench_trace 4 "$changed" "(not timed)" '"cpu": ' -- \
    "$lstmcheck" bench --trace "$work/trace.json" --plugin "$w" --rnns writes_inputs:lstm cpu "${small[@]}" \
    --nloops 2 --warmup 1 --no-progress --print-json
  [ -s "$work/trace.json" ] || { echo "FAIL bench_trace: no trace written"; fails=$((fails + 1)); }
  ;;
long_description)
  # list shows a description as one line of at most 200 characters, the rest cut
  d200="two lines $(printf 'D%.0s' $(seq 190))"
  expect list 0 "^                       $d200 (plugin $plugins/liblong_description.so)" -- \
    "$lstmcheck" list --plugin "$plugins/liblong_description.so"
  ;;
markup)
  m=$plugins/libmarkup.so mu=$plugins/libmarkup_unavailable.so
  shown='<img src=x onerror=alert(1)> & **b** [a](javascript:x) |x\r\x1b[31m\u009b2J \xff end'
  expect check 4 "^ERROR markup:lstm: markup:lstm forward: $shown" "PASS cpu" -- \
    "$lstmcheck" check --plugin "$m" --rnns markup:lstm cpu "${small[@]}"
  expect list 0 "no: $shown" -- "$lstmcheck" list --plugin "$mu"
  rm -rf "$work/markup" && mkdir -p "$work/markup"
  expect compare_markdown 3 "$shown" -- "$lstmcheck" baseline compare --plugin "$mu" \
    --rnns markup_unavailable:lstm "${small[@]}" --baseline-dir "$work/markup" --markdown "$work/markup/r.md"
  # the message came escaped (\r as text): markdown escapes its backslashes too, so it reads \r
  grep -qF -- '&lt;img src=x onerror=alert(1)&gt; &amp; \*\*b\*\* \[a\](javascript:x) \|x\\r\\x1b\[31m\\u009b2J \\xff end' \
    "$work/markup/r.md" || { echo "FAIL markdown: the reason is not escaped:"; cat -v "$work/markup/r.md"; fails=$((fails + 1)); }
  # nothing printed or written holds a control byte (a line's end aside)
  for out in "$("$lstmcheck" check --plugin "$m" --rnns markup:lstm "${small[@]}" 2>&1)" \
             "$("$lstmcheck" list --plugin "$mu" 2>&1)" "$(cat "$work/markup/r.md")"; do
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$out"; then
      echo "FAIL control bytes:"; cat -v <<<"$out" | head -5; fails=$((fails + 1))
    fi
  done
  ;;
openmp)
  o=$plugins/libopenmp.so
  listed=$("$lstmcheck" list) # not piped into grep -q: under pipefail, list's SIGPIPE would read as absent
  if ! grep -q '^onednn .* yes$' <<<"$listed"; then
    echo "SKIP: openmp: the onednn runner is not built here, so no OpenMP runs before the plugin"
    exit 77
  fi
  # without its own process, onednn's threads made the plugin's child hang in create() until the deadline
  expect check 0 "PASS onednn" "PASS openmp:lstm" "PASS cpu" -- \
    "$lstmcheck" check --plugin "$o" --rnns onednn openmp:lstm cpu "${small[@]}" --child-timeout 60
  rc=0
  out=$("$lstmcheck" bench --plugin "$o" --rnns onednn openmp:lstm "${small[@]}" --nloops 2 --warmup 1 \
    --no-progress --child-timeout 60 2>&1) || rc=$?
  for runner in onednn openmp:lstm; do
    if [ $rc = 0 ] && grep -qE "^ +$runner +[0-9]" <<<"$out"; then
      echo "PASS bench: $runner timed"
    else
      echo "FAIL bench (exit $rc): no timed row of $runner:"; echo "$out"; fails=$((fails + 1))
    fi
  done
  ;;
openmp_load)
  o=$plugins/libopenmp_load.so
  listed=$("$lstmcheck" list)
  if ! grep -q '^onednn .* yes$' <<<"$listed"; then
    echo "SKIP: openmp_load: oneDNN is not built here, so the limit forks no OpenMP child"
    exit 77
  fi
  start=$SECONDS
  expect bench 0 "cpu SGEMM limit: " "GFLOP/s (OpenBLAS " \
    "; oneDNN not measured: its measuring process timed out after " "s in oneDNN's SGEMM and was killed" -- \
    "$lstmcheck" bench --plugin "$o" --rnns cpu openmp_load:lstm "${small[@]}" --nloops 2 --warmup 1 --no-progress
  # the deadline is 10 s and 4 times OpenBLAS's half: a few seconds at this shape
  took=$((SECONDS - start))
  [ $took -lt 60 ] && echo "PASS took ${took} s" || { echo "FAIL took ${took} s"; fails=$((fails + 1)); }
  ;;
*)
  echo "unknown case $case_name"
  exit 2
  ;;
esac
[ $fails = 0 ] && echo "PASS: $case_name" || { echo "$fails failed"; exit 1; }
