/* The profiling layer: the Chrome trace writer, the utilization arithmetic,
 * GEMM classification, the profile file names, the memory summary, and one
 * GPU trace through real CUPTI (skipped without a device). */
#include "unit.h"

#include "base/paths.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device/device.h"
#include "check/gate.h"
#include "perf/harness.h"
#include "device/memstats.h"
#include "report/profiling.h"
#include "device/trace.h"
#include "base/parallel.h"

/* Where the walk over the X events stands on the current lane. */
typedef struct lane_walk {
    double stack_end[64];
    int depth;
    double prev_ts;
    long prev_lane;
} lane_walk;

/* An X event [ts, ts + dur] on its lane: sorted by ts, and after the
 * previous one or nested inside it. 0, or -1 with a message. */
static int check_lane_order(lane_walk *w, long lane, const char *name, double ts, double dur)
{
    if (lane != w->prev_lane) {
        w->depth = 0;
        w->prev_ts = -1;
        w->prev_lane = lane;
    }
    if (ts < w->prev_ts) {
        fprintf(stderr, "'%s' at %g comes after an event at %g on its lane\n", name, ts, w->prev_ts);
        return -1;
    }
    w->prev_ts = ts;
    double end = ts + dur;
    /* pop the ranges this one starts after; then it must fit in the top one
     * (host and NVTX lanes nest; GPU streams are sequential) */
    while (w->depth > 0 && ts >= w->stack_end[w->depth - 1] - 1e-9)
        w->depth--;
    if (w->depth > 0 && end > w->stack_end[w->depth - 1] + 1e-6) {
        fprintf(stderr, "'%s' [%g, %g] overlaps its parent ending at %g without nesting\n", name, ts,
                end, w->stack_end[w->depth - 1]);
        return -1;
    }
    if (w->depth < 64)
        w->stack_end[w->depth++] = end;
    return 0;
}

/* One event: 1 for a well-formed X event in order (counted as GPU or NVTX
 * by its pid), 0 for another event, -1 (with a message) on a violation. */
static int check_event(const cJSON *e, lane_walk *w, int *gpu_events, int *nvtx_events)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(ph) || !cJSON_IsNumber(pid) || !cJSON_IsNumber(tid) || !cJSON_IsString(name)) {
        fprintf(stderr, "event without ph/pid/tid/name\n");
        return -1;
    }
    if (strcmp(ph->valuestring, "X"))
        return 0;
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || dur->valuedouble < 0 || ts->valuedouble < 0) {
        fprintf(stderr, "X event '%s' without a valid ts/dur\n", name->valuestring);
        return -1;
    }
    if (pid->valueint >= TRACE_PID_GPU) (*gpu_events)++;
    if (pid->valueint == TRACE_PID_NVTX) (*nvtx_events)++;
    long lane = (long)pid->valueint * 1000000L + tid->valueint;
    if (check_lane_order(w, lane, name->valuestring, ts->valuedouble, dur->valuedouble))
        return -1;
    return 1;
}

/* Every "X" event well formed; on each lane sorted by ts, and every event
 * either after the previous one or nested inside it. Returns the number of
 * X events, or -1 (with a message) on a violation. */
static int check_trace_json(const char *text, int *gpu_events, int *nvtx_events)
{
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        fprintf(stderr, "not valid JSON near: %.60s\n", cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
        return -1;
    }
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    int n = 0, bad = 0;
    lane_walk w = {.depth = 0, .prev_ts = -1, .prev_lane = -1};
    *gpu_events = *nvtx_events = 0;
    if (!cJSON_IsArray(events)) {
        fprintf(stderr, "no traceEvents array\n");
        bad = 1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const int x = check_event(e, &w, gpu_events, nvtx_events);
        if (x < 0) {
            bad = 1;
            break;
        }
        n += x;
    }
    cJSON_Delete(root);
    return bad ? -1 : n;
}

static const cJSON *find_event(const cJSON *events, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name) && cJSON_IsString(ph) &&
            !strcmp(ph->valuestring, "X"))
            return e;
    }
    return NULL;
}

/* The sample trace: host ranges runner > iteration > forward, backward
 * (a name that needs escaping), GPU events added out of order on two
 * streams, and a range left open. */
static int fill_sample_trace(trace_buffer *t)
{
    /* host: runner > iteration > forward, backward; a name that needs escaping */
    trace_host_push(t, "runner \"x\"\\y\n", 1000);
    trace_host_push(t, "x iteration 0", 1500);
    trace_host_push(t, "forward", 1600);
    trace_host_pop(t, 2600);
    trace_host_push(t, "backward", 2700);
    trace_host_pop(t, 4700);
    trace_host_pop(t, 4800);
    trace_host_pop(t, 5000);
    /* GPU events added out of order, on two streams */
    trace_event k = {.start_ns = 3000, .end_ns = 3500, .name = "ampere_sgemm_32x32_nn",
                     .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 7};
    CHECK(trace_add(t, &k) == 0, "add");
    k.start_ns = 1700; k.end_ns = 2100; k.name = "cell_forward_kernel";
    CHECK(trace_add(t, &k) == 0, "add");
    trace_event m = {.start_ns = 1200, .end_ns = 1250, .name = "Memcpy HtoD", .bytes = 4096,
                     .kind = TRACE_MEMCPY, .pid = TRACE_PID_GPU, .tid = 13};
    CHECK(trace_add(t, &m) == 0, "add");
    trace_name_lane(t, TRACE_PID_GPU, 7, "stream 7");
    /* a range left open ends at the last event */
    trace_host_push(t, "left open", 5100);
    trace_event late = {.start_ns = 5200, .end_ns = 6000, .name = "late_kernel",
                        .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 7};
    trace_add(t, &late);
    CHECK(trace_count(t) == 9, "count %zu", trace_count(t));
    return 0;
}

/* Whether the GPU process is labelled for functorch's compute_utilization. */
static int gpu_process_labelled(const cJSON *events)
{
    int labelled = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(nm) && !strcmp(nm->valuestring, "process_labels"))
            labelled = cJSON_GetObjectItemCaseSensitive(e, "pid")->valueint == TRACE_PID_GPU;
    }
    return labelled;
}

/* The sample trace's JSON: the escaped name reads back, times are in
 * microseconds from the first event, the open range ends at the last
 * event, memcpy bytes are there, the GPU process is labelled. */
static int check_sample_json(const char *text)
{
    cJSON *root = cJSON_Parse(text);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    const cJSON *r = find_event(events, "runner \"x\"\\y\n");
    CHECK(r, "the escaped name reads back");
    CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(r, "ts")->valuedouble, 0.0, 1e-9);
    CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(r, "dur")->valuedouble, 4.0, 1e-9);
    const cJSON *fw = find_event(events, "forward");
    CHECK(fw, "forward");
    CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(fw, "ts")->valuedouble, 0.6, 1e-9);
    CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(fw, "dur")->valuedouble, 1.0, 1e-9);
    const cJSON *open = find_event(events, "left open");
    CHECK(open && fabs(cJSON_GetObjectItemCaseSensitive(open, "dur")->valuedouble - 0.9) < 1e-9,
          "an open range ends at the last event");
    const cJSON *mc = find_event(events, "Memcpy HtoD");
    CHECK(mc && cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mc, "args"), "bytes")
                        ->valuedouble == 4096, "memcpy bytes");
    CHECK(gpu_process_labelled(events), "GPU process_labels");
    cJSON_Delete(root);
    return 0;
}

/* The trace written atomically (len bytes), and readable back. */
static int check_trace_file(trace_buffer *t, size_t len)
{
    lc_error err;
    int gpu, nvtx;
    char path[] = "/tmp/lstmcheck_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    CHECK(trace_write_json(t, path, &err) == 0, "%s", err.msg);
    FILE *f = fopen(path, "rb");
    CHECK(f, "open %s", path);
    char *back = calloc(len + 16, 1);
    size_t got = fread(back, 1, len + 8, f);
    fclose(f);
    unlink(path);
    CHECK(got == len, "file has %zu bytes, expected %zu", got, len);
    CHECK(check_trace_json(back, &gpu, &nvtx) == 9, "file reads back");
    free(back);
    return 0;
}

/* An empty trace is valid too. */
static int check_empty_trace(void)
{
    lc_error err;
    size_t len;
    int gpu, nvtx;
    trace_buffer *t = trace_create("test", &err);
    char *text = trace_to_json(t, &len, &err);
    CHECK(text && check_trace_json(text, &gpu, &nvtx) == 0, "empty trace");
    free(text);
    trace_destroy(t);
    return 0;
}

int test_trace_json_valid(void)
{
    lc_error err;
    trace_buffer *t = trace_create("test", &err);
    CHECK(t, "%s", err.msg);
    if (fill_sample_trace(t))
        return 1;
    size_t len;
    char *text = trace_to_json(t, &len, &err);
    CHECK(text, "%s", err.msg);
    CHECK(strlen(text) == len, "length");
    int gpu, nvtx;
    int n = check_trace_json(text, &gpu, &nvtx);
    CHECK(n == 9, "X events %d (see above)", n);
    CHECK(gpu == 4 && nvtx == 0, "gpu %d nvtx %d", gpu, nvtx);
    if (check_sample_json(text))
        return 1;
    free(text);
    if (check_trace_file(t, len))
        return 1;
    trace_destroy(t);
    return check_empty_trace();
}

/* The union of intervals over one window [lo, hi). */
static uint64_t union_in(const trace_interval *iv, size_t n, uint64_t lo, uint64_t hi)
{
    const trace_interval window = {lo, hi};
    uint64_t total = UINT64_MAX;
    return trace_union_in_region(iv, n, &window, 1, &total) ? UINT64_MAX : total;
}

/* trace_union_in_region over one window: overlaps counted once, any
 * order, clipped to the window. */
static int check_interval_union(void)
{
    trace_interval a[8];
    /* overlapping: [0,10) and [5,15) -> 15, counted once */
    a[0] = (trace_interval){0, 10}; a[1] = (trace_interval){5, 15};
    CHECK(union_in(a, 2, 0, 100) == 15, "overlap");
    /* disjoint, given out of order */
    a[0] = (trace_interval){50, 60}; a[1] = (trace_interval){0, 10}; a[2] = (trace_interval){20, 25};
    CHECK(union_in(a, 3, 0, 100) == 25, "disjoint");
    /* contained */
    a[0] = (trace_interval){0, 100}; a[1] = (trace_interval){10, 20}; a[2] = (trace_interval){30, 40};
    CHECK(union_in(a, 3, 0, 1000) == 100, "contained");
    /* touching intervals merge without a gap or double count */
    a[0] = (trace_interval){0, 10}; a[1] = (trace_interval){10, 20};
    CHECK(union_in(a, 2, 0, 100) == 20, "touching");
    /* clipped to the window */
    a[0] = (trace_interval){0, 10}; a[1] = (trace_interval){90, 120}; a[2] = (trace_interval){200, 300};
    CHECK(union_in(a, 3, 5, 100) == 15, "clipped");
    /* empty: no intervals, zero-length intervals, empty window */
    CHECK(union_in(a, 0, 0, 100) == 0, "none");
    a[0] = (trace_interval){5, 5};
    CHECK(union_in(a, 1, 0, 100) == 0, "zero length");
    a[0] = (trace_interval){0, 10};
    CHECK(union_in(a, 1, 50, 50) == 0, "empty window");
    CHECK(union_in(a, 1, 60, 50) == 0, "inverted window");
    return 0;
}

/* The union over a region of many parts, swept in one pass, against a
 * count of every covered nanosecond (random intervals and parts). */
static int check_union_in_region(void)
{
    enum { N = 200, PARTS = 30, SPAN = PARTS * (20 + 39) + 50 + 60 }; /* past every part's and interval's end */
    trace_interval iv[N], parts[PARTS];
    unsigned seed = 12345;
    for (int round = 0; round < 50; round++) {
        uint64_t at = 0;
        for (int k = 0; k < PARTS; k++) { /* disjoint, in order, some touching, some empty */
            at += (uint64_t)(rand_r(&seed) % 3) * 10;
            parts[k].start = at;
            at += (uint64_t)(rand_r(&seed) % 40);
            parts[k].end = at;
        }
        unsigned char covered[SPAN] = {0}, inside[SPAN] = {0};
        for (int i = 0; i < N; i++) {
            iv[i].start = (uint64_t)(rand_r(&seed) % (at + 50));
            iv[i].end = iv[i].start + (uint64_t)(rand_r(&seed) % 60);
            for (uint64_t t = iv[i].start; t < iv[i].end; t++)
                covered[t] = 1;
        }
        for (int k = 0; k < PARTS; k++)
            for (uint64_t t = parts[k].start; t < parts[k].end; t++)
                inside[t] = 1;
        uint64_t want = 0, got = 1;
        for (size_t t = 0; t < sizeof covered; t++)
            want += covered[t] && inside[t];
        CHECK(trace_union_in_region(iv, N, parts, PARTS, &got) == 0 && got == want, "round %d: %llu, not %llu",
              round, (unsigned long long)got, (unsigned long long)want);
    }
    return 0;
}

/* Utilization and GEMM share from kernel events over a window. */
static int check_gpu_stats_window(void)
{
    lc_error err;
    trace_buffer *t = trace_create("test", &err);
    CHECK(t, "%s", err.msg);
    trace_event k = {.kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 1};
    k.start_ns = 100; k.end_ns = 300; k.name = "sm90_xmma_gemm_f32f32";   /* gemm 200 */
    trace_add(t, &k);
    k.start_ns = 250; k.end_ns = 400; k.name = "cell_forward_kernel";     /* overlaps: +100 */
    trace_add(t, &k);
    k.start_ns = 600; k.end_ns = 700; k.name = "void gemv2T_kernel_val"; /* gemm 100 */
    trace_add(t, &k);
    k.start_ns = 900; k.end_ns = 1200; k.name = "outside_kernel";        /* 100 inside */
    trace_add(t, &k);
    trace_event h = {.start_ns = 0, .end_ns = 1000, .name = "host", .kind = TRACE_HOST_RANGE,
                     .pid = TRACE_PID_HOST, .tid = 1};
    trace_add(t, &h); /* not a kernel: ignored */
    trace_gpu_stats st;
    const trace_interval whole[] = {{0, 1000}}, later[] = {{2000, 3000}}, empty[] = {{500, 500}};
    CHECK(trace_gpu_stats_region(t, whole, 1, &st, &err) == 0, "%s", err.msg);
    CHECK(st.window_ns == 1000 && st.busy_ns == 500 && st.gemm_ns == 300, "busy %llu gemm %llu",
          (unsigned long long)st.busy_ns, (unsigned long long)st.gemm_ns);
    CHECK(st.kernels == 4 && st.gemm_kernels == 2, "kernels %zu gemm %zu", st.kernels, st.gemm_kernels);
    CHECK_NEAR(st.utilization, 0.5, 1e-12);
    CHECK_NEAR(st.gemm_share, 0.6, 1e-12);
    CHECK(trace_gpu_stats_region(t, later, 1, &st, &err) == 0, "%s", err.msg);
    CHECK(st.kernels == 0 && st.utilization == 0 && st.gemm_share == 0, "no kernels: zeros, not NaN");
    CHECK(trace_gpu_stats_region(t, empty, 1, &st, &err) == 0 && st.utilization == 0, "empty window");
    /* two iterations with a gap between (a drawn iteration's check): the gap is not in the region */
    const trace_interval two[] = {{0, 280}, {580, 1000}};
    CHECK(trace_gpu_stats_region(t, two, 2, &st, &err) == 0, "%s", err.msg);
    CHECK(st.window_ns == 700 && st.busy_ns == 180 + 200 && st.gemm_ns == 180 + 100 && st.kernels == 4,
          "window %llu busy %llu gemm %llu kernels %zu", (unsigned long long)st.window_ns,
          (unsigned long long)st.busy_ns, (unsigned long long)st.gemm_ns, st.kernels);
    trace_destroy(t);
    return 0;
}

int test_trace_interval_union(void)
{
    if (check_interval_union() || check_union_in_region())
        return 1;
    return check_gpu_stats_window();
}

/* The table of operations of a window: each kind and name once, calls,
 * totals and lanes of the events that start in it, longest first; ranges
 * are not operations; the calling thread's coverage. */
static int check_op_rows(const trace_op_table *tab)
{
    static const struct {
        const char *name;
        int kind;
        unsigned calls, lanes;
        uint64_t total;
    } want[] = {
        {"sgemm_128x64", TRACE_KERNEL, 3, 2, 450},   /* two streams; the one at 990 ends past the window */
        {"step.forward", TRACE_HOST_OP, 4, 2, 340},  /* the caller's lane and a team member's */
        {"cudaLaunchKernel", TRACE_API, 4, 1, 40},
        {"Memcpy HtoD", TRACE_MEMCPY, 1, 1, 30},
        {"barrier", TRACE_HOST_OP, 2, 2, 30},        /* ties with the memcpy: by kind */
    };
    CHECK(tab->n == sizeof want / sizeof want[0], "%zu rows", tab->n);
    for (size_t i = 0; i < tab->n; i++) {
        const trace_op_row *r = &tab->rows[i];
        CHECK(!strcmp(r->name, want[i].name) && r->kind == want[i].kind, "row %zu: %s (%s)", i, r->name,
              trace_kind_name(r->kind));
        CHECK(r->calls == want[i].calls && r->lanes == want[i].lanes && r->total_ns == want[i].total,
              "%s: %llu calls, %u lanes, %llu ns", r->name, (unsigned long long)r->calls, r->lanes,
              (unsigned long long)r->total_ns);
    }
    CHECK(tab->window_ns == 1000 && tab->main_covered_ns == 200, "window %llu covered %llu",
          (unsigned long long)tab->window_ns, (unsigned long long)tab->main_covered_ns);
    return 0;
}

static int check_op_table(void)
{
    lc_error err;
    trace_buffer *t = trace_create("test", &err);
    CHECK(t, "%s", err.msg);
    const trace_event events[] = {
        {.start_ns = 0, .end_ns = 2000, .name = "x iteration 0", .kind = TRACE_HOST_RANGE, .pid = TRACE_PID_HOST, .tid = 1},
        {.start_ns = 100, .end_ns = 200, .name = "step.forward", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 1},
        {.start_ns = 200, .end_ns = 210, .name = "barrier", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 1},
        {.start_ns = 210, .end_ns = 260, .name = "step.forward", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 1},
        {.start_ns = 100, .end_ns = 250, .name = "step.forward", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 2},
        {.start_ns = 250, .end_ns = 270, .name = "barrier", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 2},
        {.start_ns = 50, .end_ns = 90, .name = "step.forward", .kind = TRACE_HOST_OP, .pid = TRACE_PID_HOST, .tid = 1},
        {.start_ns = 300, .end_ns = 400, .name = "sgemm_128x64", .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 7},
        {.start_ns = 500, .end_ns = 650, .name = "sgemm_128x64", .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 9},
        {.start_ns = 990, .end_ns = 1190, .name = "sgemm_128x64", .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 7},
        {.start_ns = 1020, .end_ns = 1500, .name = "sgemm_128x64", .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU, .tid = 7},
        {.start_ns = 20, .end_ns = 50, .name = "Memcpy HtoD", .kind = TRACE_MEMCPY, .pid = TRACE_PID_GPU, .tid = 9},
        {.start_ns = 400, .end_ns = 600, .name = "step 3", .kind = TRACE_MARKER, .pid = TRACE_PID_NVTX, .tid = 5},
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK(trace_add(t, &events[i]) == 0, "add %zu", i);
    for (int i = 0; i < 4; i++) {
        trace_event api = {.start_ns = 280 + 10 * (uint64_t)i, .end_ns = 290 + 10 * (uint64_t)i,
                           .name = "cudaLaunchKernel", .kind = TRACE_API, .pid = TRACE_PID_API, .tid = 4242};
        CHECK(trace_add(t, &api) == 0, "add");
    }
    /* region [20, 1020): what starts in it counts whole (the kernel at 990), what starts at 1020 not */
    trace_op_table tab;
    const trace_interval whole[] = {{20, 1020}}, later[] = {{3000, 4000}}, two[] = {{20, 95}, {300, 1020}};
    CHECK(trace_op_table_region(t, whole, 1, &tab, &err) == 0, "%s", err.msg);
    int rc = check_op_rows(&tab);
    trace_op_table_free(&tab);
    CHECK(rc == 0, "the table of [20, 1020)");
    CHECK(trace_op_table_region(t, later, 1, &tab, &err) == 0 && tab.n == 0 && tab.main_covered_ns == 0,
          "an empty window: no rows");
    trace_op_table_free(&tab);
    /* two parts: what starts between them (100..300) is left out; coverage clipped to the parts */
    CHECK(trace_op_table_region(t, two, 2, &tab, &err) == 0, "%s", err.msg);
    CHECK(tab.window_ns == 795 && tab.main_covered_ns == 40 && tab.n == 4, "window %llu covered %llu, %zu rows",
          (unsigned long long)tab.window_ns, (unsigned long long)tab.main_covered_ns, tab.n);
    CHECK(!strcmp(tab.rows[0].name, "sgemm_128x64") && tab.rows[0].calls == 3, "%s", tab.rows[0].name);
    trace_op_table_free(&tab);
    trace_destroy(t);
    return 0;
}

/* Operation spans: nothing attached, nothing recorded; attached, each
 * thread on its lane (1 + its rank in a team). */
static uint64_t fake_clock_ns;
static uint64_t fake_clock(void) { return fake_clock_ns += 10; }

static void span_member(void *arg, lc_team *team, int rank, int size)
{
    (void)arg, (void)team, (void)size;
    TRACE_OP(rank ? "member" : "caller", (void)0);
}

static int check_op_spans(void)
{
    lc_error err;
    trace_buffer *t = trace_create("test", &err);
    CHECK(t, "%s", err.msg);
    TRACE_OP("unattached", (void)0);
    CHECK(trace_count(t) == 0 && trace_op_begin() == 0, "nothing attached: nothing recorded");
    trace_ops_attach(t, fake_clock);
    TRACE_OP("attached", (void)0);
    lc_parallel_team(2, span_member, NULL);
    trace_ops_attach(NULL, NULL);
    TRACE_OP("detached", (void)0);
    const size_t n = trace_count(t);
    int member_lane = 0, caller_lane = 0;
    for (size_t i = 0; i < n; i++) {
        trace_event e;
        CHECK(trace_get(t, i, &e) == 0 && e.kind == TRACE_HOST_OP && e.end_ns > e.start_ns, "event %zu", i);
        CHECK(strcmp(e.name, "detached") && strcmp(e.name, "unattached"), "%s recorded", e.name);
        member_lane |= !strcmp(e.name, "member") && e.tid == 2;
        caller_lane |= !strcmp(e.name, "caller") && e.tid == 1;
    }
    CHECK(caller_lane && (n == 2 || member_lane), "%zu events; a member on lane 2", n);
    trace_destroy(t);
    return 0;
}

int test_trace_op_table(void)
{
    return check_op_table() || check_op_spans();
}

int test_trace_gemm_classification(void)
{
    static const char *const gemm[] = {
        "ampere_sgemm_128x64_nn",
        "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(T1::Params)",
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>",
        "void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false>",
        "void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>",
        "void cudnn::detail::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>",
        "implicit_convolve_sgemm",
        "CUTLASS_GEMM_UPPERCASE",
        "sm80_xmma_fprop_implicit_gemm_f32f32",
        "matmul_kernel",
        NULL,
    };
    static const char *const other[] = {
        "cell_forward_kernel", "cell_backward_kernel", "ew_binary_kernel", "ew_unary_kernel",
        "bias_grad_partial_kernel", "bias_rows_kernel",
        "void RNN_blockPersist_fp_LSTM<float, float, float, 128>", "elemWiseRNNcell", "Memset",
        "", NULL,
    };
    for (int i = 0; gemm[i]; i++)
        CHECK(trace_is_gemm_kernel(gemm[i]), "'%s' is a GEMM kernel", gemm[i]);
    for (int i = 0; other[i]; i++)
        CHECK(!trace_is_gemm_kernel(other[i]), "'%s' is not a GEMM kernel", other[i]);
    CHECK(!trace_is_gemm_kernel(NULL), "NULL");
    return 0;
}

int test_trace_profile_file_name(void)
{
    const char *const names[] = {"cudnn", "aten", "jit"};
    lstm_shape s = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1};
    struct tm when;
    memset(&when, 0, sizeof when);
    when.tm_year = 2024 - 1900;
    when.tm_mon = 2; /* March */
    when.tm_mday = 5;
    when.tm_hour = 14;
    when.tm_min = 7;
    char buf[512];
    lc_error err;
    CHECK(prof_output_name(buf, sizeof buf, "out", names, 3, &s, &when, "nsys-rep", &err) == 0, "%s", err.msg);
    CHECK(!strcmp(buf, "out/prof_cudnn-aten-jit_s100-l1-i512-h512-b64_030524-1407.nsys-rep"), "%s", buf);
    CHECK(prof_output_name(buf, sizeof buf, "/tmp/p/", names, 1, &s, &when, "json", &err) == 0, "%s", err.msg);
    CHECK(!strcmp(buf, "/tmp/p/prof_cudnn_s100-l1-i512-h512-b64_030524-1407.json"), "%s", buf);
    s = (lstm_shape){.seq_length = 7, .batch = 3, .input_size = 5, .hidden_size = 11, .num_layers = 2};
    when.tm_mon = 11; when.tm_mday = 31; when.tm_hour = 0; when.tm_min = 0; when.tm_year = 2031 - 1900;
    CHECK(prof_output_name(buf, sizeof buf, "", names + 1, 2, &s, &when, "ncu-rep", &err) == 0, "%s", err.msg);
    CHECK(!strcmp(buf, "prof_aten-jit_s7-l2-i5-h11-b3_123131-0000.ncu-rep"), "%s", buf);
    char small[16];
    CHECK(prof_output_name(small, sizeof small, "out", names, 3, &s, &when, "json", &err) == 1, "too long");
    /* where a trace may go (the check every output gets: cmd/session.h) */
    CHECK(path_check_writable_dir("/tmp", 0, &err) == LC_OK, "%s", err.msg);
    CHECK(path_check_writable_file("/tmp/x.json", &err) == LC_OK, "%s", err.msg);
    CHECK(path_check_writable_file("x.json", &err) == LC_OK, "%s", err.msg);
    CHECK(path_check_writable_file("/nonexistent-lstmcheck/x.json", &err) == LC_BAD_INPUT, "missing dir");
    CHECK(strstr(err.msg, "/nonexistent-lstmcheck"), "%s", err.msg);
    CHECK(path_check_writable_file("", &err) == LC_BAD_INPUT, "an empty file name");
    CHECK(path_check_writable_file("/tmp", &err) == LC_BAD_INPUT, "a directory as a file name");
    CHECK(path_check_writable_file("/proc/x.json", &err) == LC_BAD_INPUT, "/proc takes no files");
    return 0;
}

int test_trace_memstats_summary(void)
{
    memstats_sample s[3];
    memset(s, 0, sizeof s);
    s[0] = (memstats_sample){.time_ms = 1, .peak_device_bytes = 100, .peak_rss_bytes = 10,
                             .have_device = 1, .dev_free_bytes = 500, .dev_used_bytes = 300};
    s[1] = (memstats_sample){.time_ms = 2, .peak_device_bytes = 300, .peak_rss_bytes = 30,
                             .have_device = 1, .dev_free_bytes = 400, .dev_used_bytes = 400};
    s[2] = (memstats_sample){.time_ms = 3, .peak_device_bytes = 200, .peak_rss_bytes = 20};
    memstats_summary m;
    memstats_summarize(s, 3, &m);
    CHECK(m.n == 3, "n");
    CHECK_NEAR(m.time_mean_ms, 2.0, 1e-12);
    CHECK_NEAR(m.time_std_ms, 1.0, 1e-12); /* unbiased */
    CHECK(m.max_peak_device_bytes == 300 && m.max_peak_rss_bytes == 30, "maxima");
    CHECK(m.have_device && m.min_dev_free_bytes == 400 && m.max_dev_used_bytes == 400, "device");
    memstats_summarize(s + 2, 1, &m);
    CHECK(m.n == 1 && m.time_std_ms == 0 && !m.have_device, "one sample, no device");
    memstats_summarize(s, 0, &m);
    CHECK(m.n == 0 && m.time_mean_ms == 0, "none");
    CHECK(memstats_peak_rss_bytes() > 0, "peak RSS");
    memstats_device d;
    lc_error err;
    CHECK(memstats_device_query(&d, &err) == 0, "%s", err.msg);
    lc_error why;
    CHECK(d.have == (device_cuda_count(&why) > 0), "device memory iff a device");
    return 0;
}

/* The runner's table of operations from real CUPTI records: kernels and
 * runtime API calls among its rows, and the kernels' totals add up to the
 * kernel events that start in the window. */
static int check_gpu_op_table(prof_session *prof, const char *name)
{
    lc_error err = {{0}};
    trace_op_table tab;
    CHECK(prof->nwindows > 0, "the runner's region kept");
    const prof_window *w = &prof->windows[prof->nwindows - 1];
    CHECK(trace_op_table_region(prof->trace, w->parts, w->nparts, &tab, &err) == 0, "%s", err.msg);
    uint64_t kernel_rows = 0, trace_kernels = 0;
    int api_rows = 0;
    for (size_t i = 0; i < tab.n; i++) {
        kernel_rows += tab.rows[i].kind == TRACE_KERNEL ? tab.rows[i].total_ns : 0;
        api_rows += tab.rows[i].kind == TRACE_API;
    }
    for (size_t i = 0; i < trace_count(prof->trace); i++) {
        trace_event e;
        if (!trace_get(prof->trace, i, &e) && e.kind == TRACE_KERNEL && trace_region_holds(w->parts, w->nparts, e.start_ns))
            trace_kernels += e.end_ns - e.start_ns;
    }
    fprintf(stderr, "%s: %zu operations, top %s (%s)\n", name, tab.n, tab.n ? tab.rows[0].name : "-",
            tab.n ? trace_kind_name(tab.rows[0].kind) : "-");
    const size_t n = tab.n;
    trace_op_table_free(&tab);
    CHECK(n > 0 && kernel_rows > 0 && kernel_rows == trace_kernels, "%s: kernels %llu in the table, %llu in the trace",
          name, (unsigned long long)kernel_rows, (unsigned long long)trace_kernels);
    CHECK(api_rows > 0, "%s: CUDA runtime calls among the operations", name);
    return 0;
}

/* One GPU runner under the built-in trace: kernels land in its timed
 * window, utilization and GEMM share are fractions. 0, 1 (failed), or
 * UNIT_SKIP when the runner is not available here. */
static int profile_one_runner(prof_session *prof, numerics_context *ctx, const char *name)
{
    lc_error why, err = {{0}};
    const runner_ops *r = registry_find(name);
    CHECK(r, "runner %s", name);
    if (r->available(&why) != LC_OK) {
        fprintf(stderr, "%s not available here: %s\n", name, why.msg);
        return UNIT_SKIP;
    }
    const lstm_problem *p;
    const gate_expected *expected;
    CHECK(numerics_context_get(ctx, r, &p, &expected, &err) == 0, "%s", err.msg);
    harness_config cfg = {.warmup = 1, .min_samples = 3, .max_samples = 3, .hooks = prof_hooks(prof)};
    harness_result res;
    CHECK(prof_runner_begin(prof, r, RUNNER_GROUP_LSTM, &err) == 0, "%s", err.msg);
    CHECK(harness_run(r, p, &cfg, &res, &err) == 0, "%s: %s", r->name, err.msg);
    prof_runner_stats st;
    CHECK(prof_runner_end(prof, &res, &st, &err) == 0, "%s", err.msg);
    fprintf(stderr, "%s: %zu kernels (%zu GEMM), utilization %.3f, GEMM share %.3f, window %.1f us\n",
            r->name, st.gpu.kernels, st.gpu.gemm_kernels, st.gpu.utilization, st.gpu.gemm_share,
            (double)st.gpu.window_ns / 1e3);
    CHECK(st.have_window && st.have_gpu_stats, "stats");
    CHECK(st.gpu.kernels > 0, "%s: kernels in the timed window", r->name);
    CHECK(st.gpu.utilization > 0 && st.gpu.utilization <= 1.0, "utilization %g", st.gpu.utilization);
    CHECK(st.gpu.gemm_share >= 0 && st.gpu.gemm_share <= 1.0, "gemm share %g", st.gpu.gemm_share);
    if (!strcmp(r->name, "jit"))
        CHECK(st.gpu.gemm_kernels > 0 && st.gpu.gemm_share > 0, "jit runs cuBLAS GEMMs");
    CHECK(st.before.have && st.after.have, "device memory before and after");
    CHECK(st.summary.n == 3 && st.summary.time_mean_ms > 0, "summary");
    if (check_gpu_op_table(prof, r->name))
        return 1;
    harness_result_free(&res);
    return 0;
}

/* The session's trace, written and valid, with GPU events in it. */
static int check_gpu_trace(prof_session *prof)
{
    lc_error err = {{0}};
    char path[] = "/tmp/lstmcheck_gpu_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    CHECK(prof_finish(prof, path, &err) == 0, "%s", err.msg);
    size_t len;
    char *text = trace_to_json(prof->trace, &len, &err);
    CHECK(text, "%s", err.msg);
    int gpu, nvtx;
    int n = check_trace_json(text, &gpu, &nvtx);
    fprintf(stderr, "trace: %d events, %d on the GPU, %d NVTX ranges through CUPTI\n", n, gpu, nvtx);
    CHECK(n > 0 && gpu > 0, "GPU events in the trace");
    free(text);
    unlink(path);
    return 0;
}

/* Two GPU runners under the built-in trace with real CUPTI: kernels land in
 * each runner's timed window, utilization and GEMM share are fractions, and
 * the written trace is valid. Skipped without a CUDA device. */
int test_trace_gpu_two_runners(void)
{
    lc_error why;
    if (device_cuda_count(&why) <= 0) {
        fprintf(stderr, "skipped: %s\n", why.msg);
        return UNIT_SKIP;
    }
    const char *const names[] = {"jit", "cudnn"};
    lstm_shape shape = {.seq_length = 8, .batch = 4, .input_size = 16, .hidden_size = 16, .num_layers = 1};
    lc_error err = {{0}};
    numerics_context ctx;
    CHECK(numerics_context_init(&ctx, &shape, 17, NULL, &err) == 0, "%s", err.msg);
    prof_session prof;
    CHECK(prof_begin(&prof, LC_DEVICE_CUDA, 1, 1, &err) == 0, "%s", err.msg);
    CHECK(prof.gpu_trace, "CUPTI collects");
    int ran = 0;
    for (int i = 0; i < 2; i++) {
        const int rc = profile_one_runner(&prof, &ctx, names[i]);
        if (rc == UNIT_SKIP)
            continue;
        if (rc)
            return 1;
        ran++;
    }
    numerics_context_free(&ctx);
    if (check_gpu_trace(&prof))
        return 1;
    prof_free(&prof);
    return ran ? 0 : UNIT_SKIP;
}
