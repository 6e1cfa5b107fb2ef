#!/usr/bin/env bash
# Re-measure the whole perf matrix of this machine into baselines/: the CPU
# runners always, the CUDA runners when a CUDA device exists. Run after a
# kernel change, review the printed old-vs-new table, then commit baselines/.
#   ci/update-baselines.sh [path/to/lstmcheck]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=${1:-${BUILD_DIR:-$root/build}/lstmcheck}
"$exe" baseline update --device cpu --baseline-dir "$root/baselines"
rc=0
"$exe" baseline update --device cuda --baseline-dir "$root/baselines" || rc=$?
# 3: no CUDA device here (nothing measured, nothing written)
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then exit "$rc"; fi
