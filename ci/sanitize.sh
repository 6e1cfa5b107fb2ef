#!/usr/bin/env bash
# The CPU part built with -DLSTMCHECK_SANITIZE=ON (ASan with LeakSanitizer,
# UBSan; every report fatal) into ${ASAN_BUILD_DIR:-${BUILD_DIR:-build}-asan},
# then ctest -L "unit|numerics" there. Extra arguments go to ctest.
# The plugin tests are labelled unit;plugin, so they run here, the hostile
# plugins (plugin.hostile_*: an error message without its NUL) among them.
# No test is excluded: the perf label (timings) is not in "unit|numerics",
# and the few seconds of timing in plugin.baseline and report.compare_run
# only check that a verdict is written, not which.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ASAN_BUILD_DIR:-${BUILD_DIR:-$root/build}-asan}
"$root/ci/install-deps.sh" > /dev/null
# RelWithDebInfo: optimized as the product is, with source lines in reports
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLSTMCHECK_CUDA=OFF \
  -DLSTMCHECK_SANITIZE=ON -DLSTMCHECK_REQUIRE_ONEDNN=ON > /dev/null
cmake --build "$build" -j"$(nproc)"
# A report in a child process whose exit a test tolerates (isolation,
# plugins, A/B) must fail the step too: ASan and LSan reports also go to
# files (log_path), and every test's output (LastTest.log, passing tests
# included) is searched, which catches UBSan's too (gcc's runtime prints
# them to stderr whatever log_path says).
logs=$build/sanitizer-reports
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:log_path=$logs/asan
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan
rc=0
(cd "$build" && ctest --output-on-failure -j"$(nproc)" -L "unit|numerics" "$@") || rc=$?
for f in "$logs"/*; do
  [ -e "$f" ] || continue
  echo "== sanitizer report $f"
  cat "$f"
  rc=1
done
pattern='runtime error: |ERROR: (Address|Leak|UndefinedBehavior)Sanitizer'
if grep -a -E -q "$pattern" "$build/Testing/Temporary/LastTest.log"; then
  grep -a -E -B2 -A20 "$pattern" "$build/Testing/Temporary/LastTest.log"
  echo "== sanitizer reports in the tests' output ($build/Testing/Temporary/LastTest.log)"
  rc=1
fi
[ $rc -eq 0 ] || echo "FAIL: sanitizer step (reports above, if any, are in $logs)"
exit "$rc"
