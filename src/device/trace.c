/* The built-in trace (see trace.h). */
#include "device/trace.h"
#include "base/files.h"
#include "base/json.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_DEPTH 64

typedef struct lane_name {
    uint32_t pid, tid;
    const char *name;
} lane_name;

struct trace_buffer {
    pthread_mutex_t lock;
    trace_event *ev;
    size_t n, cap;
    /* interned strings: open addressing, power-of-two capacity */
    char **strs;
    size_t nstrs, cap_strs;
    long open[TRACE_MAX_DEPTH]; /* open host ranges (indices), innermost last */
    int depth, overflow_depth;
    lane_name *lanes;
    size_t nlanes, cap_lanes;
    uint64_t dropped_cupti, dropped_oom;
    char clock[32];
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Caller holds the lock. NULL on out of memory. */
static const char *intern(trace_buffer *t, const char *s)
{
    if (!s)
        return NULL;
    if (2 * (t->nstrs + 1) > t->cap_strs) {
        size_t cap = t->cap_strs ? 2 * t->cap_strs : 256;
        char **grown = calloc(cap, sizeof *grown);
        if (!grown)
            return NULL;
        for (size_t i = 0; i < t->cap_strs; i++) {
            if (!t->strs[i])
                continue;
            size_t k = hash_str(t->strs[i]) & (cap - 1);
            while (grown[k])
                k = (k + 1) & (cap - 1);
            grown[k] = t->strs[i];
        }
        free(t->strs);
        t->strs = grown;
        t->cap_strs = cap;
    }
    size_t k = hash_str(s) & (t->cap_strs - 1);
    while (t->strs[k]) {
        if (!strcmp(t->strs[k], s))
            return t->strs[k];
        k = (k + 1) & (t->cap_strs - 1);
    }
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len + 1);
    t->strs[k] = copy;
    t->nstrs++;
    return copy;
}

trace_buffer *trace_create(const char *clock, lc_error *err)
{
    trace_buffer *t = calloc(1, sizeof *t);
    if (!t) {
        lc_error_set(err, "out of host memory for the trace");
        return NULL;
    }
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        lc_error_set(err, "trace: pthread_mutex_init failed");
        free(t);
        return NULL;
    }
    snprintf(t->clock, sizeof t->clock, "%s", clock ? clock : "unknown");
    return t;
}

void trace_destroy(trace_buffer *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap_strs; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->ev);
    free(t->lanes);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Caller holds the lock. Returns the index or -1 (dropped). */
static long add_locked(trace_buffer *t, const trace_event *e)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        trace_event *grown = realloc(t->ev, cap * sizeof *grown);
        if (!grown) {
            t->dropped_oom++;
            return -1;
        }
        t->ev = grown;
        t->cap = cap;
    }
    trace_event x = *e;
    x.name = intern(t, e->name ? e->name : "");
    x.args = e->args ? intern(t, e->args) : NULL;
    if (!x.name || (e->args && !x.args)) {
        t->dropped_oom++;
        return -1;
    }
    if (x.end_ns < x.start_ns)
        x.end_ns = x.start_ns;
    t->ev[t->n] = x;
    return (long)t->n++;
}

int trace_add(trace_buffer *t, const trace_event *e)
{
    pthread_mutex_lock(&t->lock);
    long i = add_locked(t, e);
    pthread_mutex_unlock(&t->lock);
    return i < 0;
}

long trace_host_push(trace_buffer *t, const char *name, uint64_t now_ns)
{
    trace_event e = {.start_ns = now_ns, .end_ns = now_ns, .name = name,
                     .kind = TRACE_HOST_RANGE, .pid = TRACE_PID_HOST, .tid = 1};
    pthread_mutex_lock(&t->lock);
    long i = -1;
    if (t->depth == TRACE_MAX_DEPTH) {
        t->overflow_depth++;
        t->dropped_oom++;
    } else {
        i = add_locked(t, &e);
        t->open[t->depth++] = i; /* -1 keeps the nesting when dropped */
    }
    pthread_mutex_unlock(&t->lock);
    return i;
}

void trace_host_pop(trace_buffer *t, uint64_t now_ns)
{
    pthread_mutex_lock(&t->lock);
    if (t->overflow_depth > 0) {
        t->overflow_depth--;
    } else if (t->depth > 0) {
        long i = t->open[--t->depth];
        if (i >= 0)
            t->ev[i].end_ns = now_ns < t->ev[i].start_ns ? t->ev[i].start_ns : now_ns;
    }
    pthread_mutex_unlock(&t->lock);
}

void trace_set_args(trace_buffer *t, long i, const char *args_json)
{
    pthread_mutex_lock(&t->lock);
    if (i >= 0 && (size_t)i < t->n) {
        const char *a = args_json ? intern(t, args_json) : NULL;
        if (a || !args_json)
            t->ev[i].args = a;
    }
    pthread_mutex_unlock(&t->lock);
}

void trace_name_lane(trace_buffer *t, uint32_t pid, uint32_t tid, const char *name)
{
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nlanes; i++) {
        if (t->lanes[i].pid == pid && t->lanes[i].tid == tid) {
            pthread_mutex_unlock(&t->lock);
            return;
        }
    }
    if (t->nlanes == t->cap_lanes) {
        size_t cap = t->cap_lanes ? 2 * t->cap_lanes : 16;
        lane_name *grown = realloc(t->lanes, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->lanes = grown;
        t->cap_lanes = cap;
    }
    const char *s = intern(t, name);
    if (s)
        t->lanes[t->nlanes++] = (lane_name){pid, tid, s};
    pthread_mutex_unlock(&t->lock);
}

void trace_note_dropped(trace_buffer *t, uint64_t n)
{
    pthread_mutex_lock(&t->lock);
    t->dropped_cupti += n;
    pthread_mutex_unlock(&t->lock);
}

size_t trace_count(trace_buffer *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n;
    pthread_mutex_unlock(&t->lock);
    return n;
}

int trace_get(trace_buffer *t, size_t i, trace_event *out)
{
    pthread_mutex_lock(&t->lock);
    int rc = 1;
    if (i < t->n) {
        *out = t->ev[i];
        rc = 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

uint64_t trace_dropped(trace_buffer *t)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->dropped_cupti + t->dropped_oom;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* ---- JSON ---- */

static int cmp_events(const void *pa, const void *pb)
{
    const trace_event *a = pa, *b = pb;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns ? -1 : 1; /* parent first */
    return 0;
}

const char *trace_kind_name(int kind)
{
    switch (kind) {
    case TRACE_KERNEL: return "kernel";
    case TRACE_MEMCPY: return "memcpy";
    case TRACE_MEMSET: return "memset";
    case TRACE_MARKER: return "nvtx";
    case TRACE_HOST_OP: return "op";
    case TRACE_API: return "api";
    default: return "host";
    }
}

/* A copy of the events in writing order, ranges still open ending at the
 * last event's end; *origin is the earliest start. Caller holds the lock. */
static trace_event *events_to_write(trace_buffer *t, uint64_t *origin)
{
    const size_t n = t->n;
    trace_event *ev = malloc((n ? n : 1) * sizeof *ev);
    if (!ev)
        return NULL;
    if (n)
        memcpy(ev, t->ev, n * sizeof *ev);
    uint64_t last = 0;
    *origin = n ? UINT64_MAX : 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].end_ns > last) last = ev[i].end_ns;
        if (ev[i].start_ns < *origin) *origin = ev[i].start_ns;
    }
    for (int d = 0; d < t->depth; d++)
        if (t->open[d] >= 0)
            ev[t->open[d]].end_ns = last;
    qsort(ev, n, sizeof *ev, cmp_events);
    return ev;
}

/* A metadata event: {"ph": "M", "pid": .., "tid": .., "name": what, "args": {key: value}} */
static void json_meta(json_writer *w, uint32_t pid, uint32_t tid, const char *what, const char *key,
                      const char *value)
{
    json_line_break(w);
    json_object_begin(w);
    json_member_string(w, "ph", "M");
    json_member_uint(w, "pid", pid);
    json_member_uint(w, "tid", tid);
    json_member_string(w, "name", what);
    json_key(w, "args");
    json_object_begin(w);
    json_member_string(w, key, value);
    json_object_end(w);
    json_object_end(w);
}

/* One process per pid seen, then the lanes' names. */
static void json_lanes(json_writer *w, const trace_buffer *t, const trace_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint32_t pid = ev[i].pid;
        if (i && pid == ev[i - 1].pid)
            continue;
        char name[64];
        if (pid == TRACE_PID_HOST)
            snprintf(name, sizeof name, "host (lstmcheck)");
        else if (pid == TRACE_PID_NVTX)
            snprintf(name, sizeof name, "NVTX (CUPTI)");
        else if (pid == TRACE_PID_API)
            snprintf(name, sizeof name, "CUDA API (CUPTI)");
        else
            snprintf(name, sizeof name, "GPU %u", (unsigned)(pid - TRACE_PID_GPU));
        json_meta(w, pid, 0, "process_name", "name", name);
        /* torch's traces label GPU processes so; functorch's
         * compute_utilization finds GPU lanes by this label */
        if (pid >= TRACE_PID_GPU)
            json_meta(w, pid, 0, "process_labels", "labels", name);
    }
    for (size_t i = 0; i < t->nlanes; i++)
        json_meta(w, t->lanes[i].pid, t->lanes[i].tid, "thread_name", "name", t->lanes[i].name);
}

static void json_launch(json_writer *w, const trace_launch *l)
{
    json_object_begin(w);
    json_key(w, "grid");
    json_array_begin(w);
    for (int i = 0; i < 3; i++)
        json_int(w, l->grid[i]);
    json_array_end(w);
    json_key(w, "block");
    json_array_begin(w);
    for (int i = 0; i < 3; i++)
        json_int(w, l->block[i]);
    json_array_end(w);
    json_member_uint(w, "registers", l->registers);
    json_member_int(w, "shared_bytes", l->shared_bytes);
    json_object_end(w);
}

/* A complete ("X") event; times in microseconds from origin, exactly. */
static void json_event(json_writer *w, const trace_event *e, uint64_t origin)
{
    json_line_break(w);
    json_object_begin(w);
    json_member_string(w, "ph", "X");
    json_member_string(w, "cat", trace_kind_name(e->kind));
    json_member_string(w, "name", e->name);
    json_member_uint(w, "pid", e->pid);
    json_member_uint(w, "tid", e->tid);
    json_key(w, "ts");
    json_fixed(w, e->start_ns - origin, 3);
    json_key(w, "dur");
    json_fixed(w, e->end_ns - e->start_ns, 3);
    if (e->args) {
        json_key(w, "args");
        json_raw(w, e->args);
    } else if (e->kind == TRACE_KERNEL && e->launch.block[0] > 0) {
        json_key(w, "args");
        json_launch(w, &e->launch);
    } else if (e->kind == TRACE_MEMCPY || e->kind == TRACE_MEMSET) {
        json_key(w, "args");
        json_object_begin(w);
        json_member_uint(w, "bytes", e->bytes);
        json_object_end(w);
    }
    json_object_end(w);
}

/* The whole trace, one event per line. Caller holds the lock. */
static void json_trace(json_writer *w, const trace_buffer *t, const trace_event *ev, uint64_t origin)
{
    json_object_begin(w);
    json_member_string(w, "displayTimeUnit", "ms");
    json_key(w, "otherData");
    json_object_begin(w);
    json_member_string(w, "tool", "lstmcheck");
    json_member_string(w, "clock", t->clock);
    json_member_uint(w, "origin_ns", origin);
    json_member_uint(w, "dropped_records", t->dropped_cupti + t->dropped_oom);
    json_object_end(w);
    json_line_break(w);
    json_key(w, "traceEvents");
    json_array_begin(w);
    json_lanes(w, t, ev, t->n);
    for (size_t i = 0; i < t->n; i++)
        json_event(w, &ev[i], origin);
    json_line_break(w);
    json_array_end(w);
    json_object_end(w);
}

char *trace_to_json(trace_buffer *t, size_t *len, lc_error *err)
{
    pthread_mutex_lock(&t->lock);
    const size_t n = t->n;
    uint64_t origin;
    trace_event *ev = events_to_write(t, &origin);
    char *text = NULL;
    if (ev) {
        json_writer w;
        json_init(&w, JSON_ONE_LINE);
        json_trace(&w, t, ev, origin);
        text = json_take(&w, len);
    }
    pthread_mutex_unlock(&t->lock);
    free(ev);
    if (!text)
        lc_error_set(err, "out of host memory writing the trace (%zu events)", n);
    return text;
}

int trace_write_json(trace_buffer *t, const char *path, lc_error *err)
{
    size_t len = 0;
    char *text = trace_to_json(t, &len, err);
    if (!text)
        return 1;
    int rc = file_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

/* ---- utilization ---- */

static int cmp_intervals(const void *pa, const void *pb)
{
    const trace_interval *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < nl && hay[k] && tolower((unsigned char)hay[k]) == needle[k])
            k++;
        if (k == nl)
            return 1;
    }
    return 0;
}

int trace_is_gemm_kernel(const char *name)
{
    static const char *const keys[] = {"gemm", "gemv", "cutlass", "wgrad", "dgrad", "conv",
                                       "xmma", "matmul", "splitkreduce", NULL};
    if (!name)
        return 0;
    for (int i = 0; keys[i]; i++)
        if (contains_nocase(name, keys[i]))
            return 1;
    return 0;
}

uint64_t trace_region_ns(const trace_interval *parts, size_t nparts)
{
    uint64_t total = 0;
    for (size_t i = 0; i < nparts; i++)
        total += parts[i].end > parts[i].start ? parts[i].end - parts[i].start : 0;
    return total;
}

/* The first part ending after t (nparts: none). */
static size_t part_after(const trace_interval *parts, size_t nparts, uint64_t t)
{
    size_t lo = 0, hi = nparts;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (parts[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int trace_region_holds(const trace_interval *parts, size_t nparts, uint64_t t)
{
    const size_t k = part_after(parts, nparts, t);
    return k < nparts && parts[k].start <= t;
}

/* 1 when [start, end) meets a part. */
static int region_overlaps(const trace_interval *parts, size_t nparts, uint64_t start, uint64_t end)
{
    const size_t k = part_after(parts, nparts, start);
    return k < nparts && parts[k].start < end && start < end;
}

/* Sweeps the intervals, sorted by start, and the parts together: each
 * merged run of intervals is clipped to the parts it meets. Linear after
 * the sort, however many parts. */
int trace_union_in_region(const trace_interval *iv, size_t n, const trace_interval *parts, size_t nparts,
                          uint64_t *out)
{
    *out = 0;
    trace_interval *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return 1;
    if (n)
        memcpy(sorted, iv, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_intervals);
    size_t k = 0; /* parts before k end before the current run */
    for (size_t i = 0; i < n;) {
        uint64_t s = sorted[i].start, e = sorted[i].end;
        for (i++; i < n && sorted[i].start <= e; i++)
            if (sorted[i].end > e)
                e = sorted[i].end;
        while (k < nparts && parts[k].end <= s)
            k++;
        for (size_t j = k; j < nparts && parts[j].start < e; j++) {
            const uint64_t lo = s > parts[j].start ? s : parts[j].start, hi = e < parts[j].end ? e : parts[j].end;
            *out += hi > lo ? hi - lo : 0;
        }
    }
    free(sorted);
    return 0;
}

/* The kernels meeting the region, all and GEMM's, into all and gemm (as
 * many as there are kernels); their counts. Caller holds the lock. */
static void region_kernels(const trace_buffer *t, const trace_interval *parts, size_t nparts, trace_interval *all,
                           size_t *na, trace_interval *gemm, size_t *ng)
{
    *na = *ng = 0;
    for (size_t i = 0; i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        if (e->kind != TRACE_KERNEL || !region_overlaps(parts, nparts, e->start_ns, e->end_ns))
            continue;
        all[(*na)++] = (trace_interval){e->start_ns, e->end_ns};
        if (trace_is_gemm_kernel(e->name))
            gemm[(*ng)++] = (trace_interval){e->start_ns, e->end_ns};
    }
}

int trace_gpu_stats_region(trace_buffer *t, const trace_interval *parts, size_t nparts, trace_gpu_stats *out,
                           lc_error *err)
{
    memset(out, 0, sizeof *out);
    out->window_ns = trace_region_ns(parts, nparts);
    pthread_mutex_lock(&t->lock);
    size_t nk = 0;
    for (size_t i = 0; i < t->n; i++)
        nk += t->ev[i].kind == TRACE_KERNEL;
    trace_interval *all = malloc((nk ? nk : 1) * sizeof *all);
    trace_interval *gemm = malloc((nk ? nk : 1) * sizeof *gemm);
    size_t na = 0, ng = 0;
    if (all && gemm)
        region_kernels(t, parts, nparts, all, &na, gemm, &ng);
    pthread_mutex_unlock(&t->lock);
    int rc = !all || !gemm || trace_union_in_region(all, na, parts, nparts, &out->busy_ns) ||
             trace_union_in_region(gemm, ng, parts, nparts, &out->gemm_ns);
    free(all);
    free(gemm);
    if (rc) {
        lc_error_set(err, "out of host memory for %zu kernel intervals", nk);
        return 1;
    }
    out->kernels = na;
    out->gemm_kernels = ng;
    out->utilization = out->window_ns ? (double)out->busy_ns / (double)out->window_ns : 0;
    out->gemm_share = out->busy_ns ? (double)out->gemm_ns / (double)out->busy_ns : 0;
    return 0;
}
