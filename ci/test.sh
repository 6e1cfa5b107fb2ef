#!/usr/bin/env bash
# The test command, in three steps:
#   1. build (Release), then every CTest label (unit, numerics, perf, ...);
#      extra arguments go to this ctest (e.g. -L numerics);
#   2. the CPU part under ASan+UBSan, ctest -L "unit|numerics" (ci/sanitize.sh);
#   3. the libFuzzer targets for a bounded time (ci/fuzz.sh, clang).
# Each step runs even when one before failed; any failure fails the command.
# GPU tests report skipped on machines without a CUDA device; the command ends
# with every skipped test of step 1 and its reason (ci/skipped_tests.py), which
# CTest's own summary does not show; step 1's results are also JUnit XML
# (build/Testing/ctest-junit.xml) for a CI system's test report.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
failed=()
step() { # NAME COMMAND...: runs it, says how long it took
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== $name"
  "$@" || rc=$?
  echo "== $name: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - start)) s"
  [ $rc -eq 0 ] || failed+=("$name")
}
# (set -e does not apply inside a command run under ||: steps chain with &&)
main() {
  # one run, so one summary line; perf tests are RUN_SERIAL (nothing runs beside them)
  rm -f "$junit"
  "$root/ci/build.sh" && (cd "$build" && ctest --output-on-failure -j"$(nproc)" --output-junit "$junit" "$@")
}
junit=$build/Testing/ctest-junit.xml
step "build and test" main "$@"
step "sanitizers" "$root/ci/sanitize.sh"
step "fuzz" "$root/ci/fuzz.sh"
if [ -f "$junit" ]; then
  python3 "$root/ci/skipped_tests.py" "$junit" || echo "(the skipped tests could not be listed from $junit)"
  echo "JUnit report of the ctest step: $junit"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
