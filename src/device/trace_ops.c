/* Operation spans and the per-operation table (see trace.h). */
#include "device/trace.h"
#include "base/parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The attached buffer and its clock: set together, the clock first, so a
 * span that sees a buffer also sees its clock. */
static uint64_t (*ops_now)(void);
trace_buffer *trace_ops_attached_;

void trace_ops_attach(trace_buffer *t, uint64_t (*now)(void))
{
    if (t)
        __atomic_store_n(&ops_now, now, __ATOMIC_RELEASE);
    __atomic_store_n(&trace_ops_attached_, t, __ATOMIC_RELEASE);
}

uint64_t trace_op_clock_(void)
{
    uint64_t (*now)(void) = __atomic_load_n(&ops_now, __ATOMIC_ACQUIRE);
    return now ? now() : 0;
}

void trace_op_record_(const char *name, uint64_t start)
{
    trace_buffer *t = __atomic_load_n(&trace_ops_attached_, __ATOMIC_ACQUIRE);
    if (!t)
        return;
    const uint32_t lane = 1 + (uint32_t)lc_parallel_rank();
    trace_event e = {.start_ns = start, .end_ns = trace_op_clock_(), .name = name, .kind = TRACE_HOST_OP,
                     .pid = TRACE_PID_HOST, .tid = lane};
    if (lane > 1) {
        char lane_name[32];
        snprintf(lane_name, sizeof lane_name, "team member %u", lane - 1);
        trace_name_lane(t, TRACE_PID_HOST, lane, lane_name);
    }
    trace_add(t, &e);
}

int trace_kind_is_operation(int kind)
{
    return kind == TRACE_HOST_OP || kind == TRACE_KERNEL || kind == TRACE_MEMCPY || kind == TRACE_MEMSET ||
           kind == TRACE_API;
}

/* ---- the table ---- */

/* Events of one operation side by side, each lane's together: names are
 * interned in the buffer, so one name is one pointer. */
static int cmp_by_operation(const void *pa, const void *pb)
{
    const trace_event *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->name != b->name) return (uintptr_t)a->name < (uintptr_t)b->name ? -1 : 1;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

static int cmp_rows(const void *pa, const void *pb)
{
    const trace_op_row *a = pa, *b = pb;
    if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The operation events starting in the region, and the calling thread's
 * intervals among them; NULL on out of memory. */
static trace_event *events_in_region(trace_buffer *t, const trace_interval *parts, size_t nparts, size_t *n,
                                     trace_interval **main_lane, size_t *nmain)
{
    const size_t count = trace_count(t);
    trace_event *ev = malloc((count ? count : 1) * sizeof *ev);
    *main_lane = malloc((count ? count : 1) * sizeof **main_lane);
    if (!ev || !*main_lane) {
        free(ev);
        free(*main_lane);
        *main_lane = NULL;
        return NULL;
    }
    *n = *nmain = 0;
    for (size_t i = 0; i < count; i++) {
        trace_event e;
        if (trace_get(t, i, &e) || !trace_kind_is_operation(e.kind) || !trace_region_holds(parts, nparts, e.start_ns))
            continue;
        ev[(*n)++] = e;
        if (e.kind == TRACE_HOST_OP && e.pid == TRACE_PID_HOST && e.tid == 1)
            (*main_lane)[(*nmain)++] = (trace_interval){e.start_ns, e.end_ns};
    }
    return ev;
}

/* One row per (kind, name) of sorted events. 0, or 1 on out of memory. */
static int rows_of(const trace_event *ev, size_t n, trace_op_table *out)
{
    out->rows = calloc(n ? n : 1, sizeof *out->rows);
    if (!out->rows)
        return 1;
    for (size_t i = 0; i < n; i++) {
        const trace_event *e = &ev[i];
        const int same_op = i > 0 && e->kind == ev[i - 1].kind && e->name == ev[i - 1].name;
        if (!same_op) {
            trace_op_row *r = &out->rows[out->n++];
            r->kind = e->kind;
            if (!(r->name = strdup(e->name)))
                return 1;
        }
        trace_op_row *r = &out->rows[out->n - 1];
        r->calls++;
        r->total_ns += e->end_ns - e->start_ns;
        r->lanes += !same_op || e->pid != ev[i - 1].pid || e->tid != ev[i - 1].tid;
    }
    qsort(out->rows, out->n, sizeof *out->rows, cmp_rows);
    return 0;
}

int trace_op_table_region(trace_buffer *t, const trace_interval *parts, size_t nparts, trace_op_table *out,
                          lc_error *err)
{
    memset(out, 0, sizeof *out);
    out->window_ns = trace_region_ns(parts, nparts);
    size_t n = 0, nmain = 0;
    trace_interval *main_lane = NULL;
    trace_event *ev = events_in_region(t, parts, nparts, &n, &main_lane, &nmain);
    int rc = !ev;
    if (ev) {
        qsort(ev, n, sizeof *ev, cmp_by_operation);
        rc = rows_of(ev, n, out) || trace_union_in_region(main_lane, nmain, parts, nparts, &out->main_covered_ns);
    }
    free(ev);
    free(main_lane);
    if (rc) {
        trace_op_table_free(out);
        lc_error_set(err, "out of host memory for the table of operations");
    }
    return rc;
}

void trace_op_table_free(trace_op_table *tab)
{
    for (size_t i = 0; tab->rows && i < tab->n; i++)
        free(tab->rows[i].name);
    free(tab->rows);
    memset(tab, 0, sizeof *tab);
}
