/* numerics_test RUNNER GROUP: one runner against the reference on every
 * shape of one group. Exit 0: every shape passed; 1: a shape failed or
 * errored; 77 (skip): the runner cannot run here, or takes none of the
 * group's shapes.
 *
 * A GPU that is there must be used: a broken CUDA setup is an error (1),
 * and on a machine with a usable CUDA device a GPU runner's "basic" group
 * (shapes every runner takes) fails instead of skipping. With
 * LSTMCHECK_REQUIRE_GPU=1 (ci/gpu-proof.sh) a GPU runner fails on any skip
 * but a shape outside its declared caps (layers, variable lengths). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "runner.h"

#define SKIP 77
#define MAX_BATCH 16

typedef struct numerics_case {
    lstm_shape shape;
    int varlen;        /* lengths (1 + 7b) mod T + ..., see case_lengths */
    unsigned long long seed;
} numerics_case;

typedef struct numerics_group {
    const char *name;
    numerics_case cases[24];
} numerics_group;

#define SHAPE(T, B, I, H, L) {.seq_length = T, .batch = B, .input_size = I, .hidden_size = H, .num_layers = L}

/* Shapes chosen for what breaks kernels: T=1, B=1, H not a multiple of 32,
 * I != H, more layers, ragged lengths, and one larger shape. */
static const numerics_group groups[] = {
    {"basic", {{SHAPE(5, 3, 7, 9, 1), 0, 17}, {SHAPE(1, 4, 8, 8, 1), 0, 17}, {SHAPE(6, 1, 5, 6, 1), 0, 17},
               {SHAPE(1, 1, 3, 4, 1), 0, 17}, {SHAPE(8, 32, 32, 32, 1), 0, 17}}},
    {"odd_sizes", {{SHAPE(6, 5, 19, 37, 1), 0, 17}, {SHAPE(4, 3, 45, 33, 1), 0, 17},
                   {SHAPE(3, 7, 64, 31, 1), 0, 17}, {SHAPE(5, 2, 1, 65, 1), 0, 17}}},
    {"layers", {{SHAPE(5, 3, 7, 9, 2), 0, 17}, {SHAPE(4, 2, 5, 6, 3), 0, 17}, {SHAPE(1, 2, 3, 37, 3), 0, 17}}},
    {"varlen", {{SHAPE(7, 5, 6, 9, 1), 1, 17}, {SHAPE(9, 6, 5, 33, 2), 1, 17}, {SHAPE(5, 4, 3, 4, 3), 1, 17}}},
    {"large", {{SHAPE(40, 32, 256, 256, 1), 0, 17}, {SHAPE(25, 16, 96, 160, 2), 0, 17}}},
    {"seeds", {{SHAPE(6, 4, 10, 12, 1), 0, 1}, {SHAPE(6, 4, 10, 12, 1), 0, 2}, {SHAPE(6, 4, 10, 12, 1), 0, 3},
               {SHAPE(6, 4, 10, 12, 1), 0, 4}, {SHAPE(6, 4, 10, 12, 1), 0, 5}, {SHAPE(6, 4, 10, 12, 1), 0, 6},
               {SHAPE(6, 4, 10, 12, 1), 0, 7}, {SHAPE(6, 4, 10, 12, 1), 0, 8}, {SHAPE(6, 4, 10, 12, 1), 0, 9},
               {SHAPE(6, 4, 10, 12, 1), 0, 10}, {SHAPE(6, 4, 10, 12, 2), 0, 11}, {SHAPE(6, 4, 10, 12, 2), 0, 12},
               {SHAPE(3, 2, 4, 5, 1), 0, 13}, {SHAPE(3, 2, 4, 5, 1), 0, 14}, {SHAPE(3, 2, 4, 5, 1), 0, 15},
               {SHAPE(3, 2, 4, 5, 1), 0, 16}, {SHAPE(6, 4, 10, 12, 1), 1, 18}, {SHAPE(6, 4, 10, 12, 1), 1, 19},
               {SHAPE(6, 4, 10, 12, 1), 1, 20}, {SHAPE(6, 4, 10, 12, 1), 1, 21}}},
    {NULL, {{SHAPE(0, 0, 0, 0, 0), 0, 0}}},
};

/* Ragged lengths covering 1, T and values between; unsorted on purpose. */
static void case_lengths(const lstm_shape *s, int *len)
{
    for (int b = 0; b < s->batch; b++)
        len[b] = 1 + (b * 5 + 3) % s->seq_length;
    len[s->batch / 2] = s->seq_length;
}

/* 1 when r declares that it takes this case's shape (caps and layers). */
static int within_caps(const runner_ops *r, const numerics_case *nc, int *lengths)
{
    lstm_problem shape_only;
    memset(&shape_only, 0, sizeof shape_only);
    shape_only.shape = nc->shape;
    shape_only.lengths = nc->varlen ? lengths : NULL;
    lc_error why;
    return runner_supports_shape(r, &shape_only, &why) == RUNNER_OK;
}

static int gpu_required(void)
{
    const char *v = getenv("LSTMCHECK_REQUIRE_GPU");
    return v && !strcmp(v, "1");
}

/* Every case of the group; returns the exit code. */
static int run_group(const runner_ops *r, const numerics_group *g, int strict)
{
    int ran = 0, failed = 0, skipped = 0, outside_caps = 0;
    for (int c = 0; c < 24 && g->cases[c].shape.seq_length; c++) {
        const numerics_case *nc = &g->cases[c];
        int lengths[MAX_BATCH];
        if (nc->varlen)
            case_lengths(&nc->shape, lengths);
        numerics_context ctx;
        lc_error err;
        if (numerics_context_init(&ctx, &nc->shape, nc->seed, nc->varlen ? lengths : NULL, &err)) {
            printf("ERROR %s: %s\n", r->name, err.msg);
            return 1;
        }
        const int in_caps = within_caps(r, nc, lengths);
        gate_report rep;
        char line[1024];
        gate_run(r, &ctx, NULL, &rep);
        gate_format_summary(r, &rep, line, sizeof line);
        printf("T=%d B=%d I=%d H=%d L=%d%s seed=%llu: %s\n", nc->shape.seq_length, nc->shape.batch,
               nc->shape.input_size, nc->shape.hidden_size, nc->shape.num_layers,
               nc->varlen ? " varlen" : "", nc->seed, line);
        if (rep.status == GATE_PASS) ran++;
        else if (rep.status != GATE_SKIP) failed++;
        else if (!in_caps) outside_caps++;
        else if (strict) {
            printf("  -> a skip inside the runner's declared caps fails with LSTMCHECK_REQUIRE_GPU=1\n");
            failed++;
        } else skipped++;
        numerics_context_free(&ctx);
    }
    printf("%s/%s: %d passed, %d failed, %d skipped, %d outside the runner's caps\n", r->name,
           g->name, ran, failed, skipped, outside_caps);
    if (failed)
        return 1;
    if (!ran && !strcmp(r->device, "cuda") && !strcmp(g->name, "basic")) {
        printf("FAIL %s/basic: a CUDA device is usable here, but no shape of the basic group ran\n",
               r->name);
        return 1;
    }
    return ran ? 0 : SKIP;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: numerics_test RUNNER GROUP\n");
        return 2;
    }
    const runner_ops *r = registry_find(argv[1]);
    if (!r) {
        fprintf(stderr, "numerics_test: unknown runner '%s'\n", argv[1]);
        return 2;
    }
    const numerics_group *g = NULL;
    for (int i = 0; groups[i].name; i++)
        if (!strcmp(groups[i].name, argv[2]))
            g = &groups[i];
    if (!g) {
        fprintf(stderr, "numerics_test: unknown group '%s'\n", argv[2]);
        return 2;
    }
    const int strict = !strcmp(r->device, "cuda") && gpu_required();
    lc_error why = {{0}};
    const int avail = r->available(&why);
    if (avail == RUNNER_ERROR || (avail != RUNNER_OK && strict)) {
        printf("ERROR %s: %s%s\n", r->name, why.msg,
               avail == RUNNER_ERROR ? "" : " (LSTMCHECK_REQUIRE_GPU=1)");
        return 1;
    }
    if (avail != RUNNER_OK) {
        printf("SKIP %s: %s\n", r->name, why.msg);
        return SKIP;
    }
    return run_group(r, g, strict);
}
