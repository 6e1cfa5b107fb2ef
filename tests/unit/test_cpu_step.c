/* The cpu runner's fused step (runners/cpu_step.h) against a double
 * computation, for every ISA this CPU runs, and the team it runs in
 * (base/parallel.h). The numerics groups check the whole runner; these
 * pin what they reach only by chance: saturated gates (exactly +-1 where
 * they round to it), a tail block, every
 * count of last rows, a finished sequence, a NaN; and the backward step's
 * gate tape, which only the weight gradients read. */
#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "runners/cpu_step.h"

enum { TEAM_ROUNDS = 300, TEAM_THREADS = 4 };

typedef struct team_check {
    int seen[TEAM_THREADS];
    int sizes[TEAM_THREADS];
    int bad;
} team_check;

/* each round: write my slot, meet, read everyone's, meet */
static void team_rounds(void *arg, lc_team *team, int rank, int size)
{
    team_check *c = arg;
    c->sizes[rank] = size;
    for (int round = 1; round <= TEAM_ROUNDS; round++) {
        __atomic_store_n(&c->seen[rank], round, __ATOMIC_RELAXED);
        lc_team_barrier(team);
        for (int other = 0; other < size; other++)
            if (__atomic_load_n(&c->seen[other], __ATOMIC_RELAXED) != round)
                __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
        lc_team_barrier(team);
    }
}

int test_parallel_team_barrier(void)
{
    /* more threads than this machine's cores: yielding must still let every member through */
    team_check c = {{0}, {0}, 0};
    lc_parallel_team(TEAM_THREADS, team_rounds, &c);
    CHECK(c.sizes[0] >= 1 && c.sizes[0] <= TEAM_THREADS, "team size %d", c.sizes[0]);
    for (int r = 0; r < c.sizes[0]; r++)
        CHECK(c.sizes[r] == c.sizes[0] && c.seen[r] == TEAM_ROUNDS, "member %d: size %d, %d rounds", r, c.sizes[r],
              c.seen[r]);
    CHECK(!c.bad, "a member read a slot of the round before after the barrier");
    return 0;
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* One step's inputs: B rows, I inputs, H units; the bias sweeps pre-activations over [-60, 60]. */
typedef struct step_case {
    int B, I, H;
    float *w_ih, *w_hh, *b, *x, *h, *c;
    int *len;
} step_case;

static float uniform(unsigned *state, float scale)
{
    *state = *state * 1664525u + 1013904223u;
    return scale * ((float)(*state >> 8) / 16777216.0f - 0.5f);
}

static void make_case(step_case *k, int B, int I, int H)
{
    unsigned st = 7;
    *k = (step_case){B, I, H, malloc(sizeof(float) * 4 * H * I), malloc(sizeof(float) * 4 * H * H),
                     malloc(sizeof(float) * 4 * H), malloc(sizeof(float) * B * I), malloc(sizeof(float) * B * H),
                     malloc(sizeof(float) * B * H), malloc(sizeof(int) * B)};
    for (int i = 0; i < 4 * H * I; i++) k->w_ih[i] = uniform(&st, 0.5f);
    for (int i = 0; i < 4 * H * H; i++) k->w_hh[i] = uniform(&st, 0.5f);
    for (int i = 0; i < 4 * H; i++) k->b[i] = -60.0f + 120.0f * (float)i / (float)(4 * H - 1);
    for (int i = 0; i < B * I; i++) k->x[i] = uniform(&st, 2.0f);
    for (int i = 0; i < B * H; i++) k->h[i] = uniform(&st, 2.0f);
    for (int i = 0; i < B * H; i++) k->c[i] = uniform(&st, 4.0f);
    for (int b = 0; b < B; b++) k->len[b] = b == 1 ? 0 : 1; /* row 1 has finished before this step */
}

static void free_case(step_case *k)
{
    free(k->w_ih); free(k->w_hh); free(k->b); free(k->x); free(k->h); free(k->c); free(k->len);
}

/* |got - want| within a few float roundings of the terms it sums */
static int near(float got, double want, double scale)
{
    return fabs((double)got - want) <= 2e-6 * (scale + fabs(want)) + 1e-30;
}

/* What one step of a case wrote, and the packed operands it read. */
typedef struct step_run {
    float *panels, *bias, *gates, *c_out, *out;
} step_run;

/* x W_ih^T of case k into gates (B, 4H), each sum in double, rounded
 * once: the input projection as the runner's GEMM leaves it. */
static void project_input(const step_case *k, float *gates)
{
    for (int b = 0; b < k->B; b++)
        for (int n = 0; n < 4 * k->H; n++) {
            double sum = 0;
            for (int i = 0; i < k->I; i++)
                sum += (double)k->x[b * k->I + i] * k->w_ih[n * k->I + i];
            gates[(size_t)b * 4 * k->H + n] = (float)sum;
        }
}

/* Pack case k and run one step of kernels ks over every block into r;
 * `projected`: as kernels without input_in_step run in the runner, x
 * W_ih^T in the gates before the step and panels of W_hh alone (either
 * way runs on any kernels: the step reads its input). */
static void run_step(const cpu_step_kernels *ks, const step_case *k, int projected, step_run *r)
{
    const int B = k->B, I = projected ? 0 : k->I, H = k->H, lanes = ks->lanes, blocks = cpu_step_blocks(H, lanes);
    *r = (step_run){malloc(sizeof(float) * cpu_forward_panel_floats(I, H, lanes)),
                    malloc(sizeof(float) * 4 * blocks * lanes), malloc(sizeof(float) * B * 4 * H),
                    malloc(sizeof(float) * B * H), malloc(sizeof(float) * B * H)};
    cpu_pack_forward(r->panels, k->w_ih, k->w_hh, I, H, lanes, ks->forward_gate_groups, 0, 0, blocks);
    cpu_pack_bias(r->bias, k->b, NULL, H, lanes, 0);
    if (projected)
        project_input(k, r->gates);
    const cpu_forward_step st = {
        .batch = B, .hidden = H, .input = I, .t = 0, .x = projected ? NULL : k->x, .h_in = k->h, .c_in = k->c,
        .c_out = r->c_out, .gates = r->gates, .out = r->out,
        .packed = r->panels, .bias = r->bias, .len = k->len, .faults = {0, 0, 1.0f}, .stream_gates = B % 2,
    };
    ks->forward(&st, 0, blocks);
}

static void free_run(step_run *r)
{
    free(r->panels); free(r->bias); free(r->gates); free(r->c_out); free(r->out);
}

/* The step of kernels ks on case k (projected: run_step), against
 * double: 0 or 1 (printed). */
static int check_step(const cpu_step_kernels *ks, const step_case *k, int projected)
{
    const int B = k->B, I = k->I, H = k->H;
    step_run r;
    run_step(ks, k, projected, &r);
    const float *gates = r.gates, *c_out = r.c_out, *out = r.out;
    int bad = 0;
    for (int b = 0; b < B && !bad; b++)
        for (int j = 0; j < H && !bad; j++) {
            const size_t at = (size_t)b * H + j;
            double pre[4], scale[4];
            for (int q = 0; q < 4; q++) {
                const int n = q * H + j;
                pre[q] = k->b[n];
                scale[q] = fabs(k->b[n]);
                for (int i = 0; i < I; i++)
                    pre[q] += (double)k->x[b * I + i] * k->w_ih[n * I + i], scale[q] += fabs(k->x[b * I + i] * k->w_ih[n * I + i]);
                for (int i = 0; i < H; i++)
                    pre[q] += (double)k->h[b * H + i] * k->w_hh[n * H + i], scale[q] += fabs(k->h[b * H + i] * k->w_hh[n * H + i]);
            }
            const double gate[4] = {sigmoid(pre[0]), sigmoid(pre[1]), tanh(pre[2]), sigmoid(pre[3])};
            const double c = gate[1] * k->c[at] + gate[0] * gate[2], h = gate[3] * tanh(c);
            const int done = k->len[b] <= 0;
            /* a gate that rounds to +-1 must be +-1: a saturated sigmoid at
             * 1 - 2^-24 gives a derivative of 6e-8 where the reference's is 0 */
            for (int q = 0; q < 4; q++)
                if (!(done ? gates[(size_t)b * 4 * H + q * H + j] == 0.0f
                           : near(gates[(size_t)b * 4 * H + q * H + j], gate[q], scale[q]) &&
                                 (fabsf((float)gate[q]) != 1.0f ||
                                  gates[(size_t)b * 4 * H + q * H + j] == (float)gate[q])))
                    bad = fprintf(stderr, "%s%s: row %d unit %d gate %d: %.9g, want %.9g\n", ks->isa,
                                  projected ? " (projected)" : "", b, j, q, gates[(size_t)b * 4 * H + q * H + j],
                                  done ? 0.0 : gate[q]);
            /* a finished sequence: c carried on exactly, h_t zero (the runner reads h back) */
            const double want_c = done ? k->c[at] : c, want_out = done ? 0.0 : h;
            if (!bad && !(done ? c_out[at] == k->c[at] && out[at] == 0.0f
                               : near(c_out[at], want_c, 8) && near(out[at], want_out, 8)))
                bad = fprintf(stderr, "%s%s: row %d unit %d: c %.9g out %.9g, want %.9g %.9g\n", ks->isa,
                              projected ? " (projected)" : "", b, j, c_out[at], out[at], want_c, want_out);
        }
    free_run(&r);
    return bad ? 1 : 0;
}

/* check(ks) for the kernels of every ISA this CPU runs: 0 when each
 * passed, 1 at the first that failed, UNIT_SKIP when none ran. */
static int each_isa(int (*check)(const cpu_step_kernels *ks))
{
    const char *isas[] = {"avx512", "avx2"};
    int ran = 0;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        const cpu_step_kernels *ks = cpu_step_kernels_for(isas[i]);
        if (!ks)
            continue;
        if (check(ks))
            return 1;
        ran++;
    }
    if (!ran) {
        printf("SKIP: this CPU runs none of the fused step's kernels (AVX-512, AVX2 with FMA)\n");
        return UNIT_SKIP;
    }
    return 0;
}

/* Every kernel starts on a cache line (CMakeLists.txt: -falign-functions=64),
 * so that its loops sit in the same 64-byte lines whatever is linked before
 * it; both ISAs' tables are read, whichever this CPU runs (nothing is called). */
int test_cpu_step_kernels_line_aligned(void)
{
#if defined(__x86_64__)
    extern const cpu_step_kernels cpu_step_kernels_avx512, cpu_step_kernels_avx2;
    const cpu_step_kernels *sets[] = {&cpu_step_kernels_avx512, &cpu_step_kernels_avx2};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        const cpu_step_kernels *ks = sets[i];
        const struct { const char *name; uintptr_t at; } fns[] = {
            {"forward", (uintptr_t)ks->forward},
            {"backward", (uintptr_t)ks->backward},
            {"pack_strips", (uintptr_t)ks->pack_strips},
            {"weight_grads", (uintptr_t)ks->weight_grads},
        };
        for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++)
            CHECK(fns[f].at % 64 == 0, "%s's %s starts at %#lx, %lu bytes into a cache line", ks->isa,
                  fns[f].name, (unsigned long)fns[f].at, (unsigned long)(fns[f].at % 64));
    }
    return 0;
#else
    printf("SKIP: the fused step's kernels are built for x86-64 only\n");
    return UNIT_SKIP;
#endif
}

/* H: two blocks and a tail; B from 1 to 13 covers every count of last
 * rows after a full tile and without one (the forward's tiles are 6 rows
 * with either ISA: AVX-512's MR, AVX2's FMR); the input in the step, and
 * its projection before it; the bias's sweep over [-60, 60] (gates i and
 * o saturated throughout: only f and g would tell their sums wrong) and
 * scaled to [-3, 3] (none saturated) */
static int step_cases(const cpu_step_kernels *ks)
{
    for (int projected = 0; projected <= 1; projected++)
        for (int mild = 0; mild <= 1; mild++)
            for (int B = 1; B <= 13; B++) {
                step_case k;
                make_case(&k, B, 5, 2 * ks->lanes + 3);
                for (int n = 0; mild && n < 4 * k.H; n++)
                    k.b[n] /= 20.0f;
                const int bad = check_step(ks, &k, projected);
                free_case(&k);
                CHECK(!bad, "%s, B=%d, %s, bias %s: the fused step differs from double (above)", ks->isa, B,
                      projected ? "the input projected before it" : "the input in the step",
                      mild ? "in [-3, 3]" : "over [-60, 60]");
            }
    return 0;
}

int test_cpu_step_against_double(void)
{
    return each_isa(step_cases);
}

/* Whether a sum of K = 2 runs is summed in runs: the input (x, or h when
 * of_h) is 1, and each gate row's weights hold 2^20 / RUN over the first
 * run, then RUN - 1 terms of 0.01 and a last one of -2^20. In one chain
 * the 0.01s fall below the spacing of 2^20 (0.125) and vanish: the sum is
 * 0. In runs, the second sums them on its own before its -2^20, and the
 * sum is what float arithmetic gives that order (5.125 for runs of 512):
 * the g gate must be its tanh, the others its sigmoid (the AVX2 forward
 * sums i, f and g, o in passes of their own). B = 7: a full tile of 6
 * rows and one more. */
static int summed_in_runs(const cpu_step_kernels *ks, int of_h)
{
    enum { RUN = CPU_STEP_SUM_BLOCK, K = 2 * RUN, B = 7 };
    const float big = 1048576.0f, small = 0.01f;
    float part = 0.0f; /* the second run on its own, as the kernel sums it */
    for (int i = 0; i < RUN - 1; i++)
        part += small;
    part += -big;
    const float want = big + part;
    step_case k;
    make_case(&k, B, of_h ? 1 : K, of_h ? K : ks->lanes);
    const int I = k.I, H = k.H;
    float *w = of_h ? k.w_hh : k.w_ih;
    memset(of_h ? k.w_ih : k.w_hh, 0, sizeof(float) * 4 * H * (of_h ? I : H));
    for (int n = 0; n < 4 * H; n++) {
        for (int i = 0; i < K; i++)
            w[(size_t)n * K + i] = i < RUN ? big / RUN : i < K - 1 ? small : -big;
        k.b[n] = 0.0f;
    }
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < K; i++) (of_h ? k.h : k.x)[b * K + i] = 1.0f;
        k.len[b] = 1;
    }
    step_run r;
    run_step(ks, &k, 0, &r); /* the sums over x are the step's only where x is in it */
    int bad = 0;
    for (int b = 0; b < B && !bad; b++)
        for (int q = 0; q < 4 && !bad; q++)
            for (int j = 0; j < H && !bad; j++) {
                const float g = r.gates[(size_t)b * 4 * H + (size_t)q * H + j];
                const double expect = q == 2 ? tanh(want) : sigmoid(want);
                if (fabs(g - expect) > 1e-6)
                    bad = fprintf(stderr, "%s: row %d unit %d: gate %d %.9g, want %.9g of %g (%s of 0: one chain)\n",
                                  ks->isa, b, j, q, g, expect, want, q == 2 ? "tanh" : "sigmoid");
            }
    free_run(&r);
    free_case(&k);
    CHECK(want > 1.0f, "the case must tell runs from one chain (its sum is %g)", want);
    CHECK(!bad, "%s: the forward's sum over %s of %d terms was not summed in runs of %d (above)", ks->isa,
          of_h ? "h" : "x", K, RUN);
    return 0;
}

static int x_in_runs(const cpu_step_kernels *ks) { return summed_in_runs(ks, 0); }
static int h_in_runs(const cpu_step_kernels *ks) { return summed_in_runs(ks, 1); }

int test_cpu_step_long_sum_blocked(void)
{
    const int rc = each_isa(x_in_runs);
    return rc ? rc : each_isa(h_in_runs);
}

int test_cpu_step_nan_passes(void)
{
    const cpu_step_kernels *ks = cpu_step_kernels_for(NULL);
    if (!ks) {
        printf("SKIP: this CPU runs none of the fused step's kernels (AVX-512, AVX2 with FMA)\n");
        return UNIT_SKIP;
    }
    step_case k;
    make_case(&k, 3, 4, ks->lanes);
    k.x[2 * 4 + 1] = NAN; /* row 2 */
    const int H = k.H;
    step_run r;
    run_step(ks, &k, !ks->input_in_step, &r); /* as the runner runs this CPU's kernels */
    int nan_rows = 0, finite_row0 = 1;
    for (int j = 0; j < H; j++) {
        nan_rows += isnan(r.out[2 * H + j]) && isnan(r.c_out[2 * H + j]) && isnan(r.gates[2 * 4 * H + j]);
        finite_row0 &= isfinite(r.out[j]);
    }
    free_run(&r);
    free_case(&k);
    CHECK(nan_rows == H, "%s: a NaN input reached %d of %d units as NaN (the clamp of exp must not hide it)", ks->isa,
          nan_rows, H);
    CHECK(finite_row0, "%s: a row without NaN came out not finite", ks->isa);
    return 0;
}

/* One backward step's inputs, at t = 3 of a tape of 3 steps: B rows, I
 * inputs, H units; the rows' lengths 2, 3, 6 and 6 in turn (a period of
 * 4, which no tile height divides, so that a row's place in its tile is
 * not its kind), so that a row has finished before step 2 (no cell, dh
 * passed on), at step 3 (dh passed on into a cell) or not (the product
 * into a cell). */
typedef struct back_case {
    int B, I, H;
    float *w_ih, *w_hh, *dgates_in, *dh_in, *gates, *c, *c_prev, *d_out, *dc;
    int *len;
} back_case;
enum { BACK_T = 3 };

/* The three calls a backward makes: t < T (the product, then the cell of
 * t-1), t = T (no product: the cells alone, no dx), t = 0 (the product,
 * no cell). */
typedef enum { BACK_PRODUCT_AND_CELLS, BACK_CELLS_ALONE, BACK_PRODUCT_ALONE } back_mode;
static const char *const back_mode_names[] = {"the product and the cells", "the cells alone", "the product alone"};

static float *uniform_array(unsigned *st, size_t n, float offset, float scale)
{
    float *a = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) a[i] = offset + uniform(st, scale);
    return a;
}

static void make_back_case(back_case *k, int B, int I, int H)
{
    unsigned st = 13;
    const size_t BH = (size_t)B * H;
    *k = (back_case){.B = B, .I = I, .H = H}; /* one draw after another, in this order */
    k->w_ih = uniform_array(&st, 4 * (size_t)H * I, 0, 0.5f);
    k->w_hh = uniform_array(&st, 4 * (size_t)H * H, 0, 0.5f);
    k->dgates_in = uniform_array(&st, 4 * BH, 0, 2.0f);
    k->dh_in = uniform_array(&st, BH, 0, 2.0f);
    k->gates = uniform_array(&st, 4 * BH, 0.5f, 0.9f);
    k->c = uniform_array(&st, BH, 0, 4.0f);
    k->c_prev = uniform_array(&st, BH, 0, 4.0f);
    k->d_out = uniform_array(&st, BH, 0, 2.0f);
    k->dc = uniform_array(&st, BH, 0, 2.0f);
    k->len = malloc(sizeof(int) * B);
    for (size_t i = 0; i < 4 * BH; i++)
        if (i / H % 4 == 2) k->gates[i] = 2.0f * (k->gates[i] - 0.5f); /* g in (-0.9, 0.9), the others (0.05, 0.95) */
    for (int b = 0; b < B; b++) k->len[b] = b % 4 == 0 ? BACK_T - 1 : b % 4 == 1 ? BACK_T : BACK_T + 3;
}

static void free_back_case(back_case *k)
{
    free(k->w_ih); free(k->w_hh); free(k->dgates_in); free(k->dh_in); free(k->gates); free(k->c); free(k->c_prev);
    free(k->d_out); free(k->dc); free(k->len);
}

/* What a backward step wrote (NaN where it did not), and its tape. */
typedef struct back_run {
    back_mode mode;
    int t;
    float *panels, *dx, *dh_out, *dgates_out, *dc, *tape_at;
    cpu_gate_tape tape;
} back_run;

static float *nans(size_t n)
{
    float *a = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) a[i] = NAN;
    return a;
}

/* One step of kernels ks on case k in `mode`, into r, called as the
 * runner's team of two calls it, one member after the other: each its dh
 * items, then its dx items (cpu_backward_share). */
static void run_backward(const cpu_step_kernels *ks, const back_case *k, back_mode mode, back_run *r)
{
    const int B = k->B, I = k->I, H = k->H, lanes = ks->lanes;
    int dh_items, dx_items;
    cpu_backward_items(I, H, lanes, &dh_items, &dx_items);
    *r = (back_run){mode, mode == BACK_PRODUCT_ALONE ? 0 : BACK_T,
                    malloc(sizeof(float) * cpu_backward_panel_floats(I, H, lanes)), nans((size_t)B * I),
                    nans((size_t)B * H), nans((size_t)B * 4 * H), malloc(sizeof(float) * B * H),
                    nans(cpu_gate_tape_floats(BACK_T * B, H, lanes)), {NULL, 0, 0}};
    r->tape = cpu_gate_tape_at(r->tape_at, BACK_T * B, lanes);
    memcpy(r->dc, k->dc, sizeof(float) * B * H);
    cpu_pack_backward(r->panels, k->w_ih, k->w_hh, I, H, lanes, 0, dh_items + dx_items);
    const int product = mode != BACK_CELLS_ALONE;
    const cpu_backward_step st = {
        .batch = B, .hidden = H, .input = I, .dgates_in = product ? k->dgates_in : NULL, .packed = r->panels,
        .dx = product ? r->dx : NULL, .dh_in = k->dh_in, .dh_out = r->dh_out,
        .gates = mode == BACK_PRODUCT_ALONE ? NULL : k->gates, .c = k->c, .c_prev = k->c_prev, .d_out = k->d_out,
        .dc = r->dc, .dgates_out = r->dgates_out, .tape = r->tape, .len = k->len, .t = r->t, .faults = {1.0f, 0, 0}};
    for (int rank = 0; rank < 2; rank++) {
        int dh[2], dx[2], then[2];
        cpu_backward_share(dh_items, dx_items, rank, 2, dh, dx, then);
        ks->backward(&st, dh[0], dh[1], then[0]);
        ks->backward(&st, dh_items + dx[0], dh_items + dx[1], then[1]);
    }
}

static void free_back_run(back_run *r)
{
    free(r->panels); free(r->dx); free(r->dh_out); free(r->dgates_out); free(r->dc); free(r->tape_at);
}

/* sum_n dgates_in[b][n] w[n][j] over the 4H gates, and its terms' size */
static double gate_product(const back_case *k, const float *w, int cols, int b, int j, double *scale)
{
    double sum = 0;
    *scale = 0;
    for (int n = 0; n < 4 * k->H; n++) {
        const double term = (double)k->dgates_in[(size_t)b * 4 * k->H + n] * w[(size_t)n * cols + j];
        sum += term, *scale += fabs(term);
    }
    return sum;
}

/* The cell of step BACK_T-1 backwards for row b, unit j, from dh: want[4]
 * dgates, *want_dc; 0 when it runs, 1 when the row has finished. */
static int cell_backward_of(const back_case *k, int b, int j, double dh, double want[4], double *want_dc)
{
    const size_t at = (size_t)b * k->H + j, g = (size_t)b * 4 * k->H + j;
    if (BACK_T - 1 >= k->len[b]) {
        want[0] = want[1] = want[2] = want[3] = 0, *want_dc = k->dc[at];
        return 1;
    }
    const double gi = k->gates[g], gf = k->gates[g + k->H], gg = k->gates[g + 2 * k->H], go = k->gates[g + 3 * k->H];
    const double dht = dh + k->d_out[at], tc = tanh(k->c[at]);
    const double dct = dht * go * (1 - tc * tc) + k->dc[at];
    want[0] = dct * gg * gi * (1 - gi), want[1] = dct * k->c_prev[at] * gf * (1 - gf);
    want[2] = dct * gi * (1 - gg * gg), want[3] = dht * tc * go * (1 - go);
    *want_dc = dct * gf;
    return 0;
}

/* Row b's dx and the gradient reaching h_{t-1} (product or passed on):
 * 0 or 1 (printed); dh[j] the cell's dh (the kernel's own, so that the
 * cell is checked alone). */
static int check_back_product(const cpu_step_kernels *ks, const back_case *k, const back_run *r, int b, double *dh)
{
    const int H = k->H, I = k->I, product = r->mode != BACK_CELLS_ALONE;
    for (int i = 0; i < I && product; i++) {
        double scale, want = gate_product(k, k->w_ih, I, b, i, &scale);
        if (!near(r->dx[(size_t)b * I + i], want, 8 * scale))
            return fprintf(stderr, "%s: row %d dx %d: %.9g, want %.9g\n", ks->isa, b, i, r->dx[(size_t)b * I + i],
                           want) > 0;
    }
    for (int j = 0; j < H; j++) {
        const size_t at = (size_t)b * H + j;
        double scale;
        dh[j] = k->dh_in[at];
        if (!product)
            continue;
        if (r->t < k->len[b]) {
            const double want = gate_product(k, k->w_hh, H, b, j, &scale);
            if (!near(r->dh_out[at], want, 8 * scale))
                return fprintf(stderr, "%s: row %d dh %d: %.9g, want %.9g\n", ks->isa, b, j, r->dh_out[at], want) > 0;
            dh[j] = r->dh_out[at];
        } else if (r->dh_out[at] != k->dh_in[at])
            return fprintf(stderr, "%s: row %d dh %d not passed on\n", ks->isa, b, j) > 0;
    }
    return 0;
}

/* Row b of a backward run against double: dx, dh_out (with the product),
 * dgates_out and dc (untouched without a cell); 0 or 1 (printed). */
static int check_back_row(const cpu_step_kernels *ks, const back_case *k, const back_run *r, int b)
{
    const int H = k->H;
    double *dh = malloc(sizeof(double) * H);
    int bad = check_back_product(ks, k, r, b, dh);
    for (int j = 0; j < H && !bad; j++) {
        const size_t at = (size_t)b * H + j;
        double want[4], want_dc;
        const int cell = r->mode != BACK_PRODUCT_ALONE, done = cell_backward_of(k, b, j, dh[j], want, &want_dc);
        const double size = 8 * (fabs(dh[j]) + fabs(k->d_out[at]) + fabs(k->dc[at]));
        for (int q = 0; q < 4 && !bad; q++) {
            const float got = r->dgates_out[(size_t)b * 4 * H + (size_t)q * H + j];
            if (!cell ? !isnan(got) : done ? got != 0.0f : !near(got, want[q], size))
                bad = fprintf(stderr, "%s: row %d unit %d dgate %d: %.9g, want %.9g\n", ks->isa, b, j, q, got,
                              cell ? want[q] : NAN) > 0;
        }
        if (!bad && (!cell || done ? r->dc[at] != k->dc[at] : !near(r->dc[at], want_dc, size)))
            bad = fprintf(stderr, "%s: row %d unit %d dc: %.9g, want %.9g\n", ks->isa, b, j, r->dc[at],
                          cell ? want_dc : k->dc[at]) > 0;
    }
    free(dh);
    return bad;
}

/* The tape holds step t-1's rows as dgates_out, bit for bit, zero past H,
 * and nothing else was written (nothing at all without a cell): 0 or 1
 * (printed). */
static int check_back_tape(const cpu_step_kernels *ks, const back_case *k, const back_run *r)
{
    const int B = k->B, H = k->H, lanes = ks->lanes, blocks = cpu_step_blocks(H, lanes);
    for (int p = 0; p < blocks; p++)
        for (int row = 0; row < BACK_T * B; row++) {
            const float *got = cpu_gate_tape_row(&r->tape, (size_t)p, (size_t)row);
            const int b = r->mode == BACK_PRODUCT_ALONE ? -1 : row - (BACK_T - 1) * B;
            for (int q = 0; q < 4; q++)
                for (int u = 0; u < lanes; u++) {
                    const int j = p * lanes + u;
                    const float want =
                        b < 0 ? NAN : j < H ? r->dgates_out[(size_t)b * 4 * H + (size_t)q * H + j] : 0.0f;
                    if (b < 0 ? !isnan(got[q * lanes + u]) : memcmp(&got[q * lanes + u], &want, sizeof want) != 0)
                        return fprintf(stderr, "%s: tape block %d row %d gate %d lane %d: %.9g, want %.9g\n", ks->isa,
                                       p, row, q, u, got[q * lanes + u], want) > 0;
                }
        }
    return 0;
}

/* H: two items of h columns, the last a tail; I: two items of x columns,
 * the last a tail, or none (the items of h alone, as the runner calls
 * kernels whose input_grad_in_step is 0, leaving dx to a GEMM after the
 * steps); B from 1 to 9: every count of last rows; each of the three
 * calls a backward makes */
static int backward_cases(const cpu_step_kernels *ks)
{
    const int inputs[] = {4 * ks->lanes + 5, 0};
    for (int i = 0; i < 2; i++)
        for (int B = 1; B <= 9; B++)
            for (back_mode mode = BACK_PRODUCT_AND_CELLS; mode <= BACK_PRODUCT_ALONE; mode++) {
                back_case k;
                back_run r;
                make_back_case(&k, B, inputs[i], 4 * ks->lanes + 3);
                run_backward(ks, &k, mode, &r);
                int bad = check_back_tape(ks, &k, &r);
                for (int b = 0; b < B && !bad; b++)
                    bad = check_back_row(ks, &k, &r, b);
                free_back_run(&r);
                free_back_case(&k);
                CHECK(!bad, "%s, B=%d, I=%d, %s: the backward step differs from double (above)", ks->isa, B,
                      inputs[i], back_mode_names[mode]);
            }
    return 0;
}

int test_cpu_step_backward_against_double(void)
{
    return each_isa(backward_cases);
}

/* What one member of the weight gradients' team reads. */
typedef struct wgrad_case {
    const cpu_step_kernels *ks;
    const cpu_weight_grads *wg;
    const cpu_wgrad_buffers *buf;
} wgrad_case;

static void wgrad_member(void *arg, lc_team *team, int rank, int size)
{
    const wgrad_case *c = arg;
    cpu_weight_grads_member(c->ks, c->wg, c->buf, team, rank, size);
}

/* dg (K rows of M = 4H gates) as the gate tape of kernels with `lanes`
 * units a block (cpu_gate_tape), what the backward's cells write. */
static float *gate_tape_of(const float *dg, int K, int H, int lanes, cpu_gate_tape *tape)
{
    float *at = calloc(cpu_gate_tape_floats(K, H, lanes), sizeof(float));
    *tape = cpu_gate_tape_at(at, K, lanes);
    for (int k = 0; k < K; k++)
        for (int q = 0; q < 4; q++)
            for (int j = 0; j < H; j++)
                cpu_gate_tape_row(tape, (size_t)(j / lanes), (size_t)k)[q * lanes + j % lanes] =
                    dg[(size_t)k * 4 * H + (size_t)q * H + j];
    return at;
}

/* The weight gradients' GEMM of kernels ks on K rows of H units, a team
 * of `threads`, against double: widths with a tail strip, the gradients
 * and the bias's added to what was there. */
static int check_weight_grads(const cpu_step_kernels *ks, int K, int threads, int H)
{
    enum { I = 70 };
    const int M = 4 * H;
    unsigned st = 11;
    float *dg = malloc(sizeof(float) * K * M), *in[2] = {malloc(sizeof(float) * K * I), malloc(sizeof(float) * K * H)};
    float *grad[2] = {malloc(sizeof(float) * M * I), malloc(sizeof(float) * M * H)}, *sums = malloc(sizeof(float) * M);
    const int width[2] = {I, H};
    for (int i = 0; i < K * M; i++) dg[i] = uniform(&st, 2.0f);
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < K * width[p]; i++) in[p][i] = uniform(&st, 2.0f);
        for (int i = 0; i < M * width[p]; i++) grad[p][i] = uniform(&st, 1.0f);
    }
    for (int m = 0; m < M; m++) sums[m] = 1.0f;
    cpu_gate_tape tape;
    float *tape_at = gate_tape_of(dg, K, H, ks->lanes, &tape);
    const cpu_weight_grads wg = {.rows = K, .hidden = H, .dgates = tape,
                                 .in = {in[0], in[1]}, .width = {I, H}, .grad = {grad[0], grad[1]}};
    /* what was there before, kept to compare against */
    float *before[2] = {malloc(sizeof(float) * M * I), malloc(sizeof(float) * M * H)};
    for (int p = 0; p < 2; p++) memcpy(before[p], grad[p], sizeof(float) * M * width[p]);
    const size_t partial = cpu_wgrad_partial_floats(&wg, ks->strip_rows, ks->lanes);
    cpu_wgrad_buffers buf = {malloc(sizeof(float) * cpu_wgrad_strip_floats(&wg, ks->strip_rows)),
                             partial ? malloc(sizeof(float) * partial) : NULL, sums};
    wgrad_case c = {ks, &wg, &buf};
    lc_parallel_team(threads, wgrad_member, &c);
    int bad = 0;
    for (int m = 0; m < M && !bad; m++) {
        double want_sum = 1.0, scale_sum = 1.0;
        for (int k = 0; k < K; k++) want_sum += dg[k * M + m], scale_sum += fabs(dg[k * M + m]);
        if (!near(sums[m], want_sum, 8 * scale_sum))
            bad = fprintf(stderr, "%s: column sum %d: %.9g, want %.9g\n", ks->isa, m, sums[m], want_sum);
        for (int p = 0; p < 2 && !bad; p++)
            for (int n = 0; n < width[p] && !bad; n++) {
                double want = before[p][m * width[p] + n], scale = fabs(want);
                for (int k = 0; k < K; k++) {
                    want += (double)dg[k * M + m] * in[p][k * width[p] + n];
                    scale += fabs((double)dg[k * M + m] * in[p][k * width[p] + n]);
                }
                if (!near(grad[p][m * width[p] + n], want, 8 * scale))
                    bad = fprintf(stderr, "%s: K=%d, %d threads: grad %d (%d, %d): %.9g, want %.9g\n", ks->isa, K,
                                  threads, p, m, n, grad[p][m * width[p] + n], want);
            }
    }
    free(dg); free(in[0]); free(in[1]); free(grad[0]); free(grad[1]); free(before[0]); free(before[1]);
    free(tape_at); free(buf.strips); free(buf.partial); free(sums);
    return bad;
}

/* one short slab; two and a part (a sum kept over slabs), by one member
 * and by three; H = 37, a tail block; H = 5, one block, whose next panel
 * after each slab is the next slab's (under ASan, asking past the last
 * one's rows is a finding) */
static int weight_grads_cases(const cpu_step_kernels *ks)
{
    const int cases[][3] = {{5, 1, 37}, {2 * CPU_WGRAD_SLAB + 77, 1, 37}, {2 * CPU_WGRAD_SLAB + 77, 3, 37},
                            {2 * CPU_WGRAD_SLAB + 77, 1, 5}};
    for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
        CHECK(!check_weight_grads(ks, cases[j][0], cases[j][1], cases[j][2]),
              "%s: the weight gradients' GEMM differs from double (above)", ks->isa);
    return 0;
}

int test_cpu_weight_grads_against_double(void)
{
    return each_isa(weight_grads_cases);
}

/* Every item of both lists exactly once, in order, each member's count
 * within one of the others', and its part of the dh items (the ones with
 * cells) within one of its proportion: h items first in one list fails
 * the last at 8 + 8 items over 2 members (8 against 4). What a member
 * reads after each list (whose panel it asks for ahead) is the first
 * item of its other list, or of the same one when the other is empty:
 * an item of its own, never past the lists. */
int test_cpu_backward_share_balanced(void)
{
    for (int size = 1; size <= 8; size++)
        for (int dh_items = 1; dh_items <= 20; dh_items++)
            for (int dx_items = 1; dx_items <= 20; dx_items++) {
                const int items = dh_items + dx_items;
                int dh_at = 0, dx_at = 0;
                for (int rank = 0; rank < size; rank++) {
                    int dh[2], dx[2], then[2];
                    cpu_backward_share(dh_items, dx_items, rank, size, dh, dx, then);
                    const int n = dh[1] - dh[0] + dx[1] - dx[0];
                    CHECK(dh[0] == dh_at && dx[0] == dx_at && dh[1] >= dh[0] && dx[1] >= dx[0],
                          "%d + %d items, member %d of %d: dh [%d, %d), dx [%d, %d) after %d, %d", dh_items, dx_items,
                          rank, size, dh[0], dh[1], dx[0], dx[1], dh_at, dx_at);
                    CHECK(n * size >= items - size && n * size <= items + size, "member %d of %d: %d of %d items",
                          rank, size, n, items);
                    CHECK(fabs((double)(dh[1] - dh[0]) - (double)n * dh_items / items) < 1.0,
                          "%d + %d items, member %d of %d: %d dh items of its %d", dh_items, dx_items, rank, size,
                          dh[1] - dh[0], n);
                    if (n > 0) {
                        const int first_dh = dh[1] > dh[0] ? dh[0] : -1;
                        const int first_dx = dx[1] > dx[0] ? dh_items + dx[0] : -1;
                        const int want0 = first_dx >= 0 ? first_dx : first_dh;
                        const int want1 = first_dh >= 0 ? first_dh : first_dx;
                        CHECK(then[0] == want0 && then[1] == want1 && want0 >= 0 && want0 < items && want1 < items,
                              "%d + %d items, member %d of %d: after its lists %d, %d, not %d, %d", dh_items,
                              dx_items, rank, size, then[0], then[1], want0, want1);
                    }
                    dh_at = dh[1];
                    dx_at = dx[1];
                }
                CHECK(dh_at == dh_items && dx_at == dx_items, "%d + %d items over %d: %d, %d covered", dh_items,
                      dx_items, size, dh_at, dx_at);
            }
    return 0;
}
