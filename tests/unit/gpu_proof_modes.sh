#!/usr/bin/env bash
# ci/gpu-proof.sh's checks that need no GPU, each against a made-up machine:
#   gpu_proof_modes.sh ROOT no_git      a copy of the script outside a git checkout refuses (exit 2)
#   gpu_proof_modes.sh ROOT gpu_model   baselines only on the expected GPU (nvidia-smi stubbed)
#   gpu_proof_modes.sh ROOT cu13_wheels nvcc, compute-sanitizer and CUPTI found in CUDA 13 wheels
#   gpu_proof_modes.sh ROOT settings    a typo in a setting is refused (exit 2) before any work
#   gpu_proof_modes.sh ROOT missing_baselines
#                                       a second call measures only the runners without an entry
#                                       of this commit (lstmcheck stubbed)
set -uo pipefail
root=$1 case=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# shellcheck source=fail_fast.sh
source "$(dirname "${BASH_SOURCE[0]}")/fail_fast.sh"
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
  *) echo "usage: gpu_proof_modes.sh ROOT no_git|gpu_model|cu13_wheels|settings|missing_baselines" >&2; exit 2 ;;
esac
echo "PASS: $case"
