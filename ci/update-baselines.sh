#!/usr/bin/env bash
# Re-measure the whole perf matrix of this machine into baselines/: the CPU
# runners always, the CUDA runners when a CUDA device exists. Run after a
# kernel change, review the printed old-vs-new table, then commit baselines/.
#   ci/update-baselines.sh [path/to/lstmcheck]
# Exit: lstmcheck's (its --help); a machine without a GPU is no failure: it
# says "no GPU here: CPU baselines only" and exits as the CPU update did.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=${1:-${BUILD_DIR:-$root/build}/lstmcheck}
"$exe" baseline update --device cpu --baseline-dir "$root/baselines"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# stderr shown as it comes (progress) and kept, so that the refusal of a machine
# without a GPU is told apart; the pipeline ends when tee has written all of it
set +e
{ "$exe" baseline update --device cuda --baseline-dir "$root/baselines" 2>&1 1>&3 3>&- | tee "$err" >&2; } 3>&1
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -eq 3 ] && grep -q '^lstmcheck: no CUDA device' "$err"; then
  echo "update-baselines: no GPU here: CPU baselines only"
  exit 0
fi
exit "$rc"
