# Sourced by test scripts that stop at their first failure
# (tests/unit/gpu_proof_modes.sh, tests/numerics/independent_models.sh);
# tests/plugin/expect.sh is the counting kind, which goes on.
fail() { echo "FAIL: $*"; exit 1; }
expect() { # CODE PATTERN COMMAND...: the command exits CODE and prints PATTERN
  local code=$1 pattern=$2 out rc
  shift 2
  out=$("$@" 2>&1); rc=$?
  echo "$out"
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $*"
  grep -qF -- "$pattern" <<<"$out" || fail "no '$pattern' in the output of: $*"
}
