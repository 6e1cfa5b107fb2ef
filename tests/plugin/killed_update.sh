#!/usr/bin/env bash
# kill -9 of `baseline update` leaves no process of it running: every child
# dies with its parent (base/proc.h), also one forked just before the kill.
#   killed_update.sh LSTMCHECK GOOD_PLUGIN WORK_DIR plugin|cpu|program
# The child killed under, by kind:
#   plugin   a plugin runner's process (gate and measurement), once a
#            measuring round below it (a grandchild) runs
#   cpu      a measuring round of the cpu runner, a child of lstmcheck itself
#   program  a program lstmcheck runs (proc_run: git here; the A/B sides and
#            the build of an old commit in `baseline compare`): a stand-in
#            git that takes its time
# Every process of the command carries a token in its environment, so one
# still running after the kill is found although it left the tree (an
# orphan's parent is PID 1). A zombie has no environment left: dead, only not
# yet reaped by PID 1, it is not counted (pgrep would count it).
set -euo pipefail
exe=$1 plugin=$2 work=$3 child=$4
tries=10
deadline_s=5
rm -rf "$work"
mkdir -p "$work"
common=(--device cpu --seqLength 20 --hiddenSize 64 --inputSize 32 --miniBatch 8 --nloops 1000 --no-progress
        --keep-going --baseline-dir "$work/baselines")
path=$PATH
case $child in
  plugin) args=(--plugin "$plugin" --rnns good:lstm --allow-dirty); depth=2 ;;
  cpu) args=(--rnns cpu --allow-dirty); depth=1 ;;
  program) # without --allow-dirty, update asks git for the commit first
    mkdir -p "$work/bin"
    printf '#!/bin/sh\nexec sleep 60\n' > "$work/bin/git"
    chmod +x "$work/bin/git"
    path=$work/bin:$PATH
    args=(--rnns cpu); depth=1 ;;
  *) echo "usage: killed_update.sh LSTMCHECK GOOD_PLUGIN WORK_DIR plugin|cpu|program"; exit 2 ;;
esac

# the processes DEPTH generations below pid (none: exit 1)
below() {
  local pids=$1 d
  for ((d = 0; d < $2; d++)); do
    pids=$(for p in $pids; do pgrep -P "$p" || true; done)
    [ -n "$pids" ] || return 1
  done
  echo $pids
}

# running processes whose environment holds the token
running() {
  grep -lsz "^LSTMCHECK_KILL_TEST=$1\$" /proc/[0-9]*/environ | sed 's#/proc/\([0-9]*\)/environ#\1#' || true
}

# An update that ends before a child was seen (its rounds converged early
# on a fast, quiet host) is not a kill: tried again, up to attempts in all.
attempts=$((3 * tries))
failed=0 killed=0
for ((i = 1; i <= attempts && killed < tries; i++)); do
  token=$$-$i
  env PATH="$path" LSTMCHECK_KILL_TEST=$token "$exe" baseline update "${common[@]}" "${args[@]}" \
    > "$work/update.log" 2>&1 &
  pid=$!
  seen=0
  for ((t = 0; t < 600; t++)); do
    below $pid $depth > /dev/null && { seen=1; break; }
    kill -0 $pid 2> /dev/null || break
    sleep 0.1
  done
  if [ $seen = 0 ]; then
    wait $pid 2> /dev/null || true
    echo "try $i: update ended before its child was seen; again"
    continue
  fi
  killed=$((killed + 1))
  kill -9 $pid
  wait $pid 2> /dev/null || true
  left=""
  for ((t = 0; t < 10 * deadline_s; t++)); do
    left=$(running "$token")
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    echo "try $i: still running $deadline_s s after kill -9 of update:"
    ps -o pid,ppid,stat,etime,args -p "$(echo $left | tr ' ' ,)" || true
    kill -9 $left 2> /dev/null || true
    failed=$((failed + 1))
  fi
done
if [ $killed -lt $tries ]; then
  tail -n 5 "$work/update.log"
  echo "FAIL: only $killed of $attempts updates were killed with a $child child running"
  exit 1
fi
if [ $failed -gt 0 ]; then
  echo "FAIL: $failed of $tries kills of baseline update left its $child child running"
  exit 1
fi
echo "PASS: $tries kills of baseline update, no $child child left running"
