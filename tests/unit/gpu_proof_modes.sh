#!/usr/bin/env bash
# ci/gpu-proof.sh's checks that need no GPU, each against a made-up machine:
#   gpu_proof_modes.sh ROOT no_git      a copy of the script outside a git checkout refuses (exit 2)
#   gpu_proof_modes.sh ROOT gpu_model   baselines only on the expected GPU (nvidia-smi stubbed)
#   gpu_proof_modes.sh ROOT cu13_wheels nvcc, compute-sanitizer and CUPTI found in CUDA 13 wheels
set -uo pipefail
root=$1 case=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() { # CODE PATTERN COMMAND...: the command exits CODE and prints PATTERN
  local code=$1 pattern=$2 out rc
  shift 2
  out=$("$@" 2>&1); rc=$?
  echo "$out"
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $*"
  grep -qF -- "$pattern" <<<"$out" || fail "no '$pattern' in the output of: $*"
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
    stub "NVIDIA H200"
    expect 2 "the GPU is 'NVIDIA H200', not the H100" env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --check-gpu-model
    stub "NVIDIA H100 80GB HBM3"
    expect 0 "as expected (H100)" env PATH="$scratch/bin:$PATH" bash "$root/ci/gpu-proof.sh" --check-gpu-model
    expect 2 "not the H200" env PATH="$scratch/bin:$PATH" PROOF_EXPECT_GPU=H200 bash "$root/ci/gpu-proof.sh" --check-gpu-model ;;
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
  *) echo "usage: gpu_proof_modes.sh ROOT no_git|gpu_model|cu13_wheels" >&2; exit 2 ;;
esac
echo "PASS: $case"
