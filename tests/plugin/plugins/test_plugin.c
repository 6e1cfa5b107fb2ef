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
 *   PLANT_UNTERMINATED forward fails with an error message of no NUL byte:
 *                    every byte of err->msg is 'U'
 *   PLANT_UNTERMINATED_AVAILABLE the same from available(), which fails
 *   PLANT_WRITES_INPUTS forward adds 1 to every element of its inputs (x,
 *                    h0, c0, the weights and biases, dy, dhy, dcy), which
 *                    are the caller's and read-only
 *   PLANT_LONG_DESCRIPTION a description of two lines, the second 300 'D's
 *   PLANT_UNKNOWN_MODEL its runner says it computes model 99, which no
 *                    lstmcheck has
 *   PLANT_CLAIMS_DROPOUT its runner says it computes the dropout model
 *                    while it computes the plain LSTM (the same at one layer)
 *   PLANT_OWN_MASK   its runner is of the dropout model with a mask of its own
 *                    (LSTMCHECK_OWN_MASK), as cuDNN's dropout: on the plain
 *                    LSTM's problems (the gate's, p = 0) it is the LSTM; on
 *                    its model's (timed) it zeroes two of every three elements
 *                    of y, a stand-in for a mask no reference has (wrong on one
 *                    layer, where nothing is to be dropped)
 *   PLANT_OWN_MASK_AT_ZERO the same, zeroing on the plain LSTM's problems too:
 *                    a library that drops at p = 0
 *   PLANT_OWN_MASK_LSTM LSTMCHECK_OWN_MASK on a runner of the plain LSTM
 *   PLANT_UNKNOWN_CAPS a caps bit no lstmcheck has
 *   PLANT_MARKUP     forward() fails with a message of HTML, markdown, CR,
 *                    ESC, a C1 CSI and invalid UTF-8 (MARKUP_UNAVAILABLE:
 *                    available() says it is unsupported here, so)
 * Child processes (docs/plugins.md, "What runs in a child process"):
 *   PLANT_HANG_LOAD  its initialization code never returns
 *   PLANT_HANG_AVAILABLE its available() never returns
 *   PLANT_HANG_FORWARD its forward() never returns
 *   PLANT_HANG_TIMED its forward() never returns from its second call in a
 *                    process on: the gate passes, the timing hangs
 *   PLANT_PRINTS     prints a line on stdout while loading and in create,
 *                    forward and backward, and at exit (an atexit handler
 *                    it registers while loading, its destructor)
 *   PLANT_OPENMP     create() runs an OpenMP parallel region of two threads,
 *                    as a runner on an OpenMP library does: in a child
 *                    forked after its parent started OpenMP threads (an
 *                    in-process onednn), libgomp hangs there
 *   PLANT_OPENMP_LOAD its initialization code runs such a region: OpenMP
 *                    threads in lstmcheck's own process, which lstmcheck
 *                    did not start (a child forked after it that runs
 *                    OpenMP, as the limit's oneDNN half, hangs) */
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

#if defined(PLANT_UNTERMINATED) || defined(PLANT_UNTERMINATED_AVAILABLE)
/* A message that fills its buffer and has no end. */
static int fail_unterminated(lstmcheck_error *err)
{
    memset(err->msg, 'U', sizeof err->msg);
    return LSTMCHECK_ERROR;
}
#endif

#ifdef PLANT_MARKUP
/* A message that is markup and terminal control, not text. */
static int fail_markup(lstmcheck_error *err)
{
    strcpy(err->msg, "<img src=x onerror=alert(1)> & **b** [a](javascript:x) |x\r\x1b[31m\xc2\x9b" "2J \xff end");
#ifdef MARKUP_UNAVAILABLE
    return LSTMCHECK_UNSUPPORTED; /* a skip, whose reason reaches --markdown */
#else
    return LSTMCHECK_ERROR;
#endif
}
#endif

#ifdef PLANT_WRITES_INPUTS
/* The problem of the instance made last, kept to be scribbled on. */
static const lstmcheck_problem *scribbled;

static void add_one(float *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        v[i] += 1.0f;
}

static void scribble_inputs(const lstmcheck_problem *p)
{
    const lstmcheck_shape *s = &p->shape;
    const size_t T = (size_t)s->seq_length, B = (size_t)s->batch, I = (size_t)s->input_size,
                 H = (size_t)s->hidden_size, L = (size_t)s->num_layers;
    for (size_t l = 0; l < L; l++) {
        add_one(p->w_ih[l], 4 * H * (l ? H : I));
        add_one(p->w_hh[l], 4 * H * H);
        add_one(p->b_ih[l], 4 * H);
        add_one(p->b_hh[l], 4 * H);
    }
    add_one(p->x, T * B * I);
    add_one(p->h0, L * B * H);
    add_one(p->c0, L * B * H);
    add_one(p->dy, T * B * H);
    add_one(p->dhy, L * B * H);
    add_one(p->dcy, L * B * H);
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
#ifdef PLANT_OPENMP_LOAD
__attribute__((constructor)) static void openmp_while_loading(void)
{
    int threads = 0;
#pragma omp parallel num_threads(2) reduction(+ : threads)
    threads += 1;
    (void)threads;
}
#endif
#ifdef PLANT_PRINTS
#include <stdio.h>
/* What a plugin's debugging output does: a line on stdout, flushed. */
#define PRINT(where) (printf("prints: a line on stdout from %s\n", where), fflush(stdout))
#include <stdlib.h>
#include <unistd.h>
/* At exit, straight to fd 1 (no stdio buffer to flush first). */
static void print_at_exit(void)
{
    static const char line[] = "prints: a line on stdout from its atexit handler\n";
    if (write(STDOUT_FILENO, line, sizeof line - 1) < 0)
        return;
}
__attribute__((constructor)) static void print_while_loading(void)
{
    PRINT("its initialization");
    atexit(print_at_exit);
}
__attribute__((destructor)) static void print_while_unloading(void)
{
    PRINT("its destructor");
}
#else
#define PRINT(where) ((void)0)
#endif

#if defined(PLANT_OWN_MASK) || defined(PLANT_OWN_MASK_AT_ZERO)
/* Whether the instance made last (one at a time in a process) drops */
static int own_mask_drops;
#ifdef PLANT_OWN_MASK_AT_ZERO
#define OWN_MASK_DROPS(p) 1
#else
#define OWN_MASK_DROPS(p) ((p)->model == LSTMCHECK_MODEL_DROPOUT)
#endif
static void own_mask_apply(lstmcheck_results *r)
{
    const lstmcheck_shape *s = &r->shape;
    const size_t n = (size_t)s->seq_length * (size_t)s->batch * (size_t)s->hidden_size;
    for (size_t i = 0; own_mask_drops && r->y && i < n; i++)
        r->y[i] = i % 3 ? 0 : r->y[i];
}
#define OWN_MASK_CREATE(p) (own_mask_drops = OWN_MASK_DROPS(p))
#define OWN_MASK_READ(r) own_mask_apply(r)
#else
#define OWN_MASK_CREATE(p) ((void)0)
#define OWN_MASK_READ(r) ((void)0)
#endif

static int lstm_create(const lstmcheck_runner *self, const lstmcheck_problem *p, void **state, lstmcheck_error *err)
{
    OWN_MASK_CREATE(p);
#ifdef PLANT_CRASH
    crash();
#endif
#ifdef PLANT_WRITES_INPUTS
    scribbled = p;
#endif
    PRINT("create");
#ifdef PLANT_OPENMP
    int threads = 0;
#pragma omp parallel num_threads(2) reduction(+ : threads)
    threads += 1;
    if (threads < 1) {
        strcpy(err->msg, "OpenMP ran no thread");
        return LSTMCHECK_ERROR;
    }
#endif
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
#ifdef PLANT_UNTERMINATED
    return fail_unterminated(err);
#endif
#ifdef PLANT_MARKUP
    return fail_markup(err);
#endif
    const int rc = cpu_lstm_runner.forward(state, err);
#ifdef PLANT_WRITES_INPUTS
    scribble_inputs(scribbled);
#endif
    return rc;
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
    OWN_MASK_READ(r);
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
#elif defined(PLANT_UNTERMINATED_AVAILABLE)
#define AVAILABLE fail_unterminated
#elif defined(PLANT_MARKUP) && defined(MARKUP_UNAVAILABLE)
#define AVAILABLE fail_markup
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

#ifdef PLANT_LONG_DESCRIPTION
#define D10 "DDDDDDDDDD"
#define D100 D10 D10 D10 D10 D10 D10 D10 D10 D10 D10
#define DESCRIPTION "two lines\n" D100 D100 D100
#else
#define DESCRIPTION "the example's LSTM (lstmcheck's test plugin " PLUGIN_NAME ")"
#endif

#define CAPS (LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | LSTMCHECK_STATE_GRADS)
#if defined(PLANT_UNKNOWN_MODEL)
#define MODEL 99
#elif defined(PLANT_CLAIMS_DROPOUT)
#define MODEL LSTMCHECK_MODEL_DROPOUT
#elif defined(PLANT_OWN_MASK) || defined(PLANT_OWN_MASK_AT_ZERO)
#define MODEL LSTMCHECK_MODEL_DROPOUT
#undef CAPS
#define CAPS (LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | LSTMCHECK_STATE_GRADS | LSTMCHECK_OWN_MASK)
#elif defined(PLANT_OWN_MASK_LSTM)
#undef CAPS
#define CAPS (LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | LSTMCHECK_OWN_MASK)
#elif defined(PLANT_UNKNOWN_CAPS)
#undef CAPS
#define CAPS (LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | (1u << 20))
#endif

static const lstmcheck_runner lstm = {
#ifdef MODEL /* version 2's field: the plugin of version 1 (v1) builds without it */
    .model = MODEL,
#endif
    .name = "lstm",
    .device = LSTMCHECK_CPU,
    .description = DESCRIPTION,
    .caps = CAPS,
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
