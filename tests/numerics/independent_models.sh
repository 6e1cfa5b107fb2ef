#!/usr/bin/env bash
# numerics.independent*: the reference's dump of RUNNER checked by independent_models.py.
#   independent_models.sh LSTMCHECK PYTHON RUNNER MODE WORKDIR
#   MODE pure      plain Python FP64 forward: y, hy, cy
#        torch     PyTorch float64 forward and backward: every reference tensor (77: no torch),
#                  then a perturbed gradient must be caught
#        can_fail  the check fails: a perturbed cy (exit 1), no reference in the index
#                  (exit 1, nothing compared), a missing or empty dump, a big-endian or
#                  missing file (exit 2)
# The shape has 3 layers (two layer boundaries: dropout masks, each layer's LayerNorms)
# and ragged lengths 5,2,4,1 (a full sequence, a one-step one, zero padding in y).
set -uo pipefail
lstmcheck=$1 py=$2 runner=$3 mode=$4 work=$5
script=$(dirname "$0")/independent_models.py
# shellcheck source=../unit/fail_fast.sh
source "$(dirname "${BASH_SOURCE[0]}")/../unit/fail_fast.sh"
perturb() { # FILE DELTA: add DELTA to the last element of a float64 .npy
  "$py" - "$1" "$2" <<'EOF'
import struct, sys
path, delta = sys.argv[1], float(sys.argv[2])
data = bytearray(open(path, "rb").read())
data[-8:] = struct.pack("<d", struct.unpack("<d", data[-8:])[0] + delta)
open(path, "wb").write(data)
EOF
}

rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
"$lstmcheck" check --rnns "$runner" --seqLength 5 --lengths 5,2,4,1 --inputSize 7 \
  --hiddenSize 9 --numLayers 3 --dump "$work/dump"
rc=$?
# 1: the runner failed its gate (numerics.<runner>.* tell why); the reference is ours
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "lstmcheck check exited $rc"
dump=$work/dump/$runner
[ -f "$dump/index.json" ] || fail "no dump at $dump"

case $mode in
pure) exec "$py" "$script" "$dump" ;;
torch)
  "$py" "$script" --torch "$dump"
  rc=$?
  [ "$rc" = 0 ] || exit "$rc" # 77: skipped
  cp -r "$dump" "$work/perturbed_dx" && perturb "$work/perturbed_dx/reference_dx.npy" 1e-6
  expect 1 "FAIL dx" "$py" "$script" --torch "$work/perturbed_dx" ;;
can_fail)
  copy() { echo "== $1"; cp -r "$dump" "$work/$1" || fail "cannot copy the dump"; }
  copy perturbed_cy && perturb "$work/perturbed_cy/reference_cy.npy" 1e-7
  expect 1 "FAIL cy" "$py" "$script" "$work/perturbed_cy"
  copy unreferenced
  "$py" - "$work/unreferenced/index.json" <<'EOF' || fail "cannot edit the index"
import json, sys
index = json.load(open(sys.argv[1]))
index["files"] = [f for f in index["files"] if f["role"] != "reference"]
json.dump(index, open(sys.argv[1], "w"))
EOF
  expect 1 "nothing was compared" "$py" "$script" "$work/unreferenced"
  copy big_endian
  "$py" -c 'import sys; p = sys.argv[1]; d = open(p, "rb").read(); open(p, "wb").write(d.replace(b"<f8", b">f8", 1))' \
    "$work/big_endian/reference_hy.npy" || fail "cannot edit a header"
  expect 2 "only little-endian" "$py" "$script" "$work/big_endian"
  copy missing_file && rm "$work/missing_file/reference_hy.npy"
  expect 2 "cannot read" "$py" "$script" "$work/missing_file"
  echo "== no dump" && expect 2 "no index.json" "$py" "$script" "$work/nowhere"
  echo "== empty" && mkdir "$work/empty" && expect 2 "no index.json" "$py" "$script" "$work/empty"
  echo "can_fail: every broken dump was refused" ;;
*) fail "unknown mode $mode" ;;
esac
