/* numerics_test [--plugin PATH] RUNNER GROUP: one runner (of the roster,
 * or of the plugin at PATH, loaded as lstmcheck --plugin loads it) against
 * the reference on every shape of one group. Exit 0: every shape passed; 1: a shape failed or
 * errored; 77 (skip): the runner cannot run here, or takes none of the
 * group's shapes. A runner with a dropout mask of its own is also run at
 * its model's p wherever the gate passed it, and judged as
 * check/own_mask.h says: a FAIL there fails the shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/gate.h"
#include "check/isolate.h"
#include "check/own_mask.h"
#include "groups.h"
#include "runners/runner.h"

#define SKIP 77

/* LSTMCHECK_REQUIRE_GPU=1 (ci/gpu-proof.sh): on a GPU machine a GPU runner
 * that skips a shape inside its declared caps fails. */
static int gpu_required(void)
{
    const char *v = getenv("LSTMCHECK_REQUIRE_GPU");
    return v && !strcmp(v, "1");
}

/* Gate r on one case into rep and print the line; the gate's status. */
static lc_status run_case(const runner_ops *r, const numerics_case *nc, gate_report *rep)
{
    int ragged[NUMERICS_MAX_BATCH];
    const int *lengths = numerics_case_lengths(nc, ragged);
    const lstm_shape *s = &nc->shape;
    numerics_context ctx;
    lc_error err;
    if (numerics_context_init(&ctx, s, nc->seed, lengths, &err)) {
        printf("ERROR %s: %s\n", r->name, err.msg);
        gate_report_startf(rep, LC_ERROR, "%s", err.msg);
        return rep->status;
    }
    char line[1024];
    gate_run(r, &ctx, NULL, rep);
    gate_format_summary(r, rep, line, sizeof line);
    printf("T=%d B=%d I=%d H=%d L=%d%s seed=%llu: %s\n", s->seq_length, s->batch, s->input_size,
           s->hidden_size, s->num_layers, lengths ? " varlen" : "", nc->seed, line);
    own_mask_effect e;
    if (rep->status == LC_OK && (r->caps & RUNNER_OWN_MASK)) {
        own_mask_effect_run(r, &ctx, &e);
        own_mask_effect_format(r, &e, line, sizeof line);
        printf("  %s\n", line);
        if (e.status == LC_FAILED || e.status == LC_ERROR) /* the case fails, with this line as its reason */
            gate_report_startf(rep, e.status, "%s", line);
    }
    numerics_context_free(&ctx);
    return rep->status;
}

/* 0 when r can run here; else the exit code, with the line printed (an
 * unusable device is an error, and with `strict` so is no device). */
static int check_available(const runner_ops *r, int strict)
{
    lc_error why = {{0}};
    const int avail = r->available(&why);
    if (avail == LC_ERROR || (avail != LC_OK && strict)) {
        printf("ERROR %s: %s%s\n", r->name, why.msg, avail == LC_ERROR ? "" : " (LSTMCHECK_REQUIRE_GPU=1)");
        return 1;
    }
    if (avail != LC_OK) {
        printf("SKIP %s: %s\n", r->name, why.msg);
        return SKIP;
    }
    return 0;
}

/* What the cases of a group came to. */
typedef struct group_tally {
    int passed, failed, skipped, outside_caps;
    int refused; /* skips a RUNNER_LIBRARY_DECIDES runner's library chose (among skipped) */
    double worst; /* the worst ratio of the cases the gate compared */
} group_tally;

/* A skip: outside the runner's caps, its library's refusal naming the
 * library's status (printed with the case), or inside its caps: a failure
 * under LSTMCHECK_REQUIRE_GPU=1. */
static void count_skip(const runner_ops *r, const numerics_case *nc, const char *reason, int strict,
                       group_tally *t)
{
    int ragged[NUMERICS_MAX_BATCH];
    switch (gate_classify_skip(r, &nc->shape, numerics_case_lengths(nc, ragged), reason)) {
    case GATE_SKIP_OUTSIDE_CAPS:
        t->outside_caps++;
        break;
    case GATE_SKIP_LIBRARY_REFUSED:
        printf("  -> the runner's library refused this shape (a skip, also with LSTMCHECK_REQUIRE_GPU=1)\n");
        t->refused++;
        t->skipped++;
        break;
    case GATE_SKIP_ILL_CONDITIONED: /* the case's seed, not the runner: a group should pick another */
        printf("  -> too ill-conditioned to judge at this seed (a skip, also with LSTMCHECK_REQUIRE_GPU=1)\n");
        t->skipped++;
        break;
    case GATE_SKIP_INSIDE_CAPS:
        if (strict) {
            printf("  -> a skip inside the runner's declared caps fails with LSTMCHECK_REQUIRE_GPU=1\n");
            t->failed++;
        } else {
            t->skipped++;
        }
        break;
    }
}

static void run_group(const runner_ops *r, const numerics_group *g, int strict, group_tally *t)
{
    memset(t, 0, sizeof *t);
    for (int c = 0; c < g->ncases; c++) {
        gate_report rep;
        const lc_status st = run_case(r, &g->cases[c], &rep);
        if (st == LC_OK) t->passed++;
        else if (st != LC_UNSUPPORTED) t->failed++;
        else count_skip(r, &g->cases[c], rep.reason, strict, t);
        if ((st == LC_OK || st == LC_FAILED) && rep.worst.ratio > t->worst)
            t->worst = rep.worst.ratio;
    }
}

/* The summary line and the exit code: 1 when a case failed, or when a
 * usable CUDA runner ran none of the basic group and its library refused
 * none; 77 when none ran. */
static int group_verdict(const runner_ops *r, const numerics_group *g, const group_tally *t)
{
    printf("%s/%s: %d passed, %d failed, %d skipped (%d refused by its library), %d outside the runner's caps; "
           "worst ratio %.3g\n", r->name, g->name, t->passed, t->failed, t->skipped, t->refused, t->outside_caps,
           t->worst);
    if (t->failed)
        return 1;
    if (!t->passed && r->device == LC_DEVICE_CUDA && !strcmp(g->name, "basic") && !t->refused) {
        printf("FAIL %s/basic: a CUDA device is usable here, but no shape of the basic group ran\n", r->name);
        return 1;
    }
    return t->passed ? 0 : SKIP;
}

int main(int argc, char **argv)
{
    const char *plugin = NULL;
    if (argc == 5 && !strcmp(argv[1], "--plugin")) {
        plugin = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: numerics_test [--plugin PATH] RUNNER GROUP\n");
        return 2;
    }
    lc_error err;
    if (plugin && isolate_plugin_load(plugin, &err)) {
        fprintf(stderr, "numerics_test: %s\n", err.msg);
        return 2;
    }
    const runner_ops *r = registry_find(argv[1]);
    if (!r) {
        fprintf(stderr, "numerics_test: unknown runner '%s'\n", argv[1]);
        return 2;
    }
    const numerics_group *g = numerics_group_find(argv[2]);
    if (!g) {
        fprintf(stderr, "numerics_test: unknown group '%s'\n", argv[2]);
        return 2;
    }
    const int strict = r->device == LC_DEVICE_CUDA && gpu_required();
    const int unavailable = check_available(r, strict);
    if (unavailable)
        return unavailable;
    group_tally t;
    run_group(r, g, strict, &t);
    return group_verdict(r, g, &t);
}
