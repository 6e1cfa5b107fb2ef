# Sourced by the plugin test scripts (hostile.sh, timed_check.sh).
# expect NAME CODE PATTERN... -- COMMAND...: COMMAND exits CODE and its
# output (stdout and stderr) holds every PATTERN: as a whole line when it
# starts with '^', else anywhere. Prints PASS or FAIL NAME; a failure adds
# one to $fails.
fails=0
expect() {
  local name=$1 code=$2 patterns=()
  shift 2
  while [ "$1" != -- ]; do patterns+=("$1"); shift; done
  shift
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  local ok=1
  [ "$rc" = "$code" ] || ok=0
  for p in "${patterns[@]}"; do
    if [ "${p:0:1}" = "^" ]; then grep -qxF -- "${p:1}" <<<"$out" || { ok=0; echo "  no line '${p:1:100}...'"; }
    else grep -qF -- "$p" <<<"$out" || { ok=0; echo "  no '$p'"; }; fi
  done
  if [ $ok = 1 ]; then
    echo "PASS $name (exit $rc)"
  else
    echo "FAIL $name: exit $rc (want $code), output:"
    sed 's/^/    /' <<<"$out" | cut -c1-700
    fails=$((fails + 1))
  fi
}
