/* lstmcheck's test plugins: the example's LSTM (examples/cpu_lstm_plugin)
 * behind one runner "lstm", built once per plugin with one thing planted
 * (CMakeLists.txt here):
 *   PLUGIN_NAME      the plugin's name ("good" plants nothing)
 *   PLANT_WRONG      read_results reports db_hh as zeros: a forgotten bias gradient
 *   PLANT_CRASH      create() crashes (SIGSEGV)
 *   PLANT_NULL_OP    forward is NULL
 *   PLANT_ABI        exports the symbols by hand, with the next ABI version
 *   PLANT_NO_INFO    exports the ABI version but not the description
 *   PLANT_LOAD_CRASH its initialization code crashes while lstmcheck loads it
 *   PLANT_AVAILABLE_CRASH its available() crashes
 *   PLANT_LAZY       forward and backward compute on their first call in a
 *                    process (the gate's) and return at once afterwards
 * Child processes (docs/plugins.md, "What runs in a child process"):
 *   PLANT_HANG_LOAD  its initialization code never returns
 *   PLANT_HANG_AVAILABLE its available() never returns
 *   PLANT_HANG_FORWARD its forward() never returns
 *   PLANT_HANG_TIMED its forward() never returns from its second call in a
 *                    process on: the gate passes, the timing hangs
 *   PLANT_PRINTS     prints a line on stdout while loading and in create,
 *                    forward and backward */
#include "cpu_lstm.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#if defined(PLANT_CRASH) || defined(PLANT_LOAD_CRASH) || defined(PLANT_AVAILABLE_CRASH)
/* A crash on purpose: no core file. */
static void crash(void)
{
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    raise(SIGSEGV);
}
#endif

/* ---- child processes: hangs and prints ---- */
#if defined(PLANT_HANG_LOAD) || defined(PLANT_HANG_AVAILABLE) || defined(PLANT_HANG_FORWARD) || \
    defined(PLANT_HANG_TIMED)
#include <unistd.h>
/* A hang on purpose: until lstmcheck kills the process. */
static void hang(void)
{
    for (;;)
        pause();
}
#endif
#if defined(PLANT_HANG_FORWARD)
#define HANG_IN_FORWARD() hang()
#elif defined(PLANT_HANG_TIMED)
static int calls_here;
#define HANG_IN_FORWARD() if (calls_here++ > 0) hang()
#else
#define HANG_IN_FORWARD()
#endif
#ifdef PLANT_HANG_LOAD
__attribute__((constructor)) static void hang_while_loading(void)
{
    hang();
}
#endif
#ifdef PLANT_PRINTS
#include <stdio.h>
/* What a plugin's debugging output does: a line on stdout, flushed. */
#define PRINT(where) (printf("prints: a line on stdout from %s\n", where), fflush(stdout))
__attribute__((constructor)) static void print_while_loading(void)
{
    PRINT("its initialization");
}
#else
#define PRINT(where) ((void)0)
#endif

static int lstm_create(const lstmcheck_runner *self, const lstmcheck_problem *p, void **state, lstmcheck_error *err)
{
#ifdef PLANT_CRASH
    crash();
#endif
    PRINT("create");
    return cpu_lstm_runner.create(self, p, state, err);
}

#ifdef PLANT_LAZY
static int forward_calls, backward_calls;
#define LAZY(calls) if ((calls)++ > 0) return LSTMCHECK_OK
#else
#define LAZY(calls)
#endif

static int lstm_forward(void *state, lstmcheck_error *err)
{
    LAZY(forward_calls);
    HANG_IN_FORWARD();
    PRINT("forward");
    return cpu_lstm_runner.forward(state, err);
}

static int lstm_backward(void *state, lstmcheck_error *err)
{
    LAZY(backward_calls);
    PRINT("backward");
    return cpu_lstm_runner.backward(state, err);
}
static int lstm_zero_grads(void *state, lstmcheck_error *err) { return cpu_lstm_runner.zero_grads(state, err); }
static size_t lstm_peak_device_bytes(void *state) { return cpu_lstm_runner.peak_device_bytes(state); }
static void lstm_destroy(void *state) { cpu_lstm_runner.destroy(state); }

static int lstm_read_results(void *state, lstmcheck_results *r, lstmcheck_error *err)
{
    const int rc = cpu_lstm_runner.read_results(state, r, err);
#ifdef PLANT_WRONG
    for (int l = 0; l < r->shape.num_layers; l++)
        memset(r->db_hh[l], 0, 4 * (size_t)r->shape.hidden_size * sizeof(double));
#endif
    return rc;
}

#ifdef PLANT_LOAD_CRASH
__attribute__((constructor)) static void crash_while_loading(void)
{
    crash();
}
#endif

#ifdef PLANT_NULL_OP
#define NULL_OP 1
#else
#define NULL_OP 0
#endif

#ifdef PLANT_AVAILABLE_CRASH
static int crashing_available(lstmcheck_error *why)
{
    (void)why;
    crash();
    return LSTMCHECK_OK;
}
#define AVAILABLE crashing_available
#elif defined(PLANT_HANG_AVAILABLE)
static int hanging_available(lstmcheck_error *why)
{
    (void)why;
    hang();
    return LSTMCHECK_OK;
}
#define AVAILABLE hanging_available
#else
#define AVAILABLE NULL /* lstmcheck's own answer: a CPU runner runs anywhere */
#endif

static const lstmcheck_runner lstm = {
    .name = "lstm",
    .device = LSTMCHECK_CPU,
    .description = "the example's LSTM (lstmcheck's test plugin " PLUGIN_NAME ")",
    .caps = LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | LSTMCHECK_STATE_GRADS,
    .precision = LSTMCHECK_FP32,
    .available = AVAILABLE,
    .create = lstm_create,
    .forward = NULL_OP ? NULL : lstm_forward,
    .backward = lstm_backward,
    .zero_grads = lstm_zero_grads,
    .read_results = lstm_read_results,
    .peak_device_bytes = lstm_peak_device_bytes,
    .destroy = lstm_destroy,
};

static const lstmcheck_runner *const runners[] = {&lstm, NULL};

#if defined(PLANT_ABI)
__attribute__((visibility("default"))) const uint32_t lstmcheck_plugin_abi_version = LSTMCHECK_RUNNER_ABI_VERSION + 1;
__attribute__((visibility("default"))) const lstmcheck_plugin lstmcheck_plugin_info = {
    sizeof(lstmcheck_runner), sizeof(lstmcheck_problem), sizeof(lstmcheck_results), sizeof(lstmcheck_error),
    PLUGIN_NAME, runners};
#elif defined(PLANT_NO_INFO)
__attribute__((visibility("default"))) const uint32_t lstmcheck_plugin_abi_version = LSTMCHECK_RUNNER_ABI_VERSION;
const lstmcheck_runner *const *unused_runners = runners;
#else
LSTMCHECK_PLUGIN(PLUGIN_NAME, runners);
#endif
