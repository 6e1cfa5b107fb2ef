# Sourced by the test scripts that record a baseline to work with
# (tests/plugin/baseline.sh, tests/plugin/timed_check.sh,
# tests/report/compare_run.sh). A host too noisy now refuses an update with
# exit 3 (docs/baselines.md); that is the host's state, not what the test
# checks, so it is tried again, and after RECORD_TRIES refusals the test
# skips with the reason (exit 77), never fails.
#   record_baseline LOG COMMAND...   (COMMAND: a `baseline update`)
RECORD_TRIES=3
record_baseline() {
  local log=$1 try rc
  shift
  for ((try = 1; try <= RECORD_TRIES; try++)); do
    rc=0
    "$@" >"$log" 2>&1 || rc=$?
    case $rc in
      0) return 0 ;;
      3) ;;
      *) echo "FAIL: baseline update exited $rc:"; cat "$log"; exit 1 ;;
    esac
  done
  echo "SKIP: no baseline recorded here now: $RECORD_TRIES updates refused for the host's noise; the last said: $(tail -n 1 "$log")"
  exit 77
}
