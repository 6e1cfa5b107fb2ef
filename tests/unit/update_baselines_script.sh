#!/usr/bin/env bash
# ci/update-baselines.sh (the update-baselines target) on a stand-in
# lstmcheck: without a GPU it says "CPU baselines only" and exits 0; a
# broken CUDA update (4) or one the host's noise refused (3, another line)
# keeps its exit code.
#   update_baselines_script.sh SOURCE_DIR
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/lstmcheck" <<'STUB'
#!/usr/bin/env bash
case "$*" in
*"--device cpu"*) echo "cpu: recorded" ;;
*"--device cuda"*)
  case $STUB_CUDA in
  nogpu) echo "lstmcheck: no CUDA device: no NVIDIA driver is installed" >&2; exit 3 ;;
  noisy) echo "lstmcheck: cudnn s1: cannot measure here now: the run-to-run noise ..." >&2; exit 3 ;;
  broken) echo "ERROR cudnn s1: CUDNN_STATUS_INTERNAL_ERROR" >&2; exit 4 ;;
  esac ;;
esac
STUB
chmod +x "$work/lstmcheck"
fails=0
expect() { # CASE CODE WANT_LINE(1/0)
  out=$(STUB_CUDA=$1 bash "$src/ci/update-baselines.sh" "$work/lstmcheck" 2>&1)
  rc=$?
  said=0
  grep -q "no GPU here: CPU baselines only" <<<"$out" && said=1
  if [ "$rc" = "$2" ] && [ "$said" = "$3" ]; then
    echo "PASS $1: exit $rc"
  else
    echo "FAIL $1: exit $rc (want $2), 'CPU baselines only' said: $said (want $3); output:"
    echo "$out"
    fails=$((fails + 1))
  fi
}
expect nogpu 0 1
expect noisy 3 0
expect broken 4 0
[ $fails = 0 ] && echo "PASS: update-baselines" || exit 1
