/* fault_test FAULT [T B I H L]: the gate's power. Plants one fault in the
 * cpu runner (test build, src/runners/faults.h) and passes only if the gate calls
 * it FAIL on every shape the fault can show on (at least 3); "none" must
 * pass on all of them. Prints the least visible case: the smallest worst
 * ratio (error / allowed) over those shapes, the fault's margin. With a
 * shape, tries that one shape alone (to measure how the margin scales). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runners/faults.h"
#include "check/gate.h"
#include "runners/runner.h"

#define MAX_BATCH 8

/* Shape sets, by what a fault needs in order to show at all. */
enum {
    SET_BASIC = 1,  /* one and two layers, fixed length */
    SET_LAYERS = 2, /* two to four layers, fixed length */
    SET_VARLEN = 4, /* several layers, lengths with 1 and T among them */
    SET_ALL = SET_BASIC | SET_LAYERS | SET_VARLEN,
};

typedef struct fault_shape {
    unsigned set;
    lstm_shape shape;
    int lengths[MAX_BATCH]; /* all 0: fixed length */
} fault_shape;

#define SHAPE(T, B, I, H, L) {.seq_length = T, .batch = B, .input_size = I, .hidden_size = H, .num_layers = L}

static const fault_shape shapes[] = {
    {SET_BASIC, SHAPE(6, 3, 5, 7, 1), {0}},
    {SET_BASIC, SHAPE(4, 2, 8, 8, 2), {0}},
    {SET_BASIC, SHAPE(20, 8, 64, 48, 1), {0}},
    {SET_LAYERS, SHAPE(5, 3, 7, 9, 3), {0}},
    {SET_LAYERS, SHAPE(1, 2, 3, 6, 2), {0}},
    {SET_LAYERS, SHAPE(8, 4, 16, 20, 4), {0}},
    {SET_VARLEN, SHAPE(7, 5, 6, 9, 2), {1, 7, 3, 1, 7}},
    {SET_VARLEN, SHAPE(9, 6, 5, 12, 3), {7, 1, 9, 1, 5, 9}},
    {SET_VARLEN, SHAPE(5, 4, 3, 4, 2), {5, 1, 1, 5}},
};

/* Where each fault is tried (runners/faults.def). */
static unsigned sets_of(lstm_fault f)
{
    static const unsigned sets[FAULT_COUNT] = {
#define LSTM_FAULT(ENUM, name, kind, shapes) [FAULT_##ENUM] = shapes,
#include "runners/faults.def"
#undef LSTM_FAULT
    };
    return sets[f];
}

/* Gate the cpu runner on one shape; 1 when the outcome is the wrong one. */
static int try_shape(const runner_ops *cpu, const fault_shape *fs, lstm_fault fault, double *ratio)
{
    const lstm_shape *s = &fs->shape;
    numerics_context ctx;
    lc_error err;
    if (numerics_context_init(&ctx, s, 17, fs->lengths[0] ? fs->lengths : NULL, &err)) {
        printf("ERROR: %s\n", err.msg);
        return 1;
    }
    gate_report rep;
    char line[1024];
    gate_run(cpu, &ctx, NULL, &rep);
    gate_format_summary(cpu, &rep, line, sizeof line);
    numerics_context_free(&ctx);
    printf("fault %s, shape T=%d B=%d I=%d H=%d L=%d%s: %s\n", lstm_fault_name(fault), s->seq_length,
           s->batch, s->input_size, s->hidden_size, s->num_layers, fs->lengths[0] ? " varlen" : "", line);
    *ratio = rep.worst.not_finite ? INFINITY : rep.worst.ratio;
    const int expect_pass = fault == FAULT_NONE;
    if (expect_pass ? rep.status != LC_OK : rep.status != LC_FAILED) {
        printf("  -> %s\n", expect_pass ? "the correct runner did not pass" : "NOT CAUGHT");
        return 1;
    }
    return 0;
}

/* The fault named `name`; FAULT_COUNT when there is none. */
static lstm_fault find_fault(const char *name)
{
    lstm_fault fault = FAULT_COUNT;
    for (int f = 0; f < FAULT_COUNT; f++)
        if (!strcmp(name, lstm_fault_name((lstm_fault)f)))
            fault = (lstm_fault)f;
    return fault;
}

/* The one shape T B I H L of sizes[0..4]: the exit code (2 for a size
 * that is not one). */
static int try_given_shape(const runner_ops *cpu, lstm_fault fault, char **sizes)
{
    int d[5];
    for (int i = 0; i < 5; i++) {
        char *end;
        long v = strtol(sizes[i], &end, 10);
        if (*end || end == sizes[i] || v < 1 || v > LSTM_MAX_DIM) {
            fprintf(stderr, "fault_test: '%s' is not a positive size\n", sizes[i]);
            return 2;
        }
        d[i] = (int)v;
    }
    const fault_shape one = {SET_ALL, SHAPE(d[0], d[1], d[2], d[3], d[4]), {0}};
    double ratio;
    return try_shape(cpu, &one, fault, &ratio);
}

/* Every shape of the fault's sets, and the summary line: the exit code. */
static int try_fault_shapes(const runner_ops *cpu, lstm_fault fault, const char *name)
{
    int wrong = 0, tried = 0;
    double least = INFINITY, most = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (!(shapes[i].set & sets_of(fault)))
            continue;
        double ratio;
        wrong += try_shape(cpu, &shapes[i], fault, &ratio);
        tried++;
        least = ratio < least ? ratio : least;
        most = ratio > most ? ratio : most;
    }
    if (tried < 3) {
        printf("fault %s: tried on %d shapes, fewer than 3\n", name, tried);
        return 1;
    }
    if (fault == FAULT_NONE)
        printf("fault none: %d shapes, worst ratio %.3g\n", tried, most);
    else
        printf("fault %s: %d of %d shapes caught, least visible ratio %.3g\n", name, tried - wrong,
               tried, least);
    return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 7) {
        fprintf(stderr, "usage: fault_test FAULT [T B I H L]\n");
        return 2;
    }
    const lstm_fault fault = find_fault(argv[1]);
    if (fault == FAULT_COUNT) {
        fprintf(stderr, "fault_test: unknown fault '%s'\n", argv[1]);
        return 2;
    }
    const runner_ops *cpu = registry_find("cpu");
    lstm_active_fault = fault;
    if (argc == 7)
        return try_given_shape(cpu, fault, argv + 2);
    return try_fault_shapes(cpu, fault, argv[1]);
}
