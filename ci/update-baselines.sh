#!/usr/bin/env bash
# Re-measure the whole perf matrix of this machine into baselines/: the CPU
# runners always, the CUDA runners when a CUDA device exists (each tried
# whatever the other gave). Run after a kernel change, review the printed
# old-vs-new table, then commit baselines/.
#   ci/update-baselines.sh [path/to/lstmcheck]
# Exit: the worse of the two updates' codes (lstmcheck --help: 2, then 4,
# then 1, then 3). A machine without a GPU, or a build without CUDA, is no
# failure: it says "no GPU here: CPU baselines only".
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=${1:-${BUILD_DIR:-$root/build}/lstmcheck}
worst=0
rank() { case $1 in 0) echo 0 ;; 3) echo 1 ;; 1) echo 2 ;; 4) echo 3 ;; 2) echo 4 ;; *) echo 5 ;; esac; }
keep_worse() { (($(rank "$1") > $(rank "$worst"))) && worst=$1; return 0; }

"$exe" baseline update --device cpu --baseline-dir "$root/baselines"
keep_worse $?

err=$(mktemp)
trap 'rm -f "$err"' EXIT
# stderr shown as it comes (progress) and kept, so that the refusal of a machine
# without a GPU is told apart; the pipeline ends when tee has written all of it
{ "$exe" baseline update --device cuda --baseline-dir "$root/baselines" 2>&1 1>&3 3>&- | tee "$err" >&2; } 3>&1
rc=${PIPESTATUS[0]}
if { [ "$rc" -eq 3 ] && grep -q '^lstmcheck: no CUDA device' "$err"; } ||
   { [ "$rc" -eq 2 ] && grep -q '^lstmcheck: --device cuda: CUDA runners are not built' "$err"; }; then
  echo "update-baselines: no GPU here: CPU baselines only"
else
  keep_worse "$rc"
fi
exit "$worst"
