/* The profiling layer (see profiling.h). */
#include "report/profiling.h"

#include "base/json.h"
#include "base/paths.h"
#include "device/gpu_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LSTMCHECK_WITH_CUDA
#include <nvtx3/nvToolsExt.h>
#define PROF_NVTX_PUSH(name) nvtxRangePushA(name)
#define PROF_NVTX_POP() nvtxRangePop()
#else
#define PROF_NVTX_PUSH(name) ((void)(name))
#define PROF_NVTX_POP() ((void)0)
#endif

int lc_nvtx_steps_on = 0;

static void note_error(prof_session *p, const lc_error *e)
{
    if (!p->failed) {
        p->err = *e;
        p->failed = 1;
    }
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The operation spans' clock under CUPTI; it cannot fail once collection
 * has started (gpu_trace_start asked for the device). */
static uint64_t cupti_ns(void)
{
    uint64_t ns;
    lc_error e;
    return gpu_trace_timestamp(&ns, &e) == 0 ? ns : monotonic_ns();
}

uint64_t prof_now_ns(prof_session *p)
{
    if (p->gpu_trace) {
        uint64_t ns;
        lc_error e;
        if (gpu_trace_timestamp(&ns, &e) == 0)
            return ns;
        note_error(p, &e);
    }
    return monotonic_ns();
}

static long push_at(prof_session *p, const char *name, uint64_t now)
{
    if (p->nvtx)
        PROF_NVTX_PUSH(name);
    return p->trace ? trace_host_push(p->trace, name, now) : -1;
}

static void pop_at(prof_session *p, uint64_t now)
{
    if (p->trace)
        trace_host_pop(p->trace, now);
    if (p->nvtx)
        PROF_NVTX_POP();
}

long prof_push(prof_session *p, const char *name)
{
    return push_at(p, name, prof_now_ns(p));
}

void prof_pop(prof_session *p)
{
    pop_at(p, prof_now_ns(p));
}

/* Device memory at the end of a timed iteration. */
static void snapshot_memory(prof_session *p)
{
    memstats_device d;
    lc_error e;
    if (memstats_device_query(&d, &e)) {
        note_error(p, &e);
        return;
    }
    if (p->niter_mem == p->cap_iter_mem) {
        int cap = p->cap_iter_mem ? 2 * p->cap_iter_mem : 64;
        memstats_device *grown = realloc(p->iter_mem, (size_t)cap * sizeof *grown);
        if (!grown) {
            lc_error_set(&e, "out of host memory for memory statistics");
            note_error(p, &e);
            return;
        }
        p->iter_mem = grown;
        p->cap_iter_mem = cap;
    }
    p->iter_mem[p->niter_mem++] = d;
}

/* A timed iteration [start, end) into the runner's region. */
static void keep_iteration(prof_session *p, uint64_t start, uint64_t end)
{
    if (p->niters == p->cap_iters) {
        const size_t cap = p->cap_iters ? 2 * p->cap_iters : 64;
        trace_interval *grown = realloc(p->iters, cap * sizeof *grown);
        if (!grown) {
            lc_error e;
            lc_error_set(&e, "out of host memory for the timed iterations");
            note_error(p, &e);
            return;
        }
        p->iters = grown;
        p->cap_iters = cap;
    }
    p->iters[p->niters++] = (trace_interval){start, end};
}

/* The harness labels its iterations "<runner> iteration <i>" and its
 * warm-up "<runner> warmup <i>" (harness.c); the timed region of a runner
 * is its timed iterations, each from its start to its end: what runs
 * between them (the checks of drawn iterations) is not in it. */
static void hook_push(void *ctx, const char *name)
{
    prof_session *p = ctx;
    uint64_t now = prof_now_ns(p);
    if (p->depth++ == 0 && strstr(name, " iteration ")) {
        p->in_timed = 1;
        p->iter_start = now;
    }
    push_at(p, name, now);
}

static void hook_pop(void *ctx)
{
    prof_session *p = ctx;
    uint64_t now = prof_now_ns(p);
    pop_at(p, now);
    if (p->depth > 0 && --p->depth == 0 && p->in_timed) {
        keep_iteration(p, p->iter_start, now);
        p->in_timed = 0;
        if (p->device_mem)
            snapshot_memory(p);
    }
}

lc_status prof_begin(prof_session *p, lc_device device, int with_trace, int nvtx, lc_error *err)
{
    memset(p, 0, sizeof *p);
    p->runner_event = -1;
    p->nvtx = nvtx;
    p->device_mem = device == LC_DEVICE_CUDA;
    p->hooks.range_push = hook_push;
    p->hooks.range_pop = hook_pop;
    p->hooks.ctx = p;
    if (with_trace) {
        int gpu = device == LC_DEVICE_CUDA && gpu_trace_built();
        p->trace = trace_create(gpu ? "cupti" : "CLOCK_MONOTONIC", err);
        if (!p->trace)
            return LC_ERROR;
        trace_name_lane(p->trace, TRACE_PID_HOST, 1, "lstmcheck ranges");
        if (gpu) {
            const int started = gpu_trace_start(p->trace, err);
            if (started != LC_OK) {
                trace_destroy(p->trace);
                p->trace = NULL;
                return started == LC_UNSUPPORTED ? LC_UNSUPPORTED : LC_ERROR;
            }
            p->gpu_trace = 1;
        }
        trace_ops_attach(p->trace, gpu ? cupti_ns : monotonic_ns);
    }
    lc_nvtx_steps_on = nvtx;
    return LC_OK;
}

const harness_hooks *prof_hooks(prof_session *p)
{
    return &p->hooks;
}

int prof_runner_begin(prof_session *p, const runner_ops *r, runner_group group, lc_error *err)
{
    p->runner_group = group;
    p->runner_on_gpu = r->device == LC_DEVICE_CUDA;
    p->runner_name = r->name;
    p->depth = 0;
    p->in_timed = 0;
    p->niters = 0;
    p->niter_mem = 0;
    memset(&p->err, 0, sizeof p->err);
    p->failed = 0;
    memset(&p->before, 0, sizeof p->before);
    if (p->device_mem && memstats_device_query(&p->before, err))
        return 1;
    char label[160];
    snprintf(label, sizeof label, "runner %s", r->name);
    p->runner_event = prof_push(p, label);
    return 0;
}

/* Memory over the timed iterations: the runner's peak, the process's peak
 * RSS, and the device figures taken at the end of each iteration. */
static int summarize_memory(const prof_session *p, const harness_result *res, memstats_summary *out,
                            lc_error *err)
{
    memstats_sample *s = calloc((size_t)res->n, sizeof *s);
    if (!s) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    size_t rss = memstats_peak_rss_bytes();
    for (int i = 0; i < res->n; i++) {
        s[i].time_ms = res->fwd_ms[i] + (res->bwd_ms ? res->bwd_ms[i] : 0);
        s[i].peak_device_bytes = res->peak_device_bytes;
        s[i].peak_rss_bytes = rss;
        if (i < p->niter_mem && p->iter_mem[i].have) {
            s[i].have_device = 1;
            s[i].dev_free_bytes = p->iter_mem[i].free_bytes;
            s[i].dev_used_bytes = p->iter_mem[i].total_bytes - p->iter_mem[i].free_bytes;
        }
    }
    memstats_summarize(s, res->n, out);
    free(s);
    return 0;
}

/* The runner's range in the trace carries what was measured of it. */
static void annotate_runner(prof_session *p, const harness_result *res, const prof_runner_stats *st)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    json_object_begin(&w);
    json_member_int(&w, "timed_iterations", res ? res->n : 0);
    if (res && res->unchecked[0])
        json_member_string(&w, "unchecked", res->unchecked);
    if (st->have_gpu_stats) {
        json_member_double(&w, "gpu_utilization", st->gpu.utilization);
        json_member_double(&w, "gemm_share", st->gpu.gemm_share);
        json_member_uint(&w, "kernels", st->gpu.kernels);
        json_key(&w, "window_us");
        json_fixed(&w, st->gpu.window_ns, 3);
        json_key(&w, "busy_us");
        json_fixed(&w, st->gpu.busy_ns, 3);
        json_key(&w, "gemm_us");
        json_fixed(&w, st->gpu.gemm_ns, 3);
    }
    if (res)
        json_member_uint(&w, "peak_device_bytes", res->peak_device_bytes);
    json_object_end(&w);
    const char *args = json_text(&w, NULL);
    if (args)
        trace_set_args(p->trace, p->runner_event, args);
    json_free(&w);
}

/* The runner's timed region, for the table of operations. 0, or 1 on out of memory. */
static int keep_window(prof_session *p)
{
    if (p->nwindows == p->cap_windows) {
        const int cap = p->cap_windows ? 2 * p->cap_windows : 8;
        prof_window *grown = realloc(p->windows, (size_t)cap * sizeof *grown);
        if (!grown)
            return 1;
        p->windows = grown;
        p->cap_windows = cap;
    }
    trace_interval *parts = malloc(p->niters * sizeof *parts);
    if (!parts)
        return 1;
    memcpy(parts, p->iters, p->niters * sizeof *parts);
    p->windows[p->nwindows++] = (prof_window){p->runner_name, p->runner_group, parts, p->niters};
    return 0;
}

int prof_runner_end(prof_session *p, const harness_result *res, prof_runner_stats *out,
                    lc_error *err)
{
    memset(out, 0, sizeof *out);
    prof_pop(p);
    int rc = 0;
    if (p->gpu_trace && gpu_trace_flush(err))
        rc = 1;
    out->have_window = p->niters > 0;
    if (!rc && p->gpu_trace && p->niters && p->runner_on_gpu) {
        rc = trace_gpu_stats_region(p->trace, p->iters, p->niters, &out->gpu, err);
        out->have_gpu_stats = !rc;
    }
    /* memory: before the instance existed, and at the end of the last
     * timed iteration (the instance still alive) */
    out->before = p->before;
    if (p->niter_mem > 0)
        out->after = p->iter_mem[p->niter_mem - 1];
    if (res && res->n > 0 && summarize_memory(p, res, &out->summary, err))
        return 1;
    if (res && p->niters && keep_window(p)) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    if (p->trace && p->runner_event >= 0)
        annotate_runner(p, res, out);
    p->runner_event = -1;
    if (!rc && p->failed) {
        *err = p->err;
        rc = 1;
    }
    return rc;
}

int prof_op_report_make(prof_session *p, prof_op_report *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    if (!p->trace) {
        lc_error_set(err, "no trace was collected: the table of operations needs one");
        return 1;
    }
    out->tables = calloc(p->nwindows ? (size_t)p->nwindows : 1, sizeof *out->tables);
    if (!out->tables) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    for (int i = 0; i < p->nwindows; i++) {
        const prof_window *w = &p->windows[i];
        prof_op_table *t = &out->tables[out->n];
        t->runner = w->runner;
        t->group = w->group;
        t->iterations = (int)w->nparts;
        if (trace_op_table_region(p->trace, w->parts, w->nparts, &t->ops, err)) {
            prof_op_report_free(out);
            return 1;
        }
        out->n++;
    }
    return 0;
}

void prof_op_report_free(prof_op_report *r)
{
    for (int i = 0; r->tables && i < r->n; i++)
        trace_op_table_free(&r->tables[i].ops);
    free(r->tables);
    memset(r, 0, sizeof *r);
}

int prof_finish(prof_session *p, const char *path, lc_error *err)
{
    int rc = 0;
    trace_ops_attach(NULL, NULL);
    lc_nvtx_steps_on = 0;
    if (p->gpu_trace) {
        rc = gpu_trace_stop(err);
        p->gpu_trace = 0;
    }
    if (!rc && p->trace && path)
        rc = trace_write_json(p->trace, path, err);
    return rc;
}

void prof_free(prof_session *p)
{
    if (p->trace)
        trace_ops_attach(NULL, NULL);
    if (p->gpu_trace) {
        lc_error e;
        gpu_trace_stop(&e);
    }
    lc_nvtx_steps_on = 0;
    trace_destroy(p->trace);
    free(p->iter_mem);
    free(p->iters);
    for (int i = 0; i < p->nwindows; i++)
        free(p->windows[i].parts);
    free(p->windows);
    memset(p, 0, sizeof *p);
}

int prof_output_name(char *buf, size_t n, const char *dir, const char *const *names, int nnames,
                     const lstm_shape *s, const struct tm *when, const char *ext, lc_error *err)
{
    char rnns[2048] = "";
    size_t k = 0;
    for (int i = 0; i < nnames; i++) {
        int w = snprintf(rnns + k, sizeof rnns - k, "%s%s", i ? "-" : "", names[i]);
        if (w < 0 || (size_t)w >= sizeof rnns - k) {
            lc_error_set(err, "the runner names are too long for a file name");
            return 1;
        }
        k += (size_t)w;
    }
    char date[32];
    if (strftime(date, sizeof date, "%m%d%y-%H%M", when) == 0) {
        lc_error_set(err, "cannot format the date");
        return 1;
    }
    size_t dl = dir ? strlen(dir) : 0;
    char tag[96];
    int w = snprintf(buf, n, "%s%sprof_%s_%s_%s.%s", dl ? dir : "", dl && dir[dl - 1] != '/' ? "/" : "", rnns,
                     lstm_shape_format(s, LSTM_SHAPE_TAG, tag, sizeof tag), date, ext);
    if (w < 0 || (size_t)w >= n) {
        lc_error_set(err, "output file name too long");
        return 1;
    }
    return 0;
}

