#!/usr/bin/env bash
# ci/update-baselines.sh (the update-baselines target) on a stand-in
# lstmcheck: without a GPU or without CUDA built it says "CPU baselines only"
# and exits 0; a broken CUDA update (4) or one the host's noise refused (3,
# another line) keeps its exit code; the CUDA update is tried whatever the
# CPU one gave, and the exit is the worse of the two.
#   update_baselines_script.sh SOURCE_DIR
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/lstmcheck" <<'STUB'
#!/usr/bin/env bash
case "$*" in
*"--device cpu"*) echo "cpu: recorded"; exit "${STUB_CPU:-0}" ;;
*"--device cuda"*)
  case $STUB_CUDA in
  nogpu) echo "lstmcheck: no CUDA device: no NVIDIA driver is installed" >&2; exit 3 ;;
  notbuilt) echo "lstmcheck: --device cuda: CUDA runners are not built into this binary" >&2; exit 2 ;;
  ok) echo "cudnn: recorded" ;;
  noisy) echo "lstmcheck: cudnn s1: cannot measure here now: the run-to-run noise ..." >&2; exit 3 ;;
  broken) echo "ERROR cudnn s1: CUDNN_STATUS_INTERNAL_ERROR" >&2; exit 4 ;;
  esac ;;
esac
STUB
chmod +x "$work/lstmcheck"
fails=0
expect() { # CUDA_CASE CODE WANT_LINE(1/0) [CPU_EXIT]
  out=$(STUB_CUDA=$1 STUB_CPU=${4:-0} bash "$src/ci/update-baselines.sh" "$work/lstmcheck" 2>&1)
  rc=$?
  said=0
  grep -q "no GPU here: CPU baselines only" <<<"$out" && said=1
  tried=0
  grep -q "cudnn: recorded" <<<"$out" && tried=1
  if [ "$rc" = "$2" ] && [ "$said" = "$3" ] && { [ "$1" != ok ] || [ "$tried" = 1 ]; }; then
    echo "PASS $1: exit $rc"
  else
    echo "FAIL $1: exit $rc (want $2), 'CPU baselines only' said: $said (want $3); output:"
    echo "$out"
    fails=$((fails + 1))
  fi
}
expect nogpu 0 1
expect notbuilt 0 1
expect noisy 3 0
expect broken 4 0
expect ok 0 0
# the CPU update's outcome does not keep the CUDA one from being tried; the worse is the exit
expect ok 4 0 4
expect noisy 1 0 1
expect broken 4 0 3
expect nogpu 3 1 3
[ $fails = 0 ] && echo "PASS: update-baselines" || exit 1
