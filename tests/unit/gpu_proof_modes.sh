#!/usr/bin/env bash
# ci/gpu-proof.sh's checks that need no GPU, each against a made-up machine:
#   gpu_proof_modes.sh ROOT no_git      a copy of the script outside a git checkout refuses (exit 2)
#   gpu_proof_modes.sh ROOT gpu_model   baselines only on the expected GPU (nvidia-smi stubbed)
#   gpu_proof_modes.sh ROOT cu13_wheels nvcc, compute-sanitizer and CUPTI found in CUDA 13 wheels
#   gpu_proof_modes.sh ROOT settings    a typo in a setting is refused (exit 2) before any work
#   gpu_proof_modes.sh ROOT core_split  on 16 cores the correctness steps get disjoint cores
#                                       (nproc and taskset stubbed); none where they do not fit
#   gpu_proof_modes.sh ROOT run_baselines
#                                       a whole call of PROOF_STEPS=baselines (cmake, nvcc,
#                                       nvidia-smi and lstmcheck stubbed): what it writes into
#                                       OUT, a cut by the deadline, a cuDNN refusal, another skip
#   gpu_proof_modes.sh ROOT run_power   a whole call of PROOF_STEPS=power (the same stubs and
#                                       perf_power's): its arguments, its summary line, the cut,
#                                       a skip and a false alarm failing it; proof and all leave
#                                       it out
#   gpu_proof_modes.sh ROOT gate_ratios each runner's worst ratio from a made-up JUnit file
#   gpu_proof_modes.sh ROOT missing_baselines
#                                       a second call measures only the runners without an entry
#                                       of this commit (lstmcheck stubbed)
set -uo pipefail
root=$1 case=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=fail_fast.sh
source "$(dirname "${BASH_SOURCE[0]}")/fail_fast.sh"
# A lent machine made up: cmake, nvcc and nvidia-smi stubbed, and a build
# whose lstmcheck answers list, baseline show (no entries) and baseline
# update as STUB_UPDATE says.
stub_machine() {
  mkdir -p "$scratch/bin" "$scratch/build"
  printf '#!/bin/sh\nexit 0\n' > "$scratch/bin/cmake"
  printf '#!/bin/sh\necho "nvcc stand-in"\n' > "$scratch/bin/nvcc"
  printf '#!/bin/sh\ncase "$*" in *query-gpu=name*) echo "NVIDIA ${STUB_GPU:-H200}" ;; *) echo "GPU 0: NVIDIA H200" ;; esac\n' \
    > "$scratch/bin/nvidia-smi"
  runners=$(sed -n 's/^LSTM_RUNNER(\([a-z0-9_]*\), *cuda,.*/\1/p' "$root/src/runners/runners.def" | tr '\n' ' ')
  # lstmcheck: list, baseline show (no entries) and baseline update as STUB_UPDATE says
  cat > "$scratch/build/lstmcheck" <<STUB
#!/bin/bash
case "\$1 \$2" in
  "list --names") printf '%s\n' $runners ;;
  "list ") [ -n "\$STUB_NO_DEVICE" ] && echo "CUDA in this build: yes; no CUDA device: stand-in" ||
           echo "CUDA in this build: yes; device: NVIDIA H200 (stand-in)" ;;
  "baseline show") echo '{"error": "no baseline"}'; exit 3 ;;
  "baseline update")
    dir=\$(sed 's/.*--baseline-dir \([^ ]*\).*/\1/' <<<"\$*")
    echo "\$*" >> "$scratch/update-calls"
    echo '{"entries": []}' > "\$dir/cuda-nvidia-h200.json"
    case \$STUB_UPDATE in
      slow) sleep 200 ;;
      refusal) echo "SKIP cudnn_persist s20-l1-i128-h128-b16: cuDNN refuses this configuration: x.cu:1: CUDNN_STATUS_NOT_SUPPORTED"; exit 3 ;;
      otherskip) echo "SKIP jit s20-l1-i128-h128-b16: no CUDA device"; exit 3 ;;
    esac ;;
esac
STUB
  chmod +x "$scratch/bin/"* "$scratch/build/lstmcheck"
}
case $case in
  no_git)
    mkdir -p "$scratch/tree/ci" "$scratch/tree/src/runners"
    cp "$root/ci/gpu-proof.sh" "$scratch/tree/ci/"
    cp "$root/src/runners/runners.def" "$scratch/tree/src/runners/"
    expect 2 "is not a git checkout" bash "$scratch/tree/ci/gpu-proof.sh" --preflight ;;
  gpu_model)
    mkdir -p "$scratch/bin"
    stub() { printf '#!/bin/sh\necho "%s"\n' "$1" > "$scratch/bin/nvidia-smi"; chmod +x "$scratch/bin/nvidia-smi"; }
    # the device tool lends H200s: by default the baselines are an H200's
    stub "NVIDIA H100 80GB HBM3"
    expect 2 "the GPU is 'NVIDIA H100 80GB HBM3', not the H200" env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --check-gpu-model
    expect 0 "as expected (H100)" env PATH="$scratch/bin:$PATH" PROOF_EXPECT_GPU=H100 bash "$root/ci/gpu-proof.sh" --check-gpu-model
    stub "NVIDIA H200"
    expect 0 "as expected (H200)" env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --check-gpu-model
    expect 2 "not the H100" env PATH="$scratch/bin:$PATH" PROOF_EXPECT_GPU=H100 bash "$root/ci/gpu-proof.sh" --check-gpu-model ;;
  cu13_wheels)
    command -v python3 >/dev/null || { echo "SKIP: no python3 here"; exit 77; }
    w=$scratch/site/nvidia/cu13
    mkdir -p "$w/bin" "$w/include" "$w/lib"
    touch "$w/include/cupti.h" "$w/lib/libcupti.so.13"
    printf '#!/bin/sh\n' > "$w/bin/nvcc"; cp "$w/bin/nvcc" "$w/bin/compute-sanitizer"; chmod +x "$w/bin/"*
    out=$(PYTHONPATH="$scratch/site" bash "$root/ci/gpu-proof.sh" --find-tools); echo "$out"
    grep -qF "(wheel: $w/bin/nvcc)" <<<"$out" || fail "nvcc of the cu13 wheel not found"
    grep -qF "(wheel: $w/bin/compute-sanitizer)" <<<"$out" || fail "compute-sanitizer of the cu13 wheel not found"
    grep -qF "CUPTI from a wheel: $w/include/cupti.h $w/lib/libcupti.so.13" <<<"$out" || fail "CUPTI of the cu13 wheel not found" ;;
  settings)
    proof=$root/ci/gpu-proof.sh
    expect 2 "unknown step 'memchek'" env PROOF_STEPS=memchek bash "$proof" --dry-run
    expect 2 "PROOF_STEPS is empty" env PROOF_STEPS=' ' bash "$proof" --dry-run
    expect 2 "must be whole seconds in 60..600, not '60s'" env PROOF_DEADLINE_S=60s bash "$proof" --dry-run
    expect 2 "not '1)'" env PROOF_DEADLINE_S='1)' bash "$proof" --dry-run
    expect 2 "PROOF_JOBS must be" env PROOF_JOBS=0 bash "$proof" --dry-run
    expect 2 "PROOF_EXPECT_GPU is blank" env PROOF_EXPECT_GPU=' ' bash "$proof" --check-gpu-model
    expect 2 "one mode at most" bash "$proof" --preflight extra
    # OUT is checked right after the GPU check, before anything is built (a stub answers it)
    mkdir -p "$scratch/bin"
    printf '#!/bin/sh\necho "NVIDIA H200"\n' > "$scratch/bin/nvidia-smi"; chmod +x "$scratch/bin/nvidia-smi"
    echo keep > "$scratch/out-file"
    expect 2 "is not a folder that can be written" env PATH="$scratch/bin:$PATH" OUT="$scratch/out-file" bash "$proof"
    [ "$(cat "$scratch/out-file")" = keep ] || fail "OUT's file was changed" ;;
  core_split)
    mkdir -p "$scratch/bin"
    printf '#!/bin/sh\necho 16\n' > "$scratch/bin/nproc"
    printf '#!/bin/sh\necho "pid $2'"'"'s current affinity list: 0-15"\n' > "$scratch/bin/taskset"
    chmod +x "$scratch/bin/"*
    # an image's OMP_NUM_THREADS must not shrink the split
    expect 0 "(ctest 8, DEFAULT-math gate 4, memcheck 3, racecheck 1)" \
      env PATH="$scratch/bin:$PATH" OMP_NUM_THREADS=1 bash "$root/ci/gpu-proof.sh" --dry-run
    expect 0 "cores of the correctness steps: ctest 0-7; memcheck 12-14; racecheck 15; default_math_gate 8-11; " \
      env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --dry-run
    # more jobs than cores: no pinning
    expect 0 "or the split needs 17 of 16 cores)" \
      env PATH="$scratch/bin:$PATH" PROOF_JOBS=17 bash "$root/ci/gpu-proof.sh" --dry-run
    # this process confined to some cores: no pinning
    printf '#!/bin/sh\necho "pid $2'"'"'s current affinity list: 0-3"\n' > "$scratch/bin/taskset"
    expect 0 "not pinned here" env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --dry-run ;;
  run_baselines)
    command -v python3 >/dev/null || { echo "SKIP: no python3 here"; exit 77; }
    git -C "$root" rev-parse HEAD >/dev/null 2>&1 || { echo "SKIP: $root is not a git checkout"; exit 77; }
    stub_machine
    call() { # STUB_UPDATE DEADLINE: one call into a fresh OUT
      rm -rf "$scratch/out" "$scratch/update-calls"
      env PATH="$scratch/bin:$PATH" STUB_UPDATE="$1" OUT="$scratch/out" PROOF_BUILD_DIR="$scratch/build" \
        PROOF_STEPS=baselines PROOF_DEADLINE_S="$2" bash "$root/ci/gpu-proof.sh"
    }
    expect 0 "baselines: ok" call ok 60
    grep -q '^device: ok' "$scratch/out/summary.txt" || fail "no device line"
    grep -q -E '^(ctest|bench):' "$scratch/out/summary.txt" && fail "a step outside PROOF_STEPS ran"
    [ "$(find "$scratch/out" -type f | wc -l)" -le 8 ] || fail "more than 8 files in OUT: $(find "$scratch/out")"
    [ -f "$scratch/out/baselines/cuda-nvidia-h200.json" ] || fail "the baseline file did not reach OUT"
    tar -tzf "$scratch/out/logs.tar.gz" | grep -q '^logs/baselines.log$' || fail "no baselines.log in logs.tar.gz"
    grep -q -- "--rnns cudnn aten .* --shape-set small --keep-going" "$scratch/update-calls" ||
      fail "update not called for the small set with every runner, going on past a failing one"
    # the device unseen: said, and the steps still run; another GPU: no baselines
    STUB_NO_DEVICE=1 expect 1 "device: FAIL" call ok 60
    grep -q '^baselines: ok' "$scratch/out/summary.txt" || fail "the steps did not run past an unseen device"
    STUB_GPU=H100 expect 1 "not the H200 the proof expects" call ok 60
    [ -e "$scratch/out/baselines" ] && fail "baselines written on another GPU"
    # a cut: the call ends at its deadline, and what was measured is in OUT
    t0=$SECONDS
    expect 1 "baselines: FAIL (cut at" call slow 60
    (( SECONDS - t0 < 80 )) || fail "the call took $(( SECONDS - t0 ))s with a 60 s deadline"
    [ -f "$scratch/out/baselines/cuda-nvidia-h200.json" ] || fail "the cut call lost what it measured"
    expect 0 "baselines: ok" call refusal 60
    tar -xzOf "$scratch/out/logs.tar.gz" logs/baselines.log | grep -q "nothing recorded in default but cuDNN refusals" ||
      fail "a cuDNN refusal alone not said to be one"
    expect 1 "baselines: FAIL (exit 1)" call otherskip 60 ;;
  run_power)
    git -C "$root" rev-parse HEAD >/dev/null 2>&1 || { echo "SKIP: $root is not a git checkout"; exit 77; }
    stub_machine
    # perf_power: its arguments kept, its answer as STUB_POWER says
    mkdir -p "$scratch/build/tests/perf"
    cat > "$scratch/build/tests/perf/perf_power" <<STUB
#!/bin/sh
echo "\$*" > "$scratch/power-args"
case \$STUB_POWER in
  ok) echo "slowdown  trials  SLOWER    SAME  FASTER INCONCLUSIVE  median change   mean samples  min effect   s/trial"
      echo "    0.0%      20       0      20       0            0          +0.1%           60.0        3.0%       0.5"
      echo "  -> resolution R = 1.5% (minimum effect + half the interval, median of these trials)"
      echo "    3.0%      17      17       0       0            0          +3.1%           60.0        3.0%       0.5"
      echo "elapsed 9 s" ;;
  noisy) echo "  -> resolution R = 30.0% (minimum effect + half the interval, median of these trials)"
         echo "SKIP: power not judged on this host now: no level reached 2R = 60.0% (at most 50% is planted); measured resolution R = 30.0%"
         exit 77 ;;
  alarm) echo "  -> FALSE ALARM: unchanged code was called SLOWER"; exit 1 ;;
esac
STUB
    chmod +x "$scratch/build/tests/perf/perf_power"
    call() { # STUB_POWER STEPS DEADLINE: one call into a fresh OUT
      rm -rf "$scratch/out" "$scratch/power-args"
      env PATH="$scratch/bin:$PATH" STUB_POWER="$1" OUT="$scratch/out" PROOF_BUILD_DIR="$scratch/build" \
        PROOF_STEPS="$2" PROOF_DEADLINE_S="$3" bash "$root/ci/gpu-proof.sh"
    }
    expect 0 "power: ok" call ok power 600
    grep -q "^power: ok, .*last line: power: exit 0, resolution R 1.5%, trials per level 0.0% 20, 3.0% 17$" \
      "$scratch/out/summary.txt" ||
      fail "the summary's power line: $(grep '^power' "$scratch/out/summary.txt")"
    grep -qx -- "--device cuda --trials 20 --levels 0,auto,5 --budget 90" "$scratch/power-args" ||
      fail "perf_power not asked for cuda within (240 s - 60) / 2: $(cat "$scratch/power-args")"
    # cut to the deadline's rest, the budget with it
    expect 0 "power: ok" call ok power 60
    budget=$(sed 's/.*--budget //' "$scratch/power-args")
    (( budget > 0 && budget < 30 )) || fail "a budget of $budget s under a 60 s deadline (0 would be none)"
    expect 1 "power: FAIL (exit 77)" call noisy power 600
    grep -q "^power: FAIL (exit 77), .*last line: power: exit 77, resolution R 30.0%, trials per level none$" \
      "$scratch/out/summary.txt" ||
      fail "the summary's power line after a skip: $(grep '^power' "$scratch/out/summary.txt")"
    tar -xzOf "$scratch/out/logs.tar.gz" logs/power.log | grep -q "not judged on this GPU" || fail "a skip not said in the log"
    expect 1 "power: FAIL (exit 1)" call alarm power 600
    # the proof leaves it out, and so does all: run last, it would get no time
    for steps in proof all; do
      got=$(PROOF_STEPS=$steps bash "$root/ci/gpu-proof.sh" --dry-run | head -1)
      [[ $got == *" cublas_math baselines" ]] || fail "$steps' steps: $got"
    done ;;
  gate_ratios)
    command -v python3 >/dev/null || { echo "SKIP: no python3 here"; exit 77; }
    cat > "$scratch/junit.xml" <<'XML'
<testsuite><testcase name="numerics.jit.basic"><system-out>T=1 B=4: PASS jit: worst ratio 0.9 in a case line
jit/basic: 5 passed, 0 failed, 0 skipped (0 refused by its library), 0 outside the runner's caps; worst ratio 0.107
</system-out></testcase>
<testcase name="numerics.jit.seeds"><system-out>jit/seeds: 20 passed, 0 failed, 0 skipped (0 refused by its library), 0 outside the runner's caps; worst ratio 0.31
</system-out></testcase>
<testcase name="numerics.cudnn_persist.basic"><system-out>cudnn_persist/basic: 0 passed, 0 failed, 5 skipped (5 refused by its library), 0 outside the runner's caps; worst ratio -
</system-out></testcase>
<testcase name="numerics.torch_lstm.basic"><system-out>torch:lstm/basic: 5 passed, 0 failed, 0 skipped (0 refused by its library), 0 outside the runner's caps; worst ratio 2.5e-02
</system-out></testcase></testsuite>
XML
    out=$(bash "$root/ci/gpu-proof.sh" --gate-ratios "$scratch/junit.xml"); echo "$out"
    grep -qE '^jit +worst ratio 0.31 \(seeds\)$' <<<"$out" || fail "jit's worst is seeds' 0.31"
    grep -qE '^torch:lstm +worst ratio 0.025 \(basic\)$' <<<"$out" || fail "a plugin runner's ratio"
    grep -q cudnn_persist <<<"$out" && fail "a group with no ratio listed"
    expect 2 "takes CTest's JUnit file" bash "$root/ci/gpu-proof.sh" --gate-ratios "$scratch/none.xml" ;;
  missing_baselines)
    command -v python3 >/dev/null || { echo "SKIP: no python3 here"; exit 77; }
    head=$(git -C "$root" rev-parse HEAD 2>/dev/null) || { echo "SKIP: $root is not a git checkout"; exit 77; }
    # what `baseline show --json` prints: cudnn and jit recorded at this commit,
    # aten at another; nothing for another shape set
    mkdir -p "$scratch/build"
    cat > "$scratch/build/lstmcheck" <<STUB
#!/bin/sh
case "\$*" in
  "baseline show --device cuda --shape-set small "*)
    echo '{"entries": [{"runner": "cudnn", "git_commit": "$head"}, {"runner": "aten", "git_commit": "0123"},
                       {"runner": "jit", "git_commit": "$head"}]}' ;;
  *) echo '{"error": "no baseline"}'; exit 3 ;;
esac
STUB
    chmod +x "$scratch/build/lstmcheck"
    out=$(PROOF_BUILD_DIR="$scratch/build" bash "$root/ci/gpu-proof.sh" --missing-baselines small); echo "small: $out"
    [[ " $out " == *" aten "* && " $out " == *" jit_premul "* ]] || fail "aten (another commit) or jit_premul (none) not missing"
    [[ " $out " != *" cudnn "* && " $out " != *" jit "* ]] || fail "a runner with an entry of this commit listed as missing"
    all=$(PROOF_BUILD_DIR="$scratch/build" bash "$root/ci/gpu-proof.sh" --missing-baselines default); echo "default: $all"
    [ "$(wc -w <<<"$all")" -ge 17 ] || fail "without entries every runner of the perf matrix is missing" ;;
  *) echo "usage: gpu_proof_modes.sh ROOT no_git|gpu_model|cu13_wheels|settings|core_split|run_baselines|run_power|gate_ratios|missing_baselines" >&2; exit 2 ;;
esac
echo "PASS: $case"
