#!/usr/bin/env bash
# Follows docs/adding-a-runner.md for a trivial runner "example" in a scratch
# copy of the source tree: one new file and one roster line, nothing else.
#   adding_a_runner.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
# what the build reads, as it is now (uncommitted changes included)
cp -r "$src/CMakeLists.txt" "$src/cmake" "$src/include" "$src/src" "$src/kernels" "$src/tests" "$work/"

# Step 1: the table, in a file of its own (here: the cpu runner's functions)
cat > "$work/src/runners/runner_example.c" <<'C'
/* A trivial runner for docs/adding-a-runner.md: the cpu runner under another name. */
#include "runners/runner.h"

extern const runner_ops runner_cpu_ops;
#define CPU (&runner_cpu_ops)

static int example_available(lc_error *why) { return CPU->available(why); }
static int example_create(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    (void)self;
    return CPU->create(CPU, p, state, err);
}
static int example_forward(void *s, lc_error *err) { return CPU->forward(s, err); }
static int example_backward(void *s, lc_error *err) { return CPU->backward(s, err); }
static int example_zero_grads(void *s, lc_error *err) { return CPU->zero_grads(s, err); }
static int example_read_results(void *s, lstm_results *r, lc_error *err) { return CPU->read_results(s, r, err); }
static size_t example_peak_device_bytes(void *s) { return CPU->peak_device_bytes(s); }
static void example_destroy(void *s) { CPU->destroy(s); }

const runner_ops runner_example_ops = {
    .name = "example",
    .device = LC_DEVICE_CPU,
    .description = "the cpu runner under another name (docs/adding-a-runner.md)",
    .caps = RUNNER_MULTILAYER | RUNNER_VARLEN | RUNNER_BACKWARD,
    .precision = PRECISION_FP32,
    .model = RUNNER_MODEL_OF(example),
    .available = example_available,
    .create = example_create,
    .forward = example_forward,
    .backward = example_backward,
    .zero_grads = example_zero_grads,
    .read_results = example_read_results,
    .peak_device_bytes = example_peak_device_bytes,
    .destroy = example_destroy,
};
C
# Step 2: one line in the roster
echo 'LSTM_RUNNER(example, cpu, lstm, 0)' >> "$work/src/runners/runners.def"

# Step 3: build and check (CPU only: the example is a CPU runner)
cmake -S "$work" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLSTMCHECK_CUDA=OFF > "$work/configure.log"
cmake --build "$work/build" --target lstmcheck numerics_test -j"$(nproc)" > "$work/build.log"
"$work/build/lstmcheck" list --names | grep -qx example || { echo "FAIL: list does not show example"; exit 1; }
"$work/build/lstmcheck" check --rnns example --seqLength 6 --hiddenSize 12 --inputSize 7 --miniBatch 3 |
  grep -q "1 passed, 0 failed" || { echo "FAIL: check --rnns example"; exit 1; }
(cd "$work/build" && ctest -N -R '^numerics\.example\.basic$' | grep -q "Total Tests: 1") ||
  { echo "FAIL: CTest did not register numerics.example.basic"; exit 1; }
"$work/build/tests/numerics/numerics_test" example basic | tail -1
echo "PASS: a runner added with one file and one roster line is listed, gated and tested"
rm -rf "$work"
