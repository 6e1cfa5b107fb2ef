/* fault_test: the gate's power. Plants faults in the cpu runner (test
 * build, src/runners/faults.h), at an arithmetic, and passes only if the
 * gate calls each fault FAIL on every shape of the sets asked for; "none"
 * (the clean build) must PASS on every one.
 *
 *   fault_test FAULT [T B I H L]
 *   fault_test [--precision P[,P...]] [--shapes SET[,SET...]] FAULT... [T B I H L]
 *
 * P: fp32 (the cpu runner; the default), tf32 (cpu_tf32: every GEMM
 * operand rounded to TF32), tf32_trunc (cpu_tf32_trunc: truncated).
 * SET: faults (the default: the shapes below where each fault can show, at
 * least 3 per fault), groups (every numerics group), a numerics group's
 * name, perf:NAME (a perf shape set of src/perf/shape_sets.def, seed 17 as
 * the perf matrix gates it; `layers` is the name of both kinds). With
 * T B I H L, that one shape alone (to measure how a margin scales).
 *
 * Per fault, precision and set it prints the least visible case: the
 * smallest worst ratio (error / allowed) over the set's shapes, the fault's
 * margin; for "none" the worst ratio, and the worst per tensor. Each
 * shape's reference is computed once and shared by every fault and
 * precision judged on it (the default shape's takes about 16 s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "check/gate.h"
#include "perf/perf.h"
#include "runners/faults.h"
#include "runners/runner.h"

#define MAX_PRECISIONS 3
#define MAX_SETS 32
#define MAX_TENSOR_NAMES 16

/* This file's shapes, by what a fault needs in order to show at all;
 * SET_TOOLS marks, in faults.def, a fault that CTest also judges on the
 * tools' shape sets (the numerics groups, the perf sets) at every precision. */
enum {
    SET_BASIC = 1,  /* one and two layers, fixed length */
    SET_LAYERS = 2, /* two to four layers, fixed length */
    SET_VARLEN = 4, /* several layers, lengths with 1 and T among them */
    SET_ALL = SET_BASIC | SET_LAYERS | SET_VARLEN,
    SET_TOOLS = 8,
};

typedef struct fault_shape {
    unsigned set;
    lstm_shape shape;
    int lengths[8]; /* all 0: fixed length */
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
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* Where each fault is tried on this file's shapes (runners/faults.def). */
static unsigned sets_of(lstm_fault f)
{
    static const unsigned sets[FAULT_COUNT] = {
#define LSTM_FAULT(ENUM, name, kind, model, shapes) [FAULT_##ENUM] = shapes,
#include "runners/faults.def"
#undef LSTM_FAULT
    };
    return sets[f];
}

/* One shape to judge on. */
typedef struct judged_case {
    lstm_shape shape;
    unsigned long long seed;
    const int *lengths; /* NULL: fixed length */
    unsigned set;       /* this file's shapes: their SET_ bits; others: SET_ALL | SET_TOOLS */
} judged_case;

/* A shape set: a name and its cases. */
typedef struct shape_set {
    const char *name;
    int ncases;
    judged_case cases[NUMERICS_MAX_CASES];
    int lengths[NUMERICS_MAX_CASES][NUMERICS_MAX_BATCH];
} shape_set;

/* What the gate said of one fault at one precision over one set. */
typedef struct tally {
    int tried, wrong;
    double least, most;
    int ntensors;
    char tensor[MAX_TENSOR_NAMES][32]; /* "dw_hh" for dw_hh.0, dw_hh.1, ... */
    double tensor_worst[MAX_TENSOR_NAMES];
} tally;

/* What was asked for. */
typedef struct request {
    int nfaults, nprecisions, nsets;
    lstm_fault faults[FAULT_COUNT];
    const char *precision[MAX_PRECISIONS];
    const char *set[MAX_SETS];
    int sizes[5]; /* T B I H L when sizes[0] != 0 */
} request;

static void add_case(shape_set *ss, const lstm_shape *s, unsigned long long seed, const int *lengths, unsigned set)
{
    judged_case *c = &ss->cases[ss->ncases];
    c->shape = *s;
    c->seed = seed;
    c->set = set;
    c->lengths = NULL;
    if (lengths) {
        memcpy(ss->lengths[ss->ncases], lengths, (size_t)s->batch * sizeof *lengths);
        c->lengths = ss->lengths[ss->ncases];
    }
    ss->ncases++;
}

/* The set of that name into ss; 0, or 1 when there is none. */
static int load_set(const char *name, shape_set *ss)
{
    memset(ss, 0, sizeof *ss);
    ss->name = name;
    const numerics_group *g = numerics_group_find(name);
    if (!strcmp(name, "faults")) {
        for (size_t i = 0; i < NSHAPES; i++)
            add_case(ss, &shapes[i].shape, 17, shapes[i].lengths[0] ? shapes[i].lengths : NULL, shapes[i].set);
    } else if (g) {
        for (int i = 0; i < g->ncases; i++) {
            int len[NUMERICS_MAX_BATCH];
            add_case(ss, &g->cases[i].shape, g->cases[i].seed, numerics_case_lengths(&g->cases[i], len),
                     SET_ALL | SET_TOOLS);
        }
    } else if (!strncmp(name, "perf:", 5)) {
        /* a set of several devices has one shape: the first */
        for (int i = 0; perf_shape_sets[i].name && !ss->ncases; i++)
            if (!strcmp(perf_shape_sets[i].name, name + 5))
                add_case(ss, &perf_shape_sets[i].shape, 17, NULL, SET_ALL | SET_TOOLS);
    }
    return ss->ncases ? 0 : 1;
}

/* The worst ratio of each tensor of rep into t, by name without its layer. */
static void note_tensors(tally *t, const gate_report *rep)
{
    for (int i = 0; i < rep->ntensors; i++) {
        char base[32];
        snprintf(base, sizeof base, "%s", rep->tensors[i].name);
        base[strcspn(base, ".")] = '\0';
        int k = 0;
        while (k < t->ntensors && strcmp(t->tensor[k], base))
            k++;
        if (k == t->ntensors && k < MAX_TENSOR_NAMES)
            snprintf(t->tensor[t->ntensors++], sizeof t->tensor[0], "%s", base);
        if (k < t->ntensors && rep->tensors[i].worst_ratio > t->tensor_worst[k])
            t->tensor_worst[k] = rep->tensors[i].worst_ratio;
    }
}

/* Gate r with the fault planted on the context's case; the outcome into t. */
static void judge(const runner_ops *r, const char *precision, lstm_fault fault, numerics_context *ctx, tally *t)
{
    const lstm_shape *s = &ctx->shape;
    gate_report rep;
    char line[1024];
    lstm_active_fault = fault;
    gate_run(r, ctx, NULL, &rep);
    lstm_active_fault = FAULT_NONE;
    gate_format_summary(r, &rep, line, sizeof line);
    printf("fault %s at %s, shape T=%d B=%d I=%d H=%d L=%d%s seed=%llu: %s\n", lstm_fault_name(fault), precision,
           s->seq_length, s->batch, s->input_size, s->hidden_size, s->num_layers, ctx->lengths ? " varlen" : "",
           (unsigned long long)ctx->seed, line);
    const double ratio = rep.worst.not_finite ? INFINITY : rep.worst.ratio;
    const int expect_pass = fault == FAULT_NONE;
    t->tried++;
    t->least = t->tried == 1 || ratio < t->least ? ratio : t->least;
    t->most = ratio > t->most ? ratio : t->most;
    note_tensors(t, &rep);
    if (rep.status != LC_OK && rep.status != LC_FAILED) {
        printf("  -> nothing compared\n");
        t->wrong++;
    } else if (expect_pass ? rep.status != LC_OK : rep.status != LC_FAILED) {
        printf("  -> %s\n", expect_pass ? "the correct runner did not pass" : "NOT CAUGHT");
        t->wrong++;
    }
}

/* The cpu runner a fault is planted in, at precision p: its model's. */
static const runner_ops *runner_of(const request *rq, int f, int p)
{
    return lstm_cpu_runner_at(lstm_fault_model(rq->faults[f]), rq->precision[p]);
}

/* 0 where the fault cannot exist at all: a dropout model's faults need a
 * mask, so two layers or more; a gradient "from the last step only" is
 * the whole gradient when there is one step. Such a shape is not tried (a
 * fault that is not there is not "not caught"). */
static int fault_can_show(lstm_fault f, const lstm_shape *s)
{
    const lstm_model *m = lstm_model_get(lstm_fault_model(f));
    if ((f == FAULT_WGRAD_LAST_STEP || f == FAULT_LN_WGRAD_LAST_STEP) && s->seq_length < 2)
        return 0;
    return !(m && m->dropout > 0) || s->num_layers >= 2;
}

/* Every fault at every precision on one case, sharing its reference. */
static int judge_case(const request *rq, const judged_case *c, tally t[FAULT_COUNT][MAX_PRECISIONS])
{
    numerics_context ctx;
    lc_error err;
    if (numerics_context_init(&ctx, &c->shape, c->seed, c->lengths, &err)) {
        printf("ERROR: %s\n", err.msg);
        return 1;
    }
    for (int p = 0; p < rq->nprecisions; p++)
        for (int f = 0; f < rq->nfaults; f++)
            if ((c->set & sets_of(rq->faults[f])) && fault_can_show(rq->faults[f], &c->shape))
                judge(runner_of(rq, f, p), rq->precision[p], rq->faults[f], &ctx, &t[f][p]);
    numerics_context_free(&ctx);
    return 0;
}

/* The summary lines of one fault at one precision over a set; 1 when it
 * came out wrong, or was tried on too few shapes. */
static int summarize(const char *fault, const char *precision, const char *set, const tally *t)
{
    const int need = !strcmp(set, "faults") ? 3 : 1;
    if (t->tried < need) {
        printf("fault %s at %s on %s: tried on %d shapes (those where it can exist), fewer than %d\n", fault,
               precision, set, t->tried, need);
        return 1;
    }
    if (strcmp(fault, "none")) {
        printf("fault %s at %s on %s: %d of %d shapes caught, least visible ratio %.3g\n", fault, precision, set,
               t->tried - t->wrong, t->tried, t->least);
        return t->wrong ? 1 : 0;
    }
    printf("fault none at %s on %s, worst by tensor:", precision, set);
    for (int k = 0; k < t->ntensors; k++)
        printf(" %s %.3g", t->tensor[k], t->tensor_worst[k]);
    printf("\nfault none at %s on %s: %d shapes, %d passed, worst ratio %.3g\n", precision, set, t->tried,
           t->tried - t->wrong, t->most);
    return t->wrong ? 1 : 0;
}

/* Every fault and precision over one set: 1 when anything came out wrong. */
static int judge_set(const request *rq, const shape_set *ss)
{
    static tally t[FAULT_COUNT][MAX_PRECISIONS];
    memset(t, 0, sizeof t);
    int bad = 0;
    for (int i = 0; i < ss->ncases; i++)
        bad |= judge_case(rq, &ss->cases[i], t);
    for (int p = 0; p < rq->nprecisions; p++)
        for (int f = 0; f < rq->nfaults; f++)
            bad |= summarize(lstm_fault_name(rq->faults[f]), rq->precision[p], ss->name, &t[f][p]);
    return bad;
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

/* A comma-separated list into items (cut in place); how many, or -1. */
static int split(char *list, const char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

/* --precision's arithmetics, each with its runner; 0 or 1 (said why). */
static int parse_precisions(char *list, request *rq)
{
    rq->nprecisions = split(list, rq->precision, MAX_PRECISIONS);
    if (rq->nprecisions < 1) {
        fprintf(stderr, "fault_test: --precision takes 1 to %d of fp32, tf32, tf32_trunc\n", MAX_PRECISIONS);
        return 1;
    }
    for (int p = 0; p < rq->nprecisions; p++) {
        if (!lstm_cpu_runner_at(MODEL_LSTM, rq->precision[p])) {
            fprintf(stderr, "fault_test: unknown precision '%s' (fp32, tf32, tf32_trunc)\n", rq->precision[p]);
            return 1;
        }
    }
    return 0;
}

/* --shapes's sets, "groups" spread into every numerics group; 0 or 1. */
static int parse_sets(char *list, request *rq)
{
    const char *named[MAX_SETS];
    const int n = split(list, named, MAX_SETS);
    rq->nsets = 0;
    for (int i = 0; i < n; i++) {
        const int all_groups = !strcmp(named[i], "groups");
        for (int g = 0; all_groups && numerics_groups[g].name && rq->nsets < MAX_SETS; g++)
            rq->set[rq->nsets++] = numerics_groups[g].name;
        if (!all_groups && rq->nsets < MAX_SETS)
            rq->set[rq->nsets++] = named[i];
    }
    if (n < 1) {
        fprintf(stderr, "fault_test: --shapes takes 1 to %d sets\n", MAX_SETS);
        return 1;
    }
    static shape_set probe;
    for (int i = 0; i < rq->nsets; i++) {
        if (load_set(rq->set[i], &probe)) {
            fprintf(stderr, "fault_test: unknown shape set '%s' (faults, groups, a numerics group, perf:NAME)\n",
                    rq->set[i]);
            return 1;
        }
    }
    return 0;
}

/* T B I H L, each a positive size, a shape the gate takes; 0 or 1. */
static int parse_sizes(char **arg, int *sizes)
{
    for (int i = 0; i < 5; i++) {
        char *end;
        const long v = strtol(arg[i], &end, 10);
        if (*end || end == arg[i] || v < 1 || v > LSTM_MAX_DIM) {
            fprintf(stderr, "fault_test: '%s' is not a positive size\n", arg[i]);
            return 1;
        }
        sizes[i] = (int)v;
    }
    const lstm_shape s = SHAPE(sizes[0], sizes[1], sizes[2], sizes[3], sizes[4]);
    lc_error err;
    if (lstm_shape_validate(&s, &err)) {
        fprintf(stderr, "fault_test: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The faults, then optionally one shape; 0 or 1. */
static int parse_faults(int argc, char **argv, request *rq)
{
    int i = 0;
    for (; i < argc && !(argv[i][0] >= '0' && argv[i][0] <= '9'); i++) {
        const lstm_fault f = find_fault(argv[i]);
        if (f == FAULT_COUNT || rq->nfaults == FAULT_COUNT) {
            fprintf(stderr, "fault_test: unknown fault '%s'\n", argv[i]);
            return 1;
        }
        rq->faults[rq->nfaults++] = f;
    }
    if (!rq->nfaults || (i < argc && argc - i != 5)) {
        fprintf(stderr, "usage: fault_test [--precision P,...] [--shapes SET,...] FAULT... [T B I H L]\n");
        return 1;
    }
    return i < argc ? parse_sizes(argv + i, rq->sizes) : 0;
}

/* The command line into rq; 0, or 1 (said why). */
static int parse(int argc, char **argv, request *rq)
{
    static char precision[] = "fp32", shapes[] = "faults";
    char *precision_list = precision, *set_list = shapes;
    int i = 1;
    memset(rq, 0, sizeof *rq);
    for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
        if (!strcmp(argv[i], "--precision"))
            precision_list = argv[i + 1];
        else if (!strcmp(argv[i], "--shapes"))
            set_list = argv[i + 1];
        else
            break;
    }
    if (i < argc && !strncmp(argv[i], "--", 2)) {
        fprintf(stderr, "fault_test: unknown option or missing value '%s'\n", argv[i]);
        return 1;
    }
    if (parse_precisions(precision_list, rq) || parse_sets(set_list, rq) || parse_faults(argc - i, argv + i, rq))
        return 1;
    if (rq->sizes[0] && set_list != shapes) {
        fprintf(stderr, "fault_test: a shape T B I H L and --shapes exclude each other\n");
        return 1;
    }
    for (int f = 0; f < rq->nfaults; f++) {
        for (int p = 0; p < rq->nprecisions; p++) {
            if (!runner_of(rq, f, p)) {
                fprintf(stderr, "fault_test: fault %s is planted in the %s model's cpu runner, which has no %s variant\n",
                        lstm_fault_name(rq->faults[f]), lstm_model_name(lstm_fault_model(rq->faults[f])),
                        rq->precision[p]);
                return 1;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    request rq;
    if (parse(argc, argv, &rq))
        return 2;
    static shape_set ss;
    int bad = 0;
    if (rq.sizes[0]) {
        const int *d = rq.sizes;
        const lstm_shape one = SHAPE(d[0], d[1], d[2], d[3], d[4]);
        memset(&ss, 0, sizeof ss);
        ss.name = "one shape";
        add_case(&ss, &one, 17, NULL, SET_ALL | SET_TOOLS);
        return judge_set(&rq, &ss);
    }
    for (int i = 0; i < rq.nsets; i++) {
        load_set(rq.set[i], &ss);
        bad |= judge_set(&rq, &ss);
    }
    return bad;
}
