#!/usr/bin/env bash
# Links planted where lstmcheck writes are never followed (issue 19), through
# the command line: `bench --trace`, `check --dump` (index.json and the .npy
# files), `baseline update` and `baseline compare --markdown --plot`. A link
# to a victim file is planted at each target and at <target>.tmp.<pid>, the
# name every writer used to open with fopen "wb" (a shell plants them with
# its own pid, then execs lstmcheck, which keeps that pid). Afterwards the
# victim holds its bytes, each target is a regular file, and no temporary
# file is left. The writer succeeds beside the planted names: its temporary
# names are not made from the pid alone. A killed dump's temporary files
# (dead pids) are removed by the next dump into the folder.
#   planted_links.sh LSTMCHECK
set -euo pipefail
lstmcheck=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tiny=(--rnns cpu --device cpu --seqLength 4 --numLayers 1 --inputSize 3 --hiddenSize 8 --miniBatch 2)
victim=$dir/victim
echo precious >"$victim"
fail() { echo "FAIL: $*"; exit 1; }

# run_planted "FILE..." CMD...: a link to the victim at FILE.tmp.<pid> for
# each FILE, pid being CMD's own (sh execs it), then CMD
run_planted() {
  sh -c 'for f in $1; do ln -s "$2" "$f.tmp.$$"; done; shift 2; exec "$@"' sh "$1" "$victim" "${@:2}"
}
# after: the victim untouched, FILE a regular file, in its folder nothing
# with .tmp. in its name but the links planted to the victim
written() {
  [ "$(cat "$victim")" = precious ] || fail "the victim was written through a link (writing $1)"
  [ -f "$1" ] && [ ! -L "$1" ] || fail "$1 is not a regular file (a link was followed or kept)"
  local f
  for f in "$(dirname "$1")"/*.tmp.*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    [ -L "$f" ] && [ "$(readlink "$f")" = "$victim" ] || fail "a temporary file was left: $f"
  done
}
dead_pid() { sh -c 'echo $$'; }

# bench --trace
ln -s "$victim" "$dir/trace.json"
run_planted "$dir/trace.json" "$lstmcheck" bench "${tiny[@]}" --nloops 3 --warmup 1 --trace "$dir/trace.json" \
  >"$dir/log" 2>&1 || { cat "$dir/log"; fail "bench --trace beside planted links"; }
written "$dir/trace.json"
grep -q traceEvents "$dir/trace.json" || fail "the trace is not in trace.json"
echo "bench --trace: ok"

# check --dump, with a killed dump's temporary files (dead pids, old and new names) in the folder
d=$dir/dump/cpu
mkdir -p "$d"
ln -s "$victim" "$d/index.json"
ln -s "$victim" "$d/input_x.npy"
stale=("$d/index.json.tmp.$(dead_pid).AbCdEf012345" "$d/input_x.npy.tmp.$(dead_pid)")
touch "${stale[@]}"
run_planted "$d/index.json $d/input_x.npy $d/runner_y.npy" "$lstmcheck" check "${tiny[@]}" --dump "$dir/dump" \
  >"$dir/log" 2>&1 || { cat "$dir/log"; fail "check --dump beside planted links"; }
for f in "${stale[@]}"; do [ ! -e "$f" ] || fail "a killed dump's temporary file was kept: $f"; done
written "$d/index.json"
written "$d/input_x.npy"
written "$d/runner_y.npy"
grep -q '"runner": "cpu"' "$d/index.json" || fail "index.json does not hold the dump's index"
echo "check --dump: ok"

# baseline update: the file's name is the machine key's (learnt from a first
# update); at the target, a link to a valid baseline file elsewhere, which
# the update reads through and must not write. An update the host's noise
# refuses (exit 3) is tried again; three of them skip.
update() { # DIR: 0 written, 3 noise, else fail
  local rc=0 attempt
  for attempt in 1 2 3; do
    rc=0
    run_planted "${planted:-}" "$lstmcheck" baseline update "${tiny[@]}" --nloops 5 --allow-dirty --no-progress \
      --baseline-dir "$1" >"$dir/log" 2>&1 || rc=$?
    [ "$rc" = 3 ] && grep -q "run-to-run noise" "$dir/log" || break
  done
  case $rc in
    0) ;;
    3) echo "SKIP: three updates refused for the host's noise"; exit 77 ;;
    *) cat "$dir/log"; fail "baseline update exited $rc" ;;
  esac
}
mkdir "$dir/first" "$dir/b"
planted='' update "$dir/first"
name=$(cd "$dir/first" && ls -- *.json)
cp "$dir/first/$name" "$dir/valid.json"
cp "$dir/valid.json" "$dir/valid.copy"
ln -s "$dir/valid.json" "$dir/b/$name"
planted="$dir/b/$name" update "$dir/b"
cmp -s "$dir/valid.json" "$dir/valid.copy" || fail "the baseline file the link pointed to was written"
written "$dir/b/$name"
"$lstmcheck" baseline show --baseline-dir "$dir/b" >/dev/null || fail "the updated baseline does not read"
echo "baseline update: ok"

# baseline compare --markdown --plot (exit 0, 3 when undecided, or 1: the reports are written
# either way; a control that drifted between update and compare sends it to an A/B
# against a plain build of this commit, which a sanitizer build of it is SLOWER than)
mkdir "$dir/r"
ln -s "$victim" "$dir/r/m.md"
ln -s "$victim" "$dir/r/p.svg"
rc=0
run_planted "$dir/r/m.md $dir/r/p.svg" "$lstmcheck" baseline compare "${tiny[@]}" --nloops 5 --no-progress \
  --baseline-dir "$dir/b" --markdown "$dir/r/m.md" --plot "$dir/r/p.svg" >"$dir/log" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || [ "$rc" = 1 ] || { cat "$dir/log"; fail "baseline compare exited $rc"; }
written "$dir/r/m.md"
written "$dir/r/p.svg"
grep -q "<svg" "$dir/r/p.svg" || fail "p.svg holds no SVG"
echo "baseline compare --markdown --plot: ok"
