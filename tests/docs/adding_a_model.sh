#!/usr/bin/env bash
# Follows docs/adding-a-model.md for a trivial model "dropout_half" (nn.LSTM
# with dropout p = 0.5: the dropout model's tensors, another constant) in a
# scratch copy of the source tree: a line of models.def, an ABI number, a
# descriptor, a cpu runner table, a roster line and a numerics group.
#   adding_a_model.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1
work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
# what the build reads, as it is now (uncommitted changes included)
cp -r "$src/CMakeLists.txt" "$src/cmake" "$src/include" "$src/src" "$src/kernels" "$src/tests" "$work/"

# Step 1: the model's line, appended (the ABI numbers models in this order)
echo 'LSTM_MODEL(DROPOUT_HALF, dropout_half)' >> "$work/src/model/models.def"

# Step 2: its number in the runner ABI, appended to the model enum (an
# addition: the ABI version stays); it has no tensors of its own beyond the
# dropout model's mask, so no new slot
sed -i 's|^    LSTMCHECK_MODEL_LAYERNORM = 2,$|&\n    /* nn.LSTM(dropout=0.5): LSTMCHECK_MODEL_DROPOUT with p = 0.5 (kept elements x 2) */\n    LSTMCHECK_MODEL_DROPOUT_HALF = 3,|' \
  "$work/include/lstmcheck/runner.h"
grep -q '^    LSTMCHECK_MODEL_DROPOUT_HALF = 3,$' "$work/include/lstmcheck/runner.h" ||
  fail "include/lstmcheck/runner.h: no line 'LSTMCHECK_MODEL_LAYERNORM = 2,' to append the new model after"

# Step 3: its descriptor, at the end of model.c's models[] table: the
# dropout model's tensors (the mask on the same stream), p = 0.5
python3 - "$work/src/model/model.c" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
start = text.find("static const lstm_model models[MODEL_COUNT] = {")
end = text.find("\n};\n", start)
if start < 0 or end < 0:
    sys.exit("FAIL: src/model/model.c has no models[] table")
entry = """
    [MODEL_DROPOUT_HALF] = {
        .id = MODEL_DROPOUT_HALF, .name = "dropout_half",
        .summary = "nn.LSTM(dropout=0.5): a drawn mask on every layer's output but the last",
        .ntensors = 5,
        .tensors = {LSTM_PARAMETERS,
                    {.name = "dropout_mask", .below_top = 1, .dims = {DIM_T, DIM_B, DIM_H},
                     .stream = INPUT_DROPOUT_MASK, .draw = DRAW_DROPOUT_MASK,
                     .input_at = offsetof(lstm_problem, model_inputs[LSTMCHECK_DROPOUT_MASK])}},
        .nsaved = 3, .saved = {LSTM_SAVED},
        .dropout = 0.5,
    },"""
open(path, "w").write(text[:end] + entry + text[end:])
PY

# Step 4: its reference: nothing (src/model/reference.c masks for any model
# whose descriptor has dropout > 0)

# Step 5: a runner of it: the cpu runner's table under the new model, at the
# end of runner_cpu.c (its functions are static there), and its roster line
cat >> "$work/src/runners/runner_cpu.c" <<'C'

const runner_ops runner_cpu_dropout_half_ops = CPU_RUNNER("cpu_dropout_half", RUNNER_MODEL_OF(cpu_dropout_half),
    PRECISION_FP32, NULL, cpu_available, "the cpu runner with dropout 0.5 between layers (docs/adding-a-model.md)");
C
echo 'LSTM_RUNNER(cpu_dropout_half, cpu, dropout_half, 0)' >> "$work/src/runners/runners.def"

# Step 6: a numerics group of its own
echo 'NUMERICS_GROUP(dropout_half_layers, dropout_half, FIXED(5, 3, 7, 9, 2, 17), FIXED(4, 2, 5, 6, 3, 17))' \
  >> "$work/tests/numerics/groups.def"

# Build (CPU only: the model's runner is a CPU runner)
cmake -S "$work" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLSTMCHECK_CUDA=OFF > "$work/configure.log" ||
  fail "configure (see $work/configure.log)"
cmake --build "$work/build" --target lstmcheck numerics_test -j"$(nproc)" > "$work/build.log" ||
  fail "build (see $work/build.log)"
lc=$work/build/lstmcheck

# Check: listed with its model, gated, tested
"$lc" list | grep -Eq '^cpu_dropout_half +cpu +dropout_half ' ||
  fail "list does not show cpu_dropout_half with model dropout_half"
shape=(--numLayers 3 --seqLength 5 --hiddenSize 8 --inputSize 6 --miniBatch 4)
out=$("$lc" check --rnns cpu_dropout_half "${shape[@]}") || fail "check --rnns cpu_dropout_half exited $?: $out"
grep -q '^PASS cpu_dropout_half' <<<"$out" || fail "check --rnns cpu_dropout_half: no PASS line: $out"
tests=$(cd "$work/build" && ctest -N)
grep -q ' numerics\.cpu_dropout_half\.dropout_half_layers$' <<<"$tests" ||
  fail "CTest did not register numerics.cpu_dropout_half.dropout_half_layers"
! grep -q ' numerics\.cpu_dropout\.dropout_half_layers$' <<<"$tests" ||
  fail "CTest registered numerics.cpu_dropout.dropout_half_layers: the group is for dropout_half only"
(cd "$work/build" && ctest -R '^numerics\.cpu_dropout_half\.dropout_half_layers$' --output-on-failure > "$work/numerics.log") ||
  fail "numerics.cpu_dropout_half.dropout_half_layers (see $work/numerics.log)"
grep -q "100% tests passed" "$work/numerics.log" || fail "numerics.cpu_dropout_half.dropout_half_layers did not run"

# p = 0.5 is not p = 0.4: on the same shape and seed both dumps hold the same
# drawn inputs (parameters, x, h0, c0, seeds), and the reference's y differs
# (the masks differ; where the dump holds the masks, they differ too)
"$lc" check --rnns cpu_dropout_half "${shape[@]}" --dump "$work/dump" > /dev/null || fail "check --dump (cpu_dropout_half)"
"$lc" check --rnns cpu_dropout "${shape[@]}" --dump "$work/dump" > /dev/null || fail "check --dump (cpu_dropout)"
half=$work/dump/cpu_dropout_half
forty=$work/dump/cpu_dropout
[ -f "$half/reference_y.npy" ] && [ -f "$forty/reference_y.npy" ] || fail "the dumps have no reference_y.npy"
masks=0
for f in "$half"/input_*.npy; do
  name=${f##*/}
  [ -f "$forty/$name" ] || fail "$name is in the dropout_half dump only"
  case $name in
    *mask*) masks=$((masks + 1)); ! cmp -s "$f" "$forty/$name" || fail "$name is the same under p = 0.5 and p = 0.4" ;;
    *) cmp -s "$f" "$forty/$name" || fail "$name differs between the two models: same seed, same draws expected" ;;
  esac
done
! cmp -s "$half/reference_y.npy" "$forty/reference_y.npy" || fail "the reference's y is the same under p = 0.5 and p = 0.4"
echo "the dumps: same drawn inputs, $masks mask files (differing), reference y differs"
echo "PASS: a model added with a models.def line, an ABI number, a descriptor, a runner table, a roster line and a group is listed, gated and tested"
rm -rf "$work"
