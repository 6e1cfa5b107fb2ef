#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz, each fuzzed for FUZZ_SECONDS (default
# 60; both at once on 2 cores), in a CPU-only clang build of their own:
# ${FUZZ_BUILD_DIR:-${BUILD_DIR:-build}-fuzz} (docs/fuzzing.md). Without
# clang (or its libFuzzer) the build is made with the default compiler and
# the fuzz tests report skipped, saying why. Extra arguments go to ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-${BUILD_DIR:-$root/build}-fuzz}
"$root/ci/install-deps.sh" > /dev/null
cc=()
if command -v clang > /dev/null; then
  cc=(-DCMAKE_C_COMPILER=clang)
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLSTMCHECK_CUDA=OFF -DLSTMCHECK_FUZZ=ON \
  -DLSTMCHECK_FUZZ_SECONDS="${FUZZ_SECONDS:-60}" "${cc[@]}" > /dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_targets # the targets alone, not the rest of the tree
# -V: each test's summary (executions, speed, coverage) or its skip reason;
# the fuzzers' own logs stay in the build (tests/fuzz/<name>/fuzz.log)
cd "$build"
ctest -V -j"$(nproc)" -L fuzz "$@" 2>&1 | grep -a -v -E '^[0-9]+: Test command:|^[0-9]+: (Working Directory|Environment variables):|^$'
