#!/usr/bin/env bash
# The test command: build, then every CTest label (unit, numerics, perf).
# Extra arguments go to ctest (e.g. -L numerics).
# GPU tests report skipped on machines without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/ci/build.sh"
cd "$build"
# one run, so one summary line; perf tests are RUN_SERIAL (nothing runs beside them)
ctest --output-on-failure -j"$(nproc)" "$@"
