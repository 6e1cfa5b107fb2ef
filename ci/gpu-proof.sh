#!/usr/bin/env bash
# The GPU proof (issue 11) in one device call: build, every GPU test with
# no GPU skip allowed, compute-sanitizer, the default-shape benchmark of
# every GPU runner, cuBLAS PEDANTIC vs DEFAULT, PyTorch's own nn.LSTM
# beside it, and the H100 baselines. Everything lands in $OUT in at most
# six files. How to run it: docs/gpu-proof.md.
#
#   bash ci/gpu-proof.sh              on the lent GPU machine, from the project root
#   bash ci/gpu-proof.sh --dry-run    prints every step and its commands; runs nothing
#   bash ci/gpu-proof.sh --check-gpu  only the first check: exit 0 with a GPU, else 2
#
# Environment: OUT (where results go; default ./proof-out), PROOF_BUILD_DIR
# (default /tmp/lstmcheck-proof), PROOF_DEADLINE_S (default 540: every step
# is cut to what is left of it, so the call ends inside the device's 10
# minutes with its logs), PROOF_JOBS (default: the number of cores),
# PROOF_STEPS (default: all; e.g. "baselines" for a second call that only
# finishes what the deadline cut; build always runs).
set -uo pipefail # no -e: a failed step is recorded and the next one runs

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
mode=${1:-run}
case "$mode" in
  run | --dry-run | --check-gpu) ;;
  *) echo "usage: bash ci/gpu-proof.sh [--dry-run | --check-gpu]" >&2; exit 2 ;;
esac

export OUT=${OUT:-$root/proof-out}
export BUILD=${PROOF_BUILD_DIR:-/tmp/lstmcheck-proof}
export JOBS=${PROOF_JOBS:-$(nproc)}
DEADLINE_S=${PROOF_DEADLINE_S:-540}
PROOF_STEPS=${PROOF_STEPS:-all}
export LOGS=$OUT/logs
export SUMMARY=$OUT/summary.txt

# The GPU runners: the cuda lines of the roster, src/runners/runners.def.
GPU_RUNNERS=$(sed -n 's/^LSTM_RUNNER(\([a-z0-9_]*\), *cuda,.*/\1/p' src/runners/runners.def | tr '\n' ' ')
export GPU_RUNNERS
# Our kernels that use shared memory: the __global__ function around each
# __shared__ (racecheck and synccheck look at these).
SHARED_MEM_KERNELS=$(awk '/__global__/ { if (match($0, /[A-Za-z_0-9]+\(/)) k = substr($0, RSTART, RLENGTH - 1) }
                          /__shared__/ { print k }' kernels/*.cu | sort -u | tr '\n' ' ')
export SHARED_MEM_KERNELS

# ---------------------------------------------------------------------------
# The first check: a GPU must be here.
gpu_present() {
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then return 0; fi
  [ -e /dev/nvidiactl ]
}
if [ "$mode" = --check-gpu ] || [ "$mode" = run ]; then
  if ! gpu_present; then
    echo "gpu-proof: FAIL: no GPU on this machine (nvidia-smi -L fails, /dev/nvidiactl absent): run it on the lent GPU machine (docs/gpu-proof.md)" >&2
    exit 2
  fi
  [ "$mode" = --check-gpu ] && { echo "gpu-proof: a GPU is here"; exit 0; }
fi

# ---------------------------------------------------------------------------
# The steps. Each is a function run under `timeout` with its output in
# $LOGS/<step>.log; its result is one line of $SUMMARY.

step_env() {
  nvidia-smi || true
  echo "nvcc: $NVCC"; "$NVCC" --version
  echo "compute-sanitizer: ${SANITIZER:-not found}"
  echo "cmake: $(cmake --version | head -1); generator: $GENERATOR; jobs: $JOBS"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' || true
  echo "GPU runners: $GPU_RUNNERS"
  echo "kernels with shared memory: $SHARED_MEM_KERNELS"
}

step_build() {
  cmake -S . -B "$BUILD" -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$NVCC" $CUPTI_HINTS || return 1
  cmake --build "$BUILD" -j"$JOBS" || return 1
  # a build without nvcc would quietly have no GPU runners
  local built
  built=$("$BUILD/lstmcheck" list --names --device cuda | tr '\n' ' ')
  for r in $GPU_RUNNERS; do
    case " $built " in *" $r "*) ;; *) echo "GPU runner $r was not built"; return 1 ;; esac
  done
  local listed
  listed=$("$BUILD/lstmcheck" list)
  echo "$listed"
  case $listed in *"device: none"*) echo "the build sees no CUDA device"; return 1 ;; esac
  return 0
}

# With LSTMCHECK_REQUIRE_GPU=1 a GPU runner's numerics test skips only when
# every case of its group lies outside the runner's declared caps (layers,
# variable lengths): numerics_test fails any other skip. So the skips
# allowed are those, and the test that this script refuses to run without
# a GPU; any other skip (a GPU unit test, the isolation test) is a failure.
allowed_skip() {
  local t=$1 r
  [ "$t" = unit.gpu_proof_refuses_without_gpu ] && return 0
  for r in $GPU_RUNNERS; do
    case $t in numerics."$r".*) return 0 ;; esac
  done
  return 1
}

step_ctest() {
  (cd "$BUILD" && LSTMCHECK_REQUIRE_GPU=1 ctest -L "unit|numerics" -j"$(( JOBS / 2 > 1 ? JOBS / 2 : 1 ))" \
     --output-on-failure) | tee "$LOGS/ctest.out"
  local rc=${PIPESTATUS[0]} bad="" t
  for t in $(grep -o '[0-9]* - [^ ]* (Skipped)' "$LOGS/ctest.out" | awk '{print $3}'); do
    allowed_skip "$t" || bad="$bad $t"
  done
  [ -n "$bad" ] && { echo "skipped, but a GPU is here:$bad"; return 1; }
  echo "skips (outside the runners' caps only): $(grep -c '(Skipped)' "$LOGS/ctest.out")"
  return "$rc"
}

# One numerics group of every GPU runner under memcheck: basic, or varlen
# for the variable-length runners.
step_memcheck() {
  for r in $GPU_RUNNERS; do
    case $r in vl_*) echo "$r varlen" ;; *) echo "$r basic" ;; esac
  done | LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 xargs -P 4 -L 1 sh -c \
    '"$SANITIZER" --tool memcheck --error-exitcode 99 "$BUILD/tests/numerics/numerics_test" "$0" "$1" \
       > "$LOGS/memcheck.$0.log" 2>&1; rc=$?; echo "memcheck $0 $1: exit $rc"; exit $((rc != 0))'
}

# racecheck and synccheck on our shared-memory kernels: the one-chunk path
# (jit: per-step reductions over B rows) and the multi-chunk path
# (jit_wgrad_all large: reductions over T*B > 256 rows).
step_racecheck() {
  local filter="" rc=0 k out
  if "$SANITIZER" --help 2>&1 | grep -q -- '--kernel-name'; then
    for k in $SHARED_MEM_KERNELS; do filter="$filter --kernel-name kns=$k"; done
  fi
  out=$(mktemp)
  for tool in racecheck synccheck; do
    for rg in "jit basic" "jit_wgrad_all large"; do
      echo "== $tool $rg (filter:${filter:- none})"
      # shellcheck disable=SC2086
      LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 "$SANITIZER" --tool $tool --error-exitcode 99 $filter \
        "$BUILD/tests/numerics/numerics_test" $rg > "$out" 2>&1
      k=$?
      cat "$out"
      if (( k != 0 )) && [ -n "$filter" ] && grep -qiE 'unrecogni[sz]ed|invalid (option|value)|unknown option' "$out"; then
        echo "== the kernel filter was refused: $tool $rg on every kernel"
        # shellcheck disable=SC2086
        LSTMCHECK_REQUIRE_GPU=1 LSTMCHECK_ISOLATE=0 "$SANITIZER" --tool $tool --error-exitcode 99 \
          "$BUILD/tests/numerics/numerics_test" $rg
        k=$?
      fi
      (( k != 0 )) && rc=1
    done
  done
  rm -f "$out"
  return $rc
}

# The gate under CUBLAS_DEFAULT_MATH: is PEDANTIC needed for it? (issue 11, 4)
step_default_math_gate() {
  local runners
  # the cuBLAS runners: the rows of kernels/runner_cublas.cu
  runners=$(sed -n 's/^LC_CUBLAS_RUNNER(runner_\([a-z0-9_]*\)_ops,.*/\1/p' kernels/runner_cublas.cu)
  for r in $runners vl_jit; do
    for g in basic large seeds; do echo "$r $g"; done
  done | LSTMCHECK_CUBLAS_MATH=default LSTMCHECK_REQUIRE_GPU=1 xargs -P 8 -L 1 sh -c \
    'out=$("$BUILD/tests/numerics/numerics_test" "$0" "$1" 2>&1); rc=$?; echo "$out" | tail -1; exit $((rc != 0 && rc != 77))'
}

step_bench() {
  # shellcheck disable=SC2086
  "$BUILD/lstmcheck" bench --device cuda --rnns $GPU_RUNNERS --print-json full > "$OUT/bench_full.json"
}

step_cublas_math() {
  "$BUILD/tests/perf/cublas_math" | tee "$OUT/cublas_math.txt"
}

step_pytorch() {
  python3 ci/pytorch_lstm.py --out "$OUT/pytorch.json"
}

# One runner at a time: a runner that fails numerics records nothing, and
# must not stop the others; each run adds its entries to the same file.
step_baselines() {
  local rc=0 r_rc
  for r in $GPU_RUNNERS; do
    echo "== $r $(date +%T)"
    "$BUILD/lstmcheck" baseline update --device cuda --rnns "$r" --baseline-dir "$OUT/baselines"
    r_rc=$?
    # 3: nothing measured, e.g. cuDNN refusing the persistent algorithm at this shape
    (( r_rc != 0 && r_rc != 3 )) && rc=1
  done
  ls "$OUT"/baselines/*.json || { echo "no baseline file written"; return 1; }
  return $rc
}

export -f step_env step_build allowed_skip step_ctest step_memcheck step_racecheck \
  step_default_math_gate step_bench step_cublas_math step_pytorch step_baselines

STEPS_CORRECTNESS="ctest:300 memcheck:300 racecheck:180 default_math_gate:180"
STEPS_TIMING="bench:150 cublas_math:60 pytorch:120 baselines:600"

if [ "$mode" = --dry-run ]; then
  echo "gpu-proof --dry-run: OUT=$OUT BUILD=$BUILD JOBS=$JOBS deadline ${DEADLINE_S}s steps: $PROOF_STEPS"
  echo "GPU runners: $GPU_RUNNERS"
  echo "kernels with shared memory: $SHARED_MEM_KERNELS"
  echo "1. setup: source .devdeps/unpack.sh; find nvcc, compute-sanitizer, CUPTI"
  echo "2. step env, then step build (cap 300 s)"
  echo "3. at once: $STEPS_CORRECTNESS (name:cap s)"
  echo "4. one after another, nothing else on the GPU: $STEPS_TIMING"
  echo "5. pack: logs.tar.gz, summary.txt beside the results"
  for f in step_build step_ctest step_memcheck step_racecheck step_default_math_gate step_bench \
           step_cublas_math step_pytorch step_baselines; do
    declare -f "$f"
  done
  exit 0
fi

# ---------------------------------------------------------------------------
# Setup on the lent machine.
rm -rf "$OUT/logs" "$SUMMARY"
mkdir -p "$LOGS" "$OUT/baselines"
if [ -f .devdeps/unpack.sh ]; then
  # shellcheck disable=SC1091
  set +u; source .devdeps/unpack.sh > "$LOGS/unpack.log" 2>&1; set -u
else
  echo "gpu-proof: note: no .devdeps here (../shared/device/pack-deps.sh makes it): using system packages"
fi
# nvcc and CUPTI: the toolkit, else the Python wheels (nvidia-cuda-nvcc, -cupti)
wheel_dir() { python3 -c "import nvidia.$1 as m; print(list(m.__path__)[0])" 2>/dev/null; }
NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
[ -z "$NVCC" ] && [ -n "$(wheel_dir cuda_nvcc)" ] && NVCC=$(wheel_dir cuda_nvcc)/bin/nvcc
if [ -z "$NVCC" ] || [ ! -x "$NVCC" ]; then
  echo "gpu-proof: FAIL: no nvcc on this machine: the GPU runners cannot be built" >&2
  exit 1
fi
export NVCC
CUPTI_HINTS=""
cupti=$(wheel_dir cuda_cupti)
if [ ! -e /usr/local/cuda/extras/CUPTI/include/cupti.h ] && [ ! -e /usr/local/cuda/include/cupti.h ] && [ -n "$cupti" ]; then
  CUPTI_HINTS="-DLSTMCHECK_CUPTI_INCLUDE_DIR=$cupti/include -DLSTMCHECK_CUPTI_LIBRARY=$(ls "$cupti"/lib/libcupti.so* | head -1)"
fi
export CUPTI_HINTS
SANITIZER=$(command -v compute-sanitizer || true)
for s in "$(dirname "$NVCC")/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer \
         /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$SANITIZER" ] && [ -x "$s" ] && SANITIZER=$s
done
export SANITIZER
GENERATOR=Ninja
command -v ninja >/dev/null 2>&1 || GENERATOR="Unix Makefiles"
export GENERATOR

# run_step NAME CAP: step_NAME under timeout, cut to what is left of the deadline.
run_step() {
  local name=$1 cap=$2 left=$(( DEADLINE_S - SECONDS )) t0=$SECONDS rc
  case " $PROOF_STEPS env build " in *" $name "* | " all "*) ;; *) return 0 ;; esac
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
  timeout -k 10 "$cap" bash -o pipefail -c "step_$name" > "$LOGS/$name.log" 2>&1
  rc=$?
  local what="ok"
  (( rc == 124 || rc == 137 )) && what="FAIL (cut at ${cap}s)"
  (( rc != 0 && rc != 124 && rc != 137 )) && what="FAIL (exit $rc)"
  echo "$name: $what, $(( SECONDS - t0 ))s; last line: $(tail -1 "$LOGS/$name.log")" >> "$SUMMARY"
  return $(( rc != 0 ))
}

echo "gpu-proof: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" > "$SUMMARY"
run_step env 60
if run_step build 300; then
  for s in $STEPS_CORRECTNESS; do run_step "${s%%:*}" "${s##*:}" & done
  wait # correctness steps share the GPU; no timing runs beside them
  for s in $STEPS_TIMING; do run_step "${s%%:*}" "${s##*:}"; done
fi

# Pack: at most 8 files come back from the device.
cp "$BUILD/Testing/Temporary/LastTest.log" "$LOGS/ctest-LastTest.log" 2>/dev/null
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
failed=$(grep -c -E ': (FAIL|NOT RUN)' "$SUMMARY")
echo "gpu-proof: $failed step(s) failed; ${SECONDS}s" >> "$SUMMARY"
cat "$SUMMARY"
ls -la "$OUT" "$OUT/baselines"
[ "$failed" -eq 0 ]
