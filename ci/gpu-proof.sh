#!/usr/bin/env bash
# The GPU proof (issues 11, 18) in one device call of at most 540 s, sized
# for the device time a session is lent (15 minutes, the machine's start
# included: docs/gpu-proof.md does the sums). In order of what it is worth,
# each step cut to what is left of the deadline:
#   at once, nothing timed: every unit and numerics test with no GPU skip
#     allowed; compute-sanitizer memcheck of every GPU runner (saying which
#     it reached), racecheck and synccheck on our shared-memory kernels; the
#     gate under cuBLAS DEFAULT math;
#   then one after another: the default-shape benchmark of every GPU runner,
#     a profile trace checked for GPU activity, PyTorch's own nn.LSTM,
#     cuBLAS PEDANTIC vs DEFAULT, and the baselines (stored entry by entry,
#     so a deadline costs only what was not measured yet);
#   only when named (PROOF_STEPS=power): the perf verdict's power on the GPU.
# The correctness steps are held to disjoint cores (taskset) where they fit.
# Results land in $OUT in at most six files: the logs are packed into it
# after every step, the baselines copied after each shape set, so that a
# call the device cuts short still brings back what it had.
#
#   bash ci/gpu-proof.sh                   on the lent GPU machine, from the project root
#   bash ci/gpu-proof.sh --dry-run         prints every step and its commands; runs nothing
#   bash ci/gpu-proof.sh --preflight       what needs no GPU: a git checkout of this tree (exit 2 if not)
#   bash ci/gpu-proof.sh --check-gpu       only the GPU check: exit 0 with a GPU, else 2
#   bash ci/gpu-proof.sh --check-gpu-model exit 0 when nvidia-smi names PROOF_EXPECT_GPU, else 2
#   bash ci/gpu-proof.sh --find-tools      where nvcc, compute-sanitizer and CUPTI would come from
#   bash ci/gpu-proof.sh --missing-baselines SET
#                                          the perf matrix's GPU runners with no baseline entry of
#                                          this commit in shape set SET (what a second call measures)
#   bash ci/gpu-proof.sh --gate-ratios FILE each runner's worst gate ratio in CTest's JUnit FILE
#
# Environment: OUT (where results go; default ./proof-out), PROOF_BUILD_DIR
# (default ./build-proof: inside the tree, so that a second call on a warm
# machine rebuilds nothing), PROOF_DEADLINE_S (default 540: every step is
# cut to what is left of it, so the call ends inside the device's 10 minutes
# with its logs), PROOF_JOBS (default: the cores), PROOF_STEPS (proof or
# all: every step but power; or step names; build always runs),
# PROOF_EXPECT_GPU (default H200, the kind the device tool lends: the GPU the
# baselines are for; another GPU still gets every correctness step, but no
# baselines).
set -uo pipefail # no -e: a failed step is recorded and the next one runs

# the physical path: git names the top of a checkout reached through a link by it
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root" || exit 1
usage="usage: bash ci/gpu-proof.sh [--dry-run | --preflight | --check-gpu | --check-gpu-model | --find-tools | --missing-baselines SET | --gate-ratios JUNIT-XML]"
mode=${1:-run}
case "$mode" in
  run | --dry-run | --preflight | --check-gpu | --check-gpu-model | --find-tools) max_args=1 ;;
  --missing-baselines)
    case ${2:-} in small | default) ;; *) echo "gpu-proof: --missing-baselines takes a cuda shape set, small or default; $usage" >&2; exit 2 ;; esac
    max_args=2 ;;
  --gate-ratios)
    [ -f "${2:-}" ] || { echo "gpu-proof: --gate-ratios takes CTest's JUnit file (logs/ctest-junit.xml); $usage" >&2; exit 2; }
    max_args=2 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
(( $# <= max_args )) || { echo "gpu-proof: one mode at most; $usage" >&2; exit 2; }

export OUT=${OUT:-$root/proof-out}
export BUILD=${PROOF_BUILD_DIR:-$root/build-proof}
# The cores this process may run on. nproc alone would answer OMP_NUM_THREADS
# where an image sets it (PyTorch images may set it to 1).
cores() { env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc; }
export JOBS=${PROOF_JOBS:-$(cores)}
export EXPECT_GPU=${PROOF_EXPECT_GPU:-H200}
DEADLINE_S=${PROOF_DEADLINE_S:-540}
PROOF_STEPS=${PROOF_STEPS:-proof}
# the logs stay out of $OUT (the device brings back 8 files at most): they
# reach it as one tarball, packed again after each step
export LOGS=$BUILD/proof-logs/logs
export SUMMARY=$OUT/summary.txt

# The settings, checked before any work: a typo must not make a call that
# ran nothing pass.
PROOF_STEP_NAMES="ctest memcheck racecheck default_math_gate bench profile pytorch cublas_math baselines"
STEP_NAMES="$PROOF_STEP_NAMES power"
# power only by name: run after the others, it would get no time (docs/gpu-proof.md)
case $PROOF_STEPS in proof | all) PROOF_STEPS=$PROOF_STEP_NAMES ;; esac
for s in $PROOF_STEPS; do
  case " $STEP_NAMES " in *" $s "*) ;; *)
    echo "gpu-proof: PROOF_STEPS: unknown step '$s' (proof, all, or some of: $STEP_NAMES)" >&2; exit 2 ;;
  esac
done
[ -n "${PROOF_STEPS// /}" ] || { echo "gpu-proof: PROOF_STEPS is empty (proof, all, or step names)" >&2; exit 2; }
if ! [[ $DEADLINE_S =~ ^[0-9]+$ ]] || (( 10#$DEADLINE_S < 60 || 10#$DEADLINE_S > 600 )); then
  echo "gpu-proof: PROOF_DEADLINE_S must be whole seconds in 60..600, not '$DEADLINE_S'" >&2; exit 2
fi
DEADLINE_S=$(( 10#$DEADLINE_S ))
if ! [[ $JOBS =~ ^[0-9]+$ ]] || (( 10#$JOBS < 1 )); then
  echo "gpu-proof: PROOF_JOBS must be a whole number of at least 1, not '$JOBS'" >&2; exit 2
fi
JOBS=$(( 10#$JOBS ))
# The correctness steps run at once and share the cores: ctest half of them,
# the DEFAULT-math gate a quarter, memcheck what is left but the one that
# racecheck takes (16 cores: 8, 4, 3, 1).
at_least_1() { echo $(( $1 > 1 ? $1 : 1 )); }
CTEST_JOBS=$(at_least_1 $(( JOBS / 2 )))
GATE_JOBS=$(at_least_1 $(( JOBS / 4 )))
MEMCHECK_JOBS=$(at_least_1 $(( JOBS - CTEST_JOBS - GATE_JOBS - 1 )))
export JOBS CTEST_JOBS GATE_JOBS MEMCHECK_JOBS
[ -n "${EXPECT_GPU// /}" ] || { echo "gpu-proof: PROOF_EXPECT_GPU is blank: name the GPU the baselines are for (H200)" >&2; exit 2; }

# The GPU runners: the cuda lines of the roster, src/runners/runners.def;
# those of the perf matrix (ROLE_PERF) and those outside it.
GPU_RUNNERS=$(sed -n 's/^LSTM_RUNNER(\([a-z0-9_]*\), *cuda,.*/\1/p' src/runners/runners.def | tr '\n' ' ')
PERF_GPU_RUNNERS=$(sed -n '/ROLE_PERF/s/^LSTM_RUNNER(\([a-z0-9_]*\), *cuda,.*/\1/p' src/runners/runners.def | tr '\n' ' ')
NONPERF_GPU_RUNNERS=$(sed -n '/ROLE_PERF/!s/^LSTM_RUNNER(\([a-z0-9_]*\), *cuda,.*/\1/p' src/runners/runners.def | tr '\n' ' ')
export GPU_RUNNERS PERF_GPU_RUNNERS NONPERF_GPU_RUNNERS
# bench of the GPU runners outside the perf matrix: a few loops show that
# they run and about how fast. Their speed is not tracked, and vl_py (one
# sequence at a time, 34 launches per sequence and step: about 1.1 s an
# iteration at the default shape) would take 2 minutes with bench's
# default 10 warm-up and 100 timed loops, the whole of the step's cap.
export BENCH_NONPERF_LOOPS="--warmup 1 --nloops 5"
# Our kernels that use shared memory: the __global__ function around each
# __shared__ (racecheck and synccheck look at these).
SHARED_MEM_KERNELS=$(awk '/__global__/ { if (match($0, /[A-Za-z_0-9]+\(/)) k = substr($0, RSTART, RLENGTH - 1) }
                          /__shared__/ { print k }' kernels/*.cu 2>/dev/null | sort -u | tr '\n' ' ')
export SHARED_MEM_KERNELS

# ---------------------------------------------------------------------------
# Checks that need no GPU, and the GPU checks.

# The baselines name the commit they measured, and the A/B tests build other
# commits: this tree must be a git checkout of its own (the device gets it
# without .git; the kit's repo.bundle restores it).
preflight() {
  local top
  top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)
  if [ "$top" != "$root" ]; then
    echo "gpu-proof: FAIL: $root is not a git checkout (the GPU machine gets the tree without .git): run ../shared/device/pack-deps.sh here after the last commit and carry .devdeps, whose unpack.sh restores .git from repo.bundle" >&2
    return 2
  fi
  echo "gpu-proof: git checkout at $(git rev-parse --short HEAD)"
  if [ -f .devdeps/HEAD ] && [ "$(cat .devdeps/HEAD)" != "$(git rev-parse HEAD)" ]; then
    echo "gpu-proof: note: .devdeps/HEAD is $(cut -c1-12 .devdeps/HEAD): the kit was packed at another commit"
  fi
  if [ -n "$(git status --porcelain -- src kernels include CMakeLists.txt 2>/dev/null)" ]; then
    echo "gpu-proof: note: uncommitted changes to what is built: baseline update will refuse to record them (commit, pack again)"
  fi
  return 0
}

gpu_present() {
  if command -v nvidia-smi >/dev/null 2>&1 && timeout 30 nvidia-smi -L >/dev/null 2>&1; then return 0; fi
  [ -e /dev/nvidiactl ]
}

gpu_model() { timeout 30 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1; }

# Baselines are per machine, and docs/gpu-proof.md's expectations are for the
# kind the device tool lends (an H200): another GPU must not record them
# under those expectations.
gpu_is_expected() {
  local model
  model=$(gpu_model)
  case ${model,,} in
    *"${EXPECT_GPU,,}"*) echo "gpu-proof: the GPU is '$model', as expected ($EXPECT_GPU)"; return 0 ;;
  esac
  echo "gpu-proof: the GPU is '${model:-unknown}', not the $EXPECT_GPU the proof expects (PROOF_EXPECT_GPU): no baselines are written on it" >&2
  return 2
}

# Tools from the toolkit, else from Python wheels: CUDA 12 wheels put them
# under nvidia/<component>/, CUDA 13 wheels under nvidia/cu13/.
wheel_file() { # RELATIVE-PATH...: the first that exists under a path of the nvidia package
  python3 - "$@" <<'PY' 2>/dev/null
import glob, os, sys
try:
    import nvidia
except ImportError:
    sys.exit(0)
for base in nvidia.__path__:
    for rel in sys.argv[1:]:
        hits = sorted(glob.glob(os.path.join(base, rel)))
        if hits:
            print(hits[0])
            sys.exit(0)
PY
}
find_tools() {
  NVCC=$(command -v nvcc || true)
  [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
  WHEEL_NVCC=$(wheel_file cu13/bin/nvcc cuda_nvcc/bin/nvcc)
  [ -z "$NVCC" ] && NVCC=$WHEEL_NVCC
  SANITIZER=$(command -v compute-sanitizer || true)
  WHEEL_SANITIZER=$(wheel_file cu13/bin/compute-sanitizer cuda_sanitizer_api/compute-sanitizer/compute-sanitizer)
  local s
  for s in "$(dirname "${NVCC:-/nonexistent/x}")/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer \
           /usr/local/cuda/compute-sanitizer/compute-sanitizer "$WHEEL_SANITIZER"; do
    [ -z "$SANITIZER" ] && [ -n "$s" ] && [ -x "$s" ] && SANITIZER=$s
  done
  WHEEL_CUPTI_H=$(wheel_file cu13/include/cupti.h cuda_cupti/include/cupti.h)
  WHEEL_CUPTI_LIB=$(wheel_file 'cu13/lib/libcupti.so*' 'cuda_cupti/lib/libcupti.so*')
  CUPTI_HINTS=""
  if [ ! -e /usr/local/cuda/extras/CUPTI/include/cupti.h ] && [ ! -e /usr/local/cuda/include/cupti.h ] &&
     [ -n "$WHEEL_CUPTI_H" ] && [ -n "$WHEEL_CUPTI_LIB" ]; then
    CUPTI_HINTS="-DLSTMCHECK_CUPTI_INCLUDE_DIR=$(dirname "$WHEEL_CUPTI_H") -DLSTMCHECK_CUPTI_LIBRARY=$WHEEL_CUPTI_LIB"
  fi
  export NVCC SANITIZER CUPTI_HINTS WHEEL_NVCC WHEEL_SANITIZER WHEEL_CUPTI_H WHEEL_CUPTI_LIB
}
print_tools() {
  echo "nvcc: ${NVCC:-not found} (wheel: ${WHEEL_NVCC:-none})"
  echo "compute-sanitizer: ${SANITIZER:-not found} (wheel: ${WHEEL_SANITIZER:-none})"
  echo "CUPTI from a wheel: ${WHEEL_CUPTI_H:-none} ${WHEEL_CUPTI_LIB:-} (cmake hints: ${CUPTI_HINTS:-none, the toolkit has it})"
}

case $mode in
  --preflight) preflight; exit $? ;;
  --check-gpu-model) gpu_is_expected; exit $? ;;
  --find-tools) find_tools; print_tools; exit 0 ;;
  --check-gpu | run)
    if ! gpu_present; then
      echo "gpu-proof: FAIL: no GPU on this machine (nvidia-smi -L fails, /dev/nvidiactl absent): run it on the lent GPU machine (docs/gpu-proof.md)" >&2
      exit 2
    fi
    [ "$mode" = --check-gpu ] && { echo "gpu-proof: a GPU is here"; exit 0; } ;;
esac

# ---------------------------------------------------------------------------
# The steps. Each is a function run under `timeout` with its output in
# $LOGS/<step>.log and $STEP_CAP (seconds) exported; its result is one line
# of $SUMMARY.

step_env() {
  timeout 20 nvidia-smi || true
  # what tests sized for 2 cores and 24 GiB meet here
  echo "host: $(cores) cores (OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}), $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) (MemTotal), user $(id -u)"
  print_tools
  "$NVCC" --version
  echo "cmake: $(cmake --version | head -1); generator: $GENERATOR; jobs: $JOBS; build: $BUILD"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' || true
  echo "GPU runners: $GPU_RUNNERS (outside the perf matrix: ${NONPERF_GPU_RUNNERS:-none})"
  echo "kernels with shared memory: $SHARED_MEM_KERNELS"
  echo "kernels with shared memory that no racecheck run covers: $(u=$(racecheck_uncovered); echo "${u:-none}")"
  git log -1 --format='commit %H %ci' && git status --short | head -20
}

step_build() {
  cmake -S . -B "$BUILD" -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$NVCC" $CUPTI_HINTS || return 1
  cmake --build "$BUILD" -j"$JOBS" || return 1
  # a build without nvcc would quietly have no GPU runners
  local built r
  built=$("$BUILD/lstmcheck" list --names --device cuda | tr '\n' ' ')
  for r in $GPU_RUNNERS; do
    case " $built " in *" $r "*) ;; *) echo "GPU runner $r was not built"; return 1 ;; esac
  done
  echo "every GPU runner of the roster was built: $built"
}

# Does the build see the device? A FAIL here is recorded, and the steps
# still run: their logs say more about why than this line can.
step_device() {
  local listed
  listed=$("$BUILD/lstmcheck" list)
  echo "$listed"
  # src/cmd/cmd_list.c: "; device: <name>" only where the device probe found one
  grep -q '^CUDA in this build: yes; device: ' <<<"$listed" && { grep '^CUDA in this build' <<<"$listed"; return 0; }
  echo "the build sees no CUDA device: $(grep '^CUDA in this build' <<<"$listed")"
  return 1
}

# A skipped GPU test (label gpu) fails the proof: a GPU is here. Only a GPU
# runner's numerics group may skip: under LSTMCHECK_REQUIRE_GPU=1
# numerics_test skips only a group wholly outside the runner's declared caps,
# or one cuDNN refused for cudnn_persist (RUNNER_LIBRARY_DECIDES), and fails
# any other skip. Skips of other tests (a tool such as pkg-config or
# rsvg-convert missing on this machine) are reported, not failed.
skip_is_allowed() { # TEST GPU-TESTS
  local t=$1 r
  case " $2 " in *" $t "*) ;; *) return 0 ;; esac
  for r in $GPU_RUNNERS; do
    case $t in numerics."$r".*) return 0 ;; esac
  done
  return 1
}

step_ctest() {
  # every test's whole output into the JUnit file (LastTest.log would not
  # do: tests that run ctest themselves write it again)
  (cd "$BUILD" && LSTMCHECK_REQUIRE_GPU=1 ctest -L "unit|numerics" -j"$CTEST_JOBS" \
     --output-on-failure --no-tests=error --output-junit "$LOGS/ctest-junit.xml" \
     --test-output-size-passed 1000000) | tee "$LOGS/ctest.out"
  local rc=${PIPESTATUS[0]} bad="" other="" t gpu_tests
  gate_ratios "$LOGS/ctest-junit.xml" > "$LOGS/gate_ratios.txt"
  gpu_tests=$(cd "$BUILD" && ctest -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p' | tr '\n' ' ')
  for t in $(grep -o '[0-9]* - [^ ]* (Skipped)' "$LOGS/ctest.out" | awk '{print $3}'); do
    if ! skip_is_allowed "$t" "$gpu_tests"; then bad="$bad $t"
    else case " $gpu_tests " in *" $t "*) ;; *) other="$other $t" ;; esac
    fi
  done
  [ -n "$other" ] && echo "skipped, not GPU tests (reported, not failed):$other"
  [ -n "$bad" ] && { echo "GPU tests skipped, but a GPU is here:$bad"; return 1; }
  echo "skipped GPU numerics groups (outside a runner's caps, or refused by cuDNN): $(grep '(Skipped)' "$LOGS/ctest.out" | grep -c 'numerics\.')"
  step_ctest_resources || rc=1
  return "$rc"
}
# Each runner's worst gate ratio over the numerics groups it ran, from
# numerics_test's last lines ("<runner>/<group>: ...; worst ratio R") in
# CTest's JUnit file: the figures docs/tolerance.md records.
gate_ratios() { # JUNIT-XML
  python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
worst = {}
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    out = case.find("system-out")
    for line in (out.text or "").splitlines() if out is not None else []:
        m = re.match(r"([a-z0-9_:]+)/([a-z0-9_]+): .*; worst ratio ([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)$", line)
        if m and float(m.group(3)) > worst.get(m.group(1), (-1.0, ""))[0]:
            worst[m.group(1)] = (float(m.group(3)), m.group(2))
for runner, (ratio, group) in sorted(worst.items()):
    print(f"{runner:22s} worst ratio {ratio:.3g} ({group})")
PY
}

# CTest's GPU allocation on a real GPU (docs/gpu-resources.md): the spec from
# this machine's nvidia-smi, and two GPU tests run on the GPU allocated to
# them: a skip there (CUDA saw no GPU) fails as a failure does.
step_ctest_resources() {
  local out
  bash ci/gpu-resources.sh --build "$BUILD" "$LOGS/gpus.json" || { echo "resources: no spec written"; return 1; }
  out=$(cd "$BUILD" && LSTMCHECK_REQUIRE_GPU=1 ctest -R '^(unit\.trace_gpu_two_runners|numerics\.cudnn\.basic)$' \
          --resource-spec-file "$LOGS/gpus.json" --output-on-failure --no-tests=error 2>&1)
  local rc=$?
  echo "$out"
  if (( rc != 0 )) || grep -q '(Skipped)' <<<"$out"; then
    echo "resources: a GPU test failed or skipped on the GPU CTest allocated"
    return 1
  fi
  echo "resources: the GPU tests ran on the GPU CTest allocated ($(grep -c '"id"' "$LOGS/gpus.json") in the spec)"
}

# memcheck of one runner's group, inside what is left of MEMCHECK_DEADLINE;
# one line into $LOGS/memcheck.status whatever happens.
memcheck_one() {
  local r=$1 g=$2 t0 left rc what log=$LOGS/memcheck.$1.log
  t0=$(date +%s)
  left=$(( MEMCHECK_DEADLINE - t0 ))
  if (( left < 20 )); then echo "$r $g: NOT STARTED (out of time)" >> "$LOGS/memcheck.status"; return 0; fi
  LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 timeout -k 5 "$left" \
    "$SANITIZER" --tool memcheck --error-exitcode 99 "$BUILD/tests/numerics/numerics_test" "$r" "$g" > "$log" 2>&1
  rc=$?
  case $rc in
    0) what=ok ;;
    # a refusal by cuDNN names its status (clean); another skip, its SKIP line (not clean)
    77) what="skipped: $(grep -m1 -o -E 'CUDNN_STATUS_[A-Z_]+' "$log" || grep -m1 -o 'SKIP .*' "$log" | cut -c1-160)" ;;
    99) what="FINDINGS (see memcheck.$r.log)" ;;
    124 | 137) what="CUT at ${left}s" ;;
    *) what="FAIL (exit $rc)" ;;
  esac
  echo "$r $g: $what, $(( $(date +%s) - t0 ))s" >> "$LOGS/memcheck.status"
}

# One numerics group of every GPU runner under memcheck (basic, or varlen
# for the variable-length runners), $MEMCHECK_JOBS at a time, each cut to what
# is left of the step's cap: the last line says which runners it reached.
step_memcheck() {
  export MEMCHECK_DEADLINE=$(( $(date +%s) + STEP_CAP - 15 ))
  : > "$LOGS/memcheck.status"
  local r
  for r in $GPU_RUNNERS; do
    # the group that reaches the runner's own paths: variable lengths, the
    # dropout mask between layers (one layer has none)
    case $r in vl_*) echo "$r varlen" ;; jit_dropout | cudnn_dropout) echo "$r dropout_layers" ;; *) echo "$r basic" ;; esac
  done | xargs -P "$MEMCHECK_JOBS" -L 1 bash -c 'memcheck_one "$0" "$1"'
  cat "$LOGS/memcheck.status"
  local total reached bad
  total=$(echo $GPU_RUNNERS | wc -w)
  reached=$(grep -c -v 'NOT STARTED' "$LOGS/memcheck.status")
  # clean: ok, or skipped because cuDNN refused the shape (the line names its status)
  bad=$(grep -v -E ': ok,' "$LOGS/memcheck.status" | grep -v -E ': skipped: CUDNN_STATUS_' |
        cut -d' ' -f1 | tr '\n' ' ')
  echo "memcheck reached $reached of $total GPU runners; not clean or not reached: ${bad:-none}"
  [ -z "$bad" ]
}

# racecheck and synccheck on our shared-memory kernels, one run per
# runner:group:kernel-name-substring (one --kernel-name filter per run: it is
# not known whether compute-sanitizer ORs several). The bias reduction's
# one-chunk path (jit: per-step reductions over B rows) and multi-chunk path
# (jit_wgrad_all large: over T*B > 256 rows); the fused LayerNorm kernels
# and the decomposed one's row reductions.
RACECHECK_RUNS="jit:basic:bias_grad_partial_kernel jit_wgrad_all:large:bias_grad_partial_kernel
  jit_layernorm:basic:_fused_kernel jit_layernorm_decom:basic:row_"
export RACECHECK_RUNS

# The kernels with shared memory that no racecheck run's substring names.
racecheck_uncovered() {
  local k run missing=""
  for k in $SHARED_MEM_KERNELS; do
    for run in $RACECHECK_RUNS; do [[ $k == *"${run##*:}"* ]] && continue 2; done
    missing="$missing $k"
  done
  echo "${missing# }"
}

step_racecheck() {
  local rc=0 k out run runner group filter uncovered can_filter=0 tool what
  uncovered=$(racecheck_uncovered)
  [ -n "$uncovered" ] && { echo "kernels with shared memory that no racecheck run covers: $uncovered"; rc=1; }
  "$SANITIZER" --help 2>&1 | grep -q -- '--kernel-name' && can_filter=1
  out=$(mktemp)
  : > "$LOGS/racecheck.status"
  # each run's two tools one after the other, so that a cut costs whole runs
  for run in $RACECHECK_RUNS; do
    for tool in racecheck synccheck; do
      IFS=: read -r runner group k <<<"$run"
      filter=""
      (( can_filter )) && filter="--kernel-name kns=$k"
      echo "== $tool $runner $group (filter: ${filter:-none})"
      # shellcheck disable=SC2086
      LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 "$SANITIZER" --tool $tool --error-exitcode 99 $filter \
        "$BUILD/tests/numerics/numerics_test" "$runner" "$group" > "$out" 2>&1
      k=$?
      cat "$out"
      if (( k != 0 )) && [ -n "$filter" ] && grep -qiE 'unrecogni[sz]ed|invalid (option|value)|unknown option' "$out"; then
        echo "== the kernel filter was refused: $tool $runner $group on every kernel"
        LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 "$SANITIZER" --tool $tool --error-exitcode 99 \
          "$BUILD/tests/numerics/numerics_test" "$runner" "$group"
        k=$?
      fi
      case $k in 0) what=ok ;; 99) what=FINDINGS; rc=1 ;; *) what="FAIL (exit $k)"; rc=1 ;; esac
      echo "$tool $runner $group: $what" >> "$LOGS/racecheck.status"
    done
  done
  rm -f "$out"
  echo "racecheck and synccheck: $(grep -c ': ok$' "$LOGS/racecheck.status") of $(( 2 * $(wc -w <<<"$RACECHECK_RUNS") )) runs clean"
  return $rc
}

# The gate under CUBLAS_DEFAULT_MATH: is PEDANTIC needed for it? (issue 11, 4)
step_default_math_gate() {
  local runners
  # the cuBLAS runners: the rows of kernels/runner_cublas.cu, runner_vl_jit.cu, runner_layernorm.cu
  runners=$(sed -n 's/^LC_[A-Z]*_RUNNER(\([a-z0-9_]*\),.*/\1/p' kernels/runner_cublas.cu \
            kernels/runner_vl_jit.cu kernels/runner_layernorm.cu)
  for r in $runners; do
    for g in basic large seeds; do echo "$r $g"; done
  done | LSTMCHECK_CUBLAS_MATH=default LSTMCHECK_REQUIRE_GPU=1 xargs -P "$GATE_JOBS" -L 1 sh -c \
    'out=$("$BUILD/tests/numerics/numerics_test" "$0" "$1" 2>&1); rc=$?; echo "$out" | tail -1; exit $((rc != 0 && rc != 77))'
}

# The SKIP lines of a bench or baseline update output (SKIP <runner> ...: why)
# that are not a refusal by cuDNN (kernels/cudnn_common.cu names its status).
skips_not_cudnn_refusals() { # OUTPUT-FILE
  grep '^SKIP ' "$1" | grep -v 'cuDNN refuses this configuration: .*CUDNN_STATUS_'
}

# bench_runners JSON TABLE RUNNERS [FLAGS]: lstmcheck bench of RUNNERS at
# the default shape. Exit 3 means a runner skipped: allowed only where cuDNN
# refused the shape (the skip names cuDNN's status), as for cudnn_persist.
bench_runners() {
  local json=$1 table=$2 runners=$3 rc other
  shift 3
  # shellcheck disable=SC2086
  "$BUILD/lstmcheck" bench --device cuda "$@" --rnns $runners --print-json full > "$json" 2> "$table"
  rc=$?
  cat "$table"
  if (( rc == 3 )); then
    other=$(skips_not_cudnn_refusals "$table")
    [ -n "$other" ] && { echo "skipped for another reason than a cuDNN refusal: $other"; return 1; }
    echo "bench: every skip is a cuDNN refusal (named above)"
    return 0
  fi
  return $rc
}

# The perf matrix's GPU runners with bench's defaults into bench_full.json;
# the others with $BENCH_NONPERF_LOOPS, into the logs.
step_bench() {
  local rc=0
  bench_runners "$OUT/bench_full.json" "$LOGS/bench.table" "$PERF_GPU_RUNNERS" || rc=1
  [ -z "${NONPERF_GPU_RUNNERS// /}" ] && return $rc
  echo "== outside the perf matrix, $BENCH_NONPERF_LOOPS: $NONPERF_GPU_RUNNERS"
  # shellcheck disable=SC2086
  bench_runners "$LOGS/bench_nonperf.json" "$LOGS/bench_nonperf.table" "$NONPERF_GPU_RUNNERS" \
    $BENCH_NONPERF_LOOPS || rc=1
  return $rc
}

# lstmcheck profile of one cuDNN runner and one of our kernels with cuBLAS:
# the trace must hold CUPTI's GPU activity and each runner's utilization and
# GEMM share (ci/check_trace.py). It comes back in the logs, for Perfetto
# (ui.perfetto.dev); the table of operations is in profile.log.
PROFILE_RUNNERS="cudnn jit"
export PROFILE_RUNNERS
step_profile() {
  # shellcheck disable=SC2086
  "$BUILD/lstmcheck" profile --device cuda --rnns $PROFILE_RUNNERS --nloops 5 --sleep-between-seconds 0 \
    --trace "$LOGS/profile.trace.json" --csv "$LOGS/profile.ops.csv" || return 1
  # shellcheck disable=SC2086
  python3 ci/check_trace.py "$LOGS/profile.trace.json" $PROFILE_RUNNERS
}

step_cublas_math() {
  "$BUILD/tests/perf/cublas_math" | tee "$OUT/cublas_math.txt"
}

step_pytorch() {
  python3 ci/pytorch_lstm.py --out "$OUT/pytorch.json"
}

# The baselines go to a folder in the build, which a warm machine keeps
# between calls ($OUT is emptied before each), and are copied into $OUT when
# the call packs.
export BASELINE_DIR=$BUILD/proof-baselines

# The runners of the perf matrix with no entry of this commit in shape set
# SET: a second call at once measures only what the first one's deadline cut.
baselines_missing() { # SET
  local have r
  have=$("$BUILD/lstmcheck" baseline show --device cuda --shape-set "$1" --baseline-dir "$BASELINE_DIR" --json \
           2>/dev/null | python3 -c 'import json, sys
print(" ".join(e["runner"] for e in json.load(sys.stdin)["entries"] if e.get("git_commit") == sys.argv[1]))' \
           "$(git rev-parse HEAD)" 2>/dev/null)
  for r in $PERF_GPU_RUNNERS; do
    case " $have " in *" $r "*) ;; *) printf '%s ' "$r" ;; esac
  done
}

# Every GPU runner of the perf matrix (the baselines of the others would
# never be compared) in one process per shape set (the reference of a shape
# is computed once for all), small first; --keep-going records each entry as
# it is measured, so a runner that fails, or the deadline, costs only itself.
step_baselines() {
  gpu_is_expected || return 1
  local rc=0 set r_rc todo out
  mkdir -p "$BASELINE_DIR" "$OUT/baselines" || return 1
  out=$(mktemp)
  for set in small default; do
    todo=$(baselines_missing "$set")
    echo "== shape set $set $(date +%T): ${todo:-every runner has its entry of this commit}"
    [ -z "${todo// /}" ] && continue
    # shellcheck disable=SC2086
    "$BUILD/lstmcheck" baseline update --device cuda --rnns $todo --shape-set "$set" --keep-going \
      --no-progress --baseline-dir "$BASELINE_DIR" 2>&1 | tee "$out"
    r_rc=${PIPESTATUS[0]}
    # into $OUT as measured: a call killed later still brings them back
    cp "$BASELINE_DIR"/*.json "$OUT/baselines/" 2>/dev/null
    # 1: a runner wrong, 4: its error (said above); 2: refused (e.g. a dirty
    # tree); 3: nothing recorded: only a cuDNN refusal (cudnn_persist, which
    # stays "missing" on every call) is no failure
    if (( r_rc == 3 )) && [ -z "$(skips_not_cudnn_refusals "$out")" ] && grep -q '^SKIP ' "$out"; then
      echo "baselines: nothing recorded in $set but cuDNN refusals (named above)"
    elif (( r_rc != 0 )); then rc=1
    fi
  done
  rm -f "$out"
  ls "$BASELINE_DIR"/*.json || { echo "no baseline file written"; return 1; }
  return $rc
}

# The perf verdict's power on this GPU (tests/perf/perf_power, docs/perf.md):
# cudnn at the cuda small set against a baseline measured here, up to 20
# trials a level: unchanged code never SLOWER, a planted wait of 2R or more
# (auto, judged before 5% so that a cut leaves it judged) SLOWER in 95% of
# them (all, under 20), 5% reported (the verdict's minimum effect is at
# least 3%). The budget, (cap - 60 s) / 2, keeps the run inside the cap: a
# level ends within about twice its share, and the baseline takes the 60 s;
# a cap the deadline cut short still gets a quarter of it (0 would be none).
# A skip (77: the GPU too noisy to judge power at any level, or cudnn not
# usable) fails here, where a GPU is.
export POWER_ARGS="--device cuda --trials 20 --levels 0,auto,5"
step_power() {
  local rc out=$LOGS/power.out r trials budget=$(( (STEP_CAP - 60) / 2 ))
  (( budget < STEP_CAP / 4 )) && budget=$(( STEP_CAP / 4 ))
  # shellcheck disable=SC2086
  "$BUILD/tests/perf/perf_power" $POWER_ARGS --budget "$budget" | tee "$out"
  rc=${PIPESTATUS[0]}
  (( rc == 77 )) && echo "power: not judged on this GPU: the SKIP line above says why"
  r=$(sed -n 's/.*-> resolution R = \([0-9.]*%\).*/\1/p' "$out")
  # each level's row: the level, then the trials it ran (of 20 asked)
  trials=$(awk '$1 ~ /^[0-9.]+%$/ && $2 ~ /^[0-9]+$/ { printf "%s%s %s", sep, $1, $2; sep = ", " }' "$out")
  echo "power: exit $rc, resolution R ${r:-not measured}, trials per level ${trials:-none}"
  return $rc
}

export -f cores find_tools print_tools wheel_file gpu_model gpu_is_expected skip_is_allowed memcheck_one baselines_missing \
  gate_ratios skips_not_cudnn_refusals \
  step_env step_build step_device step_ctest step_ctest_resources step_memcheck racecheck_uncovered step_racecheck step_default_math_gate bench_runners step_bench \
  step_profile step_cublas_math step_pytorch step_baselines step_power

# name:cap (seconds); the correctness steps share the GPU at once, the timing
# steps run one after another with nothing else on it, the baselines last:
# they keep each entry as it is measured, so the deadline cuts only their tail.
ENV_CAP=30 BUILD_CAP=240 DEVICE_CAP=30
# Disjoint cores for the correctness steps, so that the split above holds for
# threads too (each numerics_test sizes its reference's threads, and OpenBLAS
# its own, by the cores it may run on): ctest's first, then the gate's,
# memcheck's, racecheck's. Only where taskset is here and this process may
# run on cores 0..nproc-1, and the split fits them; else no pinning.
step_cpus() { # STEP: a taskset core list, or nothing
  local first
  command -v taskset >/dev/null 2>&1 || return 0
  [ "$(taskset -pc $$ 2>/dev/null | sed 's/.*: //')" = "0-$(( $(cores) - 1 ))" ] || return 0
  (( CTEST_JOBS + GATE_JOBS + MEMCHECK_JOBS + 1 <= $(cores) )) || return 0
  case $1 in
    ctest) echo "0-$(( CTEST_JOBS - 1 ))" ;;
    default_math_gate) first=$CTEST_JOBS; echo "$first-$(( first + GATE_JOBS - 1 ))" ;;
    memcheck) first=$(( CTEST_JOBS + GATE_JOBS )); echo "$first-$(( first + MEMCHECK_JOBS - 1 ))" ;;
    racecheck) echo "$(( CTEST_JOBS + GATE_JOBS + MEMCHECK_JOBS ))" ;;
  esac
}
STEPS_CORRECTNESS="ctest:300 memcheck:240 racecheck:200 default_math_gate:150"
STEPS_TIMING="bench:120 profile:45 pytorch:60 cublas_math:30 baselines:300 power:240"
if [ "$mode" = --gate-ratios ]; then
  gate_ratios "$2"
  exit
fi
if [ "$mode" = --missing-baselines ]; then
  [ -x "$BUILD/lstmcheck" ] || { echo "gpu-proof: no $BUILD/lstmcheck: build first (or set PROOF_BUILD_DIR)" >&2; exit 2; }
  baselines_missing "$2"; echo
  exit 0
fi
if [ "$mode" = --dry-run ]; then
  echo "gpu-proof --dry-run: OUT=$OUT BUILD=$BUILD JOBS=$JOBS (ctest $CTEST_JOBS, DEFAULT-math gate $GATE_JOBS, memcheck $MEMCHECK_JOBS, racecheck 1) deadline ${DEADLINE_S}s steps: $PROOF_STEPS"
  echo "GPU runners: $GPU_RUNNERS"
  echo "kernels with shared memory: $SHARED_MEM_KERNELS"
  echo "kernels with shared memory that no racecheck run covers: $(u=$(racecheck_uncovered); echo "${u:-none}")"
  echo "GPU runners of the perf matrix (bench defaults, baselines): $PERF_GPU_RUNNERS"
  echo "GPU runners outside it (bench $BENCH_NONPERF_LOOPS, no baselines): $NONPERF_GPU_RUNNERS"
  echo "baselines only on a GPU named like '$EXPECT_GPU' (PROOF_EXPECT_GPU)"
  echo "profile: $PROFILE_RUNNERS, its trace checked by ci/check_trace.py"
  echo "power (only under PROOF_STEPS=power): perf_power $POWER_ARGS --budget <(its cap - 60) / 2, at least cap / 4>"
  pinned=$(for s in $STEPS_CORRECTNESS; do c=$(step_cpus "${s%%:*}"); [ -n "$c" ] && printf '%s %s; ' "${s%%:*}" "$c"; done)
  echo "cores of the correctness steps: ${pinned:-not pinned here (no taskset, this process held to some of the cores, or the split needs $(( CTEST_JOBS + GATE_JOBS + MEMCHECK_JOBS + 1 )) of $(cores) cores)}"
  echo "1. setup: source .devdeps/unpack.sh; preflight (a git checkout of this tree); find nvcc, compute-sanitizer, CUPTI"
  echo "2. step env (cap $ENV_CAP s), step build (cap $BUILD_CAP s: the rest runs only if it passes), step device (cap $DEVICE_CAP s: does the build see the GPU)"
  echo "3. at once, nothing timed: $STEPS_CORRECTNESS (name:cap s)"
  echo "4. one after another, nothing else on the GPU: $STEPS_TIMING (those of PROOF_STEPS)"
  echo "5. pack: logs.tar.gz (again after each step), summary.txt beside the results"
  for f in preflight gpu_is_expected step_build step_device skip_is_allowed step_ctest step_ctest_resources memcheck_one step_memcheck \
           racecheck_uncovered step_racecheck step_default_math_gate bench_runners step_bench step_profile step_cublas_math \
           step_pytorch baselines_missing step_baselines step_power; do
    declare -f "$f"
  done
  exit 0
fi

# ---------------------------------------------------------------------------
# Setup on the lent machine.
if ! mkdir -p "$OUT" 2>/dev/null || [ ! -d "$OUT" ] || [ ! -w "$OUT" ]; then
  echo "gpu-proof: OUT='$OUT' is not a folder that can be written" >&2
  exit 2
fi
rm -rf "$LOGS" "$SUMMARY" "$OUT/logs.tar.gz" "$OUT/baselines"
mkdir -p "$LOGS" || { echo "gpu-proof: cannot make the log folder $LOGS" >&2; exit 2; }
if [ -f .devdeps/unpack.sh ]; then
  # shellcheck disable=SC1091
  set +u; source .devdeps/unpack.sh > "$LOGS/unpack.log" 2>&1; set -u
else
  echo "gpu-proof: note: no .devdeps here (../shared/device/pack-deps.sh makes it): using system packages"
fi
preflight || exit 2
find_tools
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
  echo "gpu-proof: FAIL: no nvcc on this machine: the GPU runners cannot be built" >&2
  exit 1
fi
GENERATOR=Ninja
command -v ninja >/dev/null 2>&1 || GENERATOR="Unix Makefiles"
export GENERATOR

# The logs into $OUT as one file: the device brings back 8 files at most, and
# from a call it kills, what $OUT holds then.
pack_logs() {
  tar -czf "$OUT/logs.tar.gz.part" -C "${LOGS%/logs}" logs 2>/dev/null
  # 1: a log grew while tar read it (steps still run): good up to there
  if (( $? <= 1 )); then mv -f "$OUT/logs.tar.gz.part" "$OUT/logs.tar.gz"; else rm -f "$OUT/logs.tar.gz.part"; fi
}

# run_step NAME CAP [CPUS]: step_NAME under timeout, cut to what is left of
# the deadline, on the cores CPUS (taskset) where given. timeout leads a
# process group of its own: what a cut step leaves behind is killed with it.
run_step() {
  local name=$1 cap=$2 cpus=${3:-} left=$(( DEADLINE_S - SECONDS )) t0=$SECONDS rc tpid pin=()
  case " $PROOF_STEPS env build device " in *" $name "*) ;; *) return 0 ;; esac
  (( cap > left )) && cap=$left
  if (( cap < 10 )); then
    echo "$name: NOT RUN (out of time, ${SECONDS}s of ${DEADLINE_S}s used)" >> "$SUMMARY"
    return 1
  fi
  case $name in memcheck | racecheck)
    if [ -z "$SANITIZER" ]; then
      echo "$name: FAIL (compute-sanitizer not found)" >> "$SUMMARY"
      return 1
    fi ;;
  esac
  [ -n "$cpus" ] && pin=(taskset -c "$cpus")
  STEP_CAP=$cap "${pin[@]}" timeout -k 10 "$cap" bash -o pipefail -c "step_$name" > "$LOGS/$name.log" 2>&1 &
  tpid=$!
  wait "$tpid"
  rc=$?
  kill -KILL -- "-$tpid" 2>/dev/null
  local what="ok"
  (( rc == 124 || rc == 137 )) && what="FAIL (cut at ${cap}s)"
  (( rc != 0 && rc != 124 && rc != 137 )) && what="FAIL (exit $rc)"
  echo "$name: $what, $(( SECONDS - t0 ))s${cpus:+ on cores $cpus}; last line: $(tail -1 "$LOGS/$name.log")" >> "$SUMMARY"
  return $(( rc != 0 ))
}
export STEP_CAP=0

echo "gpu-proof: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD), steps: $PROOF_STEPS, GPU: $(gpu_model)" > "$SUMMARY"
run_step env "$ENV_CAP"
pack_logs
if run_step build "$BUILD_CAP"; then
  run_step device "$DEVICE_CAP"
  pack_logs
  for s in $STEPS_CORRECTNESS; do run_step "${s%%:*}" "${s##*:}" "$(step_cpus "${s%%:*}")" & done
  # correctness steps share the GPU; no timing runs beside them
  polls=0
  while [ -n "$(jobs -rp)" ]; do sleep 1; (( ++polls % 15 )) || pack_logs; done
  wait
  pack_logs
  for s in $STEPS_TIMING; do run_step "${s%%:*}" "${s##*:}"; pack_logs; done
fi

# Pack: at most 8 files come back from the device (here 6 at most).
cp "$BASELINE_DIR"/*.json "$OUT/baselines/" 2>/dev/null
rmdir "$OUT/baselines" 2>/dev/null # none written
failed=$(grep -c -E ': (FAIL|NOT RUN)' "$SUMMARY")
echo "gpu-proof: $failed step(s) failed; ${SECONDS}s" >> "$SUMMARY"
pack_logs
cat "$SUMMARY"
ls -la "$OUT" "$OUT/baselines" 2>/dev/null
[ "$failed" -eq 0 ]
