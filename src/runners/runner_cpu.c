/* Runner "cpu": a fast FP32 CPU LSTM.
 * Forward per layer, where this CPU has vector kernels for it (AVX-512 or
 * AVX2 with FMA; runners/cpu_step.h): the weights packed once, then per
 * step one fused pass that computes x_t W_ih^T + h_{t-1} W_hh^T and the
 * cell block by block, split over a team of OpenBLAS's thread count with a
 * barrier per step (the AVX2 kernels: x W_ih^T of all steps as one
 * OpenBLAS GEMM first, and h_{t-1} W_hh^T added to it per step; in the
 * backward, dx of all steps as one GEMM after them).
 * Elsewhere (and with LSTMCHECK_CPU_KERNELS=blas): the input projection
 * of all T steps in one OpenBLAS GEMM, then per step one recurrent GEMM
 * and a fused pointwise cell. Backward, with the kernels:
 * [W_ih | W_hh] packed once, per step one pass that computes dgates_t
 * [W_ih | W_hh] (dx_t, and dh_{t-1} with the cells of step t-1 after
 * it), split over the team like the forward; then the weight
 * gradients as one GEMM over all steps on the kernels (the bias gradient
 * from its packing). Without them, on OpenBLAS: per step a pointwise
 * backward and one recurrent GEMM for dh; the weight gradients and the
 * input gradient as single GEMMs over all steps.
 * Variable length: every step runs on the whole batch and the cell masks
 * the finished sequences (their state passes through unchanged).
 * cpu_dropout is the same runner for the dropout model: the output of
 * every layer but the last times its mask feeds the next layer (and the
 * gradient flowing down is masked alike). cpu_layernorm is the same runner
 * for the LayerNorm model: LN_i over the input projection of all steps at
 * once, per step the recurrent GEMM apart, LN_h, and a LayerNorm cell
 * (runners/cpu_layernorm.c); backward through them in the same order.
 * The test build adds cpu_tf32 and cpu_tf32_trunc: the same runner with
 * every GEMM operand cut to TF32 (runners/faults.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT: OpenBLAS's blas_thread_shutdown_ */
#include "base/parallel.h"
#include "runners/cpu_layernorm.h"
#include "runners/cpu_step.h"
#include "runners/faults.h"
#include "runners/runner.h"
#include "device/machine.h"
#include "device/timer.h"
#include "device/trace.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What the GEMMs see of their operands: FP32 as they are, or cut to TF32's
 * 11-bit significand (10 stored bits) as tensor cores do, to nearest even
 * or truncated; the products are summed in FP32 either way. A runner table
 * names its kind in `impl` (NULL: FP32). */
typedef enum gemm_operands { OPERANDS_FP32, OPERANDS_TF32_NEAREST, OPERANDS_TF32_TRUNCATED } gemm_operands;

typedef struct cpu_layer {
    float *gates;  /* (T,B,4H): input projection, then pre-activations, then activations */
    /* The states of every step, each written once: h_seq (T+1,B,H) holds
     * h_0 and then the output of every step, c_seq (T+1,B,H) c_0 and then
     * the cell after every step. The tapes the backward reads are views of
     * them: the state before step t is the one after step t-1. Past a
     * sequence's end its output is zero where its state carries h on, but
     * the rows there are read only where nothing keeps the result (the
     * next step's sums, which the masked cell drops; the weight gradients,
     * where dgates is zero), so hy is taken from each sequence's last step
     * (final_state). */
    float *h_seq, *c_seq;
    float *h_prev; /* (T,B,H) h before each step: h_seq */
    float *out;    /* (T,B,H) the layer's output (zero past a sequence's end): h_seq + B*H,
                    * so never changed in place after the step (h_prev[t+1] is it) */
    float *c_prev; /* (T,B,H) c before each step: c_seq */
    float *c;      /* (T,B,H) c after each step: c_seq + B*H */
    float *masked; /* (T,B,H) out times the dropout mask after it (dropout model, not the top layer) */
    float *dw_ih, *dw_hh, *db_ih, *db_hh; /* accumulated gradients (no biases under LayerNorm) */
    /* the fused steps' weights in their kernels' layout (runners/cpu_step.h),
     * packed once at create: the forward's panels and the backward's */
    float *fwd_panels, *bwd_panels;
    /* LayerNorm model: the normalized vectors (T,B,4H: LN_i's, LN_h's;
     * T,B,H: LN_c's), their rstd (T,B each), and the accumulated gradients
     * of the LayerNorms' parameters (ln_grad[slot], the ABI's slots) */
    float *i_hat, *h_hat, *c_hat, *rstd_i, *rstd_h, *rstd_c;
    float *ln_grad[LSTMCHECK_MODEL_SLOTS];
} cpu_layer;

/* The LayerNorm model's parameter slots, and each one's length in H */
static const struct {
    int slot, width;
} ln_params[] = {{LSTMCHECK_LN_I_WEIGHT, 4}, {LSTMCHECK_LN_I_BIAS, 4}, {LSTMCHECK_LN_H_WEIGHT, 4},
                 {LSTMCHECK_LN_H_BIAS, 4},   {LSTMCHECK_LN_C_WEIGHT, 1}, {LSTMCHECK_LN_C_BIAS, 1}};
#define LN_PARAMS (sizeof ln_params / sizeof ln_params[0])

typedef struct cpu_state {
    const lstm_problem *p;
    int *len;       /* lengths, never NULL here */
    cpu_layer *layers;
    float *hy, *cy; /* (L,B,H) */
    float *dgates;  /* (T,B,4H) scratch; (2,B,4H) where the fused backward steps give dx_t: step t's and t-1's */
    float *gate_tape; /* the fused steps: dgates of every step, as the weight gradients read them */
    /* LayerNorm model: (T,B,4H) dgates back through LN_h (what W_hh
     * sees), (T,B,H) the gradient of each step's c_t, (B,4H) a step's
     * recurrent projection before LN_h */
    float *dgates_hh, *d_cell, *h_proj;
    float *d_out, *d_in; /* (T,B,max(I,H)) */
    /* the gradient reaching the output of the layer the backward is in:
     * the problem's dy for the top layer (not copied), else d_out */
    const float *out_grad;
    float *dx, *dh0, *dc0;
    float *dh, *dc, *dh_next; /* (B,H) */
    int backward_done;
    float *extra_a, *extra_c; /* test-only extra work */
    int extra_rows;
    gemm_operands operands;
    float *op_a, *op_b; /* TF32: a GEMM's operands, cut */
    /* the fused steps (runners/cpu_step.h), NULL where they do not run,
     * and the cell's bias of one layer at a time */
    const cpu_step_kernels *kernels;
    float *bias;
    /* where the kernels' weight-gradient GEMM packs (col_sums: the bias
     * gradient of a backward) */
    cpu_wgrad_buffers wgrad;
    int threads;
    void (*park_blas_threads)(void); /* OpenBLAS's blas_thread_shutdown_, where it has one */
} cpu_state;

/* n floats of src into dst with their significand cut to TF32: the low 13
 * of FP32's 23 stored bits go, rounded to nearest (ties to even) or
 * dropped. Inf and NaN pass unchanged; a carry out of the top rounds up
 * to Inf, as the hardware does. */
static const float *tf32_copy(float *restrict dst, const float *restrict src, size_t n, gemm_operands how)
{
    const uint32_t cut = 0x1fffu;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &src[i], sizeof b);
        if ((b & 0x7f800000u) != 0x7f800000u) {
            if (how == OPERANDS_TF32_NEAREST)
                b += (cut >> 1) + ((b >> 13) & 1u);
            b &= ~cut;
        }
        memcpy(&dst[i], &b, sizeof b);
    }
    return dst;
}

/* C = A op(B) (+ C when beta is 1), row-major, dense operands: every GEMM
 * of the runner, each an operation of the trace named op. Under TF32 both
 * operands are cut first (s->op_a, op_b hold the largest of them). */
static void gemm(const cpu_state *s, const char *op, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    if (s->operands != OPERANDS_FP32)
        TRACE_OP("tf32.cut_operands", {
            A = tf32_copy(s->op_a, A, (size_t)(ta == CblasNoTrans ? M : K) * (size_t)lda, s->operands);
            B = tf32_copy(s->op_b, B, (size_t)(tb == CblasNoTrans ? K : N) * (size_t)ldb, s->operands);
        });
    TRACE_OP(op, cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc));
}

/* The fused pointwise cell of one sequence: pre-activations g (4H, gate
 * order i, f, g, o) plus both biases and the cell before, c_in ->
 * activated gates (in place), the new cell c_out and h_out (each the tape
 * and the next step's state at once). Separate restrict pointers let the
 * compiler vectorize it, with libmvec's expf/tanhf (this file is built
 * with -ffast-math; the numerics gate checks it). */
static void cell_forward(int H, float *restrict g, const float *restrict b_ih, const float *restrict b_hh,
                         const float *restrict c_in, float *restrict c_out, float *restrict h_out)
{
    const float use_bhh = FAULT_ON(FAULT_MISSING_BIAS) ? 0.0f : 1.0f;
    const float o_scale = FAULT_ON(FAULT_OUTPUT_GATE_1PCT) ? 1.01f : 1.0f;
    const int i_at = FAULT_ON(FAULT_GATE_ORDER) ? H : 0;
    const int f_at = FAULT_ON(FAULT_GATE_ORDER) ? 0 : H;
    for (int k = 0; k < H; k++) {
        float gi = sigmoidf_(g[i_at + k] + b_ih[i_at + k] + use_bhh * b_hh[i_at + k]);
        float gf = sigmoidf_(g[f_at + k] + b_ih[f_at + k] + use_bhh * b_hh[f_at + k]);
        float pg = g[2 * H + k] + b_ih[2 * H + k] + use_bhh * b_hh[2 * H + k];
        float gg = FAULT_ON(FAULT_WRONG_ACTIVATION) ? sigmoidf_(pg) : tanhf(pg);
        float go = sigmoidf_(g[3 * H + k] + b_ih[3 * H + k] + use_bhh * b_hh[3 * H + k]) * o_scale;
        float c = gf * c_in[k] + gi * gg;
        g[k] = gi;
        g[H + k] = gf;
        g[2 * H + k] = gg;
        g[3 * H + k] = go;
        c_out[k] = c;
        h_out[k] = go * tanhf(c);
    }
}

/* Its backward: from the saved gates, c_t and c_{t-1}, the incoming dh
 * (state) + d_out (this step's output gradient) and dc -> dgates; dc is
 * replaced by the gradient of c_{t-1}. */
static void cell_backward(int H, const float *restrict g, const float *restrict ct, const float *restrict cp,
                          const float *restrict d_out, const float *restrict dh, float *restrict dc,
                          float *restrict dg)
{
    const float o_grad_scale = FAULT_ON(FAULT_SMALL_GATE_GRAD) ? 1.0001f : 1.0f;
    for (int k = 0; k < H; k++) {
        float gi = g[k], gf = g[H + k], gg = g[2 * H + k], go = g[3 * H + k];
        float dht = dh[k] + d_out[k];
        float tc = tanhf(ct[k]);
        float dct = dc[k] + dht * go * (1.0f - tc * tc);
        dg[k] = dct * gg * gi * (1.0f - gi);
        dg[H + k] = dct * cp[k] * gf * (1.0f - gf);
        dg[2 * H + k] = dct * gi * (1.0f - gg * gg);
        dg[3 * H + k] = dht * tc * go * (1.0f - go) * o_grad_scale;
        dc[k] = dct * gf;
    }
}

static void cpu_destroy(void *vs)
{
    cpu_state *s = vs;
    if (!s)
        return;
    if (s->layers) {
        for (int l = 0; l < s->p->shape.num_layers; l++) {
            cpu_layer *ly = &s->layers[l];
            free(ly->gates); free(ly->h_seq); free(ly->c_seq); free(ly->masked);
            free(ly->dw_ih); free(ly->dw_hh); free(ly->db_ih); free(ly->db_hh);
            free(ly->fwd_panels); free(ly->bwd_panels);
            free(ly->i_hat); free(ly->h_hat); free(ly->c_hat);
            free(ly->rstd_i); free(ly->rstd_h); free(ly->rstd_c);
            for (size_t i = 0; i < LN_PARAMS; i++)
                free(ly->ln_grad[ln_params[i].slot]);
        }
    }
    free(s->layers); free(s->len); free(s->hy); free(s->cy); free(s->dgates);
    free(s->d_out); free(s->d_in); free(s->dx); free(s->dh0); free(s->dc0);
    free(s->dh); free(s->dc); free(s->dh_next); free(s->extra_a); free(s->extra_c);
    free(s->op_a); free(s->op_b);
    free(s->dgates_hh); free(s->d_cell); free(s->h_proj);
    free(s->bias); free(s->gate_tape);
    free(s->wgrad.strips); free(s->wgrad.partial); free(s->wgrad.col_sums);
    free(s);
}

/* The fused step's kernels LSTMCHECK_CPU_KERNELS asks for: unset or
 * "auto", the widest this CPU runs (NULL where none); "avx512" or "avx2",
 * those (unsupported where this CPU lacks them); "blas", none: a BLAS GEMM
 * and the cell per step, as before the fused step. Any other value is an
 * error, found by available() before any work. */
static int kernels_wanted(const cpu_step_kernels **k, lc_error *err)
{
    const char *want = getenv("LSTMCHECK_CPU_KERNELS");
    *k = NULL;
    if (!want || !*want || !strcmp(want, "auto")) {
        *k = cpu_step_kernels_for(NULL);
        return LC_OK;
    }
    if (!strcmp(want, "blas"))
        return LC_OK;
    if (strcmp(want, "avx512") && strcmp(want, "avx2")) {
        lc_error_set(err, "LSTMCHECK_CPU_KERNELS=%s is not one of auto, avx512, avx2, blas", want);
        return LC_ERROR;
    }
    *k = cpu_step_kernels_for(want);
    if (!*k) {
        lc_error_set(err, "LSTMCHECK_CPU_KERNELS=%s, but this CPU (or build) has no %s kernels", want, want);
        return LC_UNSUPPORTED;
    }
    return LC_OK;
}

/* cpu and cpu_dropout: as their kernels are wanted */
static int cpu_available(lc_error *why)
{
    const cpu_step_kernels *k;
    return kernels_wanted(&k, why);
}

/* cpu_layernorm and the TF32 variants run no step kernels: always */
static int cpu_gemm_path_available(lc_error *why)
{
    (void)why;
    return LC_OK;
}

/* The state with its layer table and the lengths (all T without variable
 * length); NULL when out of host memory. */
static cpu_state *cpu_state_new(const lstm_problem *p)
{
    const lstm_shape *sh = &p->shape;
    const size_t B = (size_t)sh->batch;
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = p;
    s->layers = calloc((size_t)sh->num_layers, sizeof *s->layers);
    s->len = malloc(B * sizeof *s->len);
    if (!s->layers || !s->len) {
        cpu_destroy(s);
        return NULL;
    }
    for (size_t b = 0; b < B; b++)
        s->len[b] = lstm_length(p, (int)b);
    return s;
}

/* Layer l's tape (gates, cells, states before each step, output) and its
 * accumulated gradients (lstm_host_buffers: counted, or made). */
static void alloc_layer(cpu_layer *ly, const lstm_problem *p, int l, lstm_host_buffers *hb)
{
    const lstm_shape *sh = &p->shape;
    const size_t T = (size_t)sh->seq_length, B = (size_t)sh->batch, H = (size_t)sh->hidden_size;
    if (lstm_dropout_mask(p, l))
        ly->masked = lstm_host_floats(hb, T * B * H);
    ly->gates = lstm_host_floats(hb, T * B * 4 * H);
    ly->h_seq = lstm_host_floats(hb, (T + 1) * B * H);
    ly->c_seq = lstm_host_floats(hb, (T + 1) * B * H);
    if (ly->h_seq && ly->c_seq) { /* (counting: NULL) */
        ly->h_prev = ly->h_seq;
        ly->out = ly->h_seq + B * H;
        ly->c_prev = ly->c_seq;
        ly->c = ly->c_seq + B * H;
    }
    ly->dw_ih = lstm_host_floats(hb, lstm_w_ih_elems(sh, l));
    ly->dw_hh = lstm_host_floats(hb, lstm_w_hh_elems(sh));
    if (!(lstm_layernorm_of(p, l).eps > 0)) {
        ly->db_ih = lstm_host_floats(hb, 4 * H);
        ly->db_hh = lstm_host_floats(hb, 4 * H);
        return;
    }
    ly->i_hat = lstm_host_floats(hb, T * B * 4 * H);
    ly->h_hat = lstm_host_floats(hb, T * B * 4 * H);
    ly->c_hat = lstm_host_floats(hb, T * B * H);
    ly->rstd_i = lstm_host_floats(hb, T * B);
    ly->rstd_h = lstm_host_floats(hb, T * B);
    ly->rstd_c = lstm_host_floats(hb, T * B);
    for (size_t i = 0; i < LN_PARAMS; i++)
        ly->ln_grad[ln_params[i].slot] = lstm_host_floats(hb, (size_t)ln_params[i].width * H);
}

/* The columns of x_t that layer l's fused steps multiply: all of them,
 * or none where the kernels take the input projection as one GEMM before
 * the steps (cpu_step_kernels.input_in_step). */
static int step_input(const cpu_state *s, int l)
{
    return s->kernels->input_in_step ? lstm_layer_input_size(&s->p->shape, l) : 0;
}

/* Whether the fused backward steps give dx_t themselves; else the
 * input's gradient of every step is one GEMM after them (input_grad: the
 * BLAS path's way, and that of kernels whose input_grad_in_step is 0). */
static int steps_give_input_grad(const cpu_state *s)
{
    return s->kernels && s->kernels->input_grad_in_step;
}

/* The columns of dx_t that layer l's fused backward steps compute. */
static int backward_step_input(const cpu_state *s, int l)
{
    return steps_give_input_grad(s) ? lstm_layer_input_size(&s->p->shape, l) : 0;
}

/* The steps of dgates the backward keeps: two, step t's and t-1's in
 * turn, where the steps give dx_t; else every one, for input_grad (and
 * the BLAS path's weight gradients). */
static int dgates_steps(const cpu_state *s)
{
    return steps_give_input_grad(s) ? 2 : s->p->shape.seq_length;
}

/* Where the backward keeps dgates of step t. */
static float *dgates_of_step(const cpu_state *s, int t)
{
    const lstm_shape *sh = &s->p->shape;
    return s->dgates + (size_t)(t % dgates_steps(s)) * sh->batch * 4 * (size_t)sh->hidden_size;
}

/* The final states, the backward's scratch and gradients of the inputs,
 * and the test-only extra work's operands. */
static void alloc_buffers(cpu_state *s, lstm_host_buffers *hb)
{
    const lstm_shape *sh = &s->p->shape;
    const size_t T = (size_t)sh->seq_length, B = (size_t)sh->batch, H = (size_t)sh->hidden_size;
    const size_t wide = (size_t)(sh->input_size > sh->hidden_size ? sh->input_size : sh->hidden_size);
    s->hy = lstm_host_floats(hb, lstm_state_elems(sh));
    s->cy = lstm_host_floats(hb, lstm_state_elems(sh));
    s->dgates = lstm_host_floats(hb, (size_t)dgates_steps(s) * B * 4 * H);
    s->d_out = lstm_host_floats(hb, T * B * wide);
    s->d_in = lstm_host_floats(hb, T * B * wide);
    s->dx = lstm_host_floats(hb, lstm_seq_elems(sh, sh->input_size));
    s->dh0 = lstm_host_floats(hb, lstm_state_elems(sh));
    s->dc0 = lstm_host_floats(hb, lstm_state_elems(sh));
    s->dh = lstm_host_floats(hb, B * H);
    s->dc = lstm_host_floats(hb, B * H);
    s->dh_next = lstm_host_floats(hb, B * H);
    if (lstm_layernorm_of(s->p, 0).eps > 0) {
        s->dgates_hh = lstm_host_floats(hb, T * B * 4 * H);
        s->d_cell = lstm_host_floats(hb, T * B * H);
        s->h_proj = lstm_host_floats(hb, B * 4 * H);
    }
    if (EXTRA_WORK_PERCENT() > 0) {
        /* test-only: small GEMMs (8 x 4H x H) repeated as extra work */
        s->extra_rows = 8;
        s->extra_a = lstm_host_floats(hb, (size_t)s->extra_rows * H);
        s->extra_c = lstm_host_floats(hb, (size_t)s->extra_rows * 4 * H);
    }
    if (s->operands != OPERANDS_FP32) {
        /* the largest A: (T*B) x max(I, H, 4H); B: max(T*B, 4H) x max(I, H) */
        s->op_a = lstm_host_floats(hb, T * B * (wide > 4 * H ? wide : 4 * H));
        s->op_b = lstm_host_floats(hb, (T * B > 4 * H ? T * B : 4 * H) * wide);
    }
}

/* The fused step's kernels for this problem: those wanted, but the
 * LayerNorm model and TF32 operands always take the GEMM path (NULL). */
static int choose_kernels(cpu_state *s, lc_error *err)
{
    s->kernels = NULL;
    if (s->operands != OPERANDS_FP32 || lstm_layernorm_of(s->p, 0).eps > 0)
        return LC_OK;
    return kernels_wanted(&s->kernels, err);
}

/* A member of the fused step's team does at least this many FLOPs a step:
 * about 20 us at 100 GFLOP/s, where a barrier costs a microsecond or two
 * on an idle machine and far more on a busy one. */
#define MIN_MEMBER_STEP_FLOPS 2e6

/* The fused steps' threads: OpenBLAS's thread count, but no more than
 * the work of a step keeps busy (one thread for tiny problems: 2 threads
 * on H = 16, B = 4 took 160 times as long as one). The work counts x's
 * columns even where the AVX2 steps leave them to the GEMM before: sized
 * by h's alone, the small set's forward (H = 128, B = 16) ran on one
 * thread of two and took 1.5 times as long (docs/perf.md). */
static int team_threads(const lstm_shape *sh, int threads)
{
    const double step_flops = 2.0 * sh->batch * (double)(sh->input_size + sh->hidden_size) * 4.0 * sh->hidden_size;
    const double by_work = floor(step_flops / MIN_MEMBER_STEP_FLOPS);
    const int n = by_work < threads ? (int)by_work : threads;
    return n < 1 ? 1 : n;
}

/* A team for `items` pieces of work (blocks, items, strips): no more
 * members than pieces, as a member without one would only wait at every
 * barrier. */
static int team_for(const cpu_state *s, int items)
{
    return s->threads < items ? s->threads : items;
}

/* The fused step's panels (every layer's) and bias, the gate tape and
 * the weight gradients' buffers (counted, or made). */
static void alloc_step_buffers(cpu_state *s, lstm_host_buffers *hb)
{
    const lstm_shape *sh = &s->p->shape;
    if (!s->kernels)
        return;
    const int lanes = s->kernels->lanes, widest = sh->input_size > sh->hidden_size ? sh->input_size : sh->hidden_size;
    for (int l = 0; l < sh->num_layers; l++) {
        s->layers[l].fwd_panels =
            lstm_host_floats(hb, cpu_forward_panel_floats(step_input(s, l), sh->hidden_size, lanes));
        s->layers[l].bwd_panels =
            lstm_host_floats(hb, cpu_backward_panel_floats(backward_step_input(s, l), sh->hidden_size, lanes));
    }
    s->bias = lstm_host_floats(hb, 4 * (size_t)cpu_step_blocks(sh->hidden_size, lanes) * (size_t)lanes);
    const int rows = sh->seq_length * sh->batch, strip_rows = s->kernels->strip_rows;
    s->gate_tape = lstm_host_floats(hb, cpu_gate_tape_floats(rows, sh->hidden_size, lanes));
    const cpu_weight_grads widest_wg = {.rows = rows, .hidden = sh->hidden_size, .width = {widest, sh->hidden_size}};
    s->wgrad.strips = lstm_host_floats(hb, cpu_wgrad_strip_floats(&widest_wg, strip_rows));
    if (cpu_wgrad_partial_floats(&widest_wg, strip_rows, lanes) > 0)
        s->wgrad.partial = lstm_host_floats(hb, cpu_wgrad_partial_floats(&widest_wg, strip_rows, lanes));
    s->wgrad.col_sums = lstm_host_floats(hb, 4 * (size_t)sh->hidden_size);
    s->threads = team_threads(sh, openblas_get_num_threads());
    *(void **)&s->park_blas_threads = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
}

/* What one member of the packing team reads (pack_weights). */
typedef struct pack_team {
    cpu_state *s;
    int l;
} pack_team;

static void pack_weights_member(void *arg, lc_team *team, int rank, int size)
{
    (void)team;
    const pack_team *pt = arg;
    const cpu_state *s = pt->s;
    const lstm_problem *p = s->p;
    const int l = pt->l, H = p->shape.hidden_size, lanes = s->kernels->lanes, In_bwd = backward_step_input(s, l);
    const int blocks = cpu_step_blocks(H, lanes);
    int dh_items, dx_items;
    cpu_backward_items(In_bwd, H, lanes, &dh_items, &dx_items);
    const int items = dh_items + dx_items;
    cpu_pack_forward(s->layers[l].fwd_panels, p->w_ih[l], p->w_hh[l], step_input(s, l), H, lanes,
                     s->kernels->forward_gate_groups, FAULT_ON(FAULT_TRANSPOSED_WEIGHT), blocks * rank / size,
                     blocks * (rank + 1) / size);
    cpu_pack_backward(s->layers[l].bwd_panels, p->w_ih[l], p->w_hh[l], In_bwd, H, lanes, items * rank / size,
                      items * (rank + 1) / size);
}

/* Every layer's weights into the fused steps' panels, once: the problem's
 * weights do not change over a runner's life, so the forward and the
 * backward read them in their kernels' layout, as oneDNN's primitives read
 * theirs, reordered once at create (docs/perf.md, "Weights packed once"). */
static void pack_weights(cpu_state *s)
{
    if (!s->kernels) /* the GEMM path reads the weights as they are */
        return;
    for (int l = 0; l < s->p->shape.num_layers; l++) {
        pack_team pt = {s, l};
        lc_parallel_team(s->threads, pack_weights_member, &pt);
    }
}

/* Every buffer of the runner (counted, or made: lstm_host_buffers). */
static void alloc_all(cpu_state *s, lstm_host_buffers *hb)
{
    for (int l = 0; l < s->p->shape.num_layers; l++)
        alloc_layer(&s->layers[l], s->p, l, hb);
    alloc_buffers(s, hb);
    alloc_step_buffers(s, hb);
}

static int cpu_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    const lstm_shape *sh = &p->shape;
    cpu_state *s = cpu_state_new(p);
    if (!s) {
        lc_error_set(err, "cpu: out of host memory");
        return LC_ERROR;
    }
    s->operands = self->impl ? *(const gemm_operands *)self->impl : OPERANDS_FP32;
    const int chosen = choose_kernels(s, err);
    if (chosen != LC_OK) {
        cpu_destroy(s);
        return chosen;
    }
    lstm_host_buffers count = {.counting = 1, .ok = 1};
    alloc_all(s, &count);
    /* the session checked a share as large as ref's; the gate tape, padded
     * to whole blocks of units, can take 8 (AVX2) or 16 (AVX-512) times
     * the tape's floats */
    const int fits = lstm_host_room(sh, p->model, count.bytes, machine_host_memory_bytes(),
                                    "its tapes, work buffers and gradients", err);
    if (fits != LC_OK) {
        cpu_destroy(s);
        return fits;
    }
    lstm_host_buffers made = {.counting = 0, .ok = 1};
    alloc_all(s, &made);
    if (!made.ok) {
        cpu_destroy(s);
        lc_error_set(err, "cpu: out of host memory for shape T=%zu B=%zu H=%zu", (size_t)sh->seq_length,
                     (size_t)sh->batch, (size_t)sh->hidden_size);
        return LC_ERROR;
    }
    pack_weights(s);
    *out = s;
    return LC_OK;
}

/* Test-only: GEMMs of the runner's own kind, repeated until they have
 * taken EXTRA_WORK_PERCENT of the time the real work took since started:
 * a known slowdown for the perf verdict's power tests. */
static void extra_work(cpu_state *s, double started)
{
    if (!(EXTRA_WORK_PERCENT() > 0) || !s->extra_a)
        return;
    const int H = s->p->shape.hidden_size;
    const double begin = wall_seconds();
    const double target = (begin - started) * EXTRA_WORK_PERCENT() / 100.0;
    const uint64_t op_start = trace_op_begin();
    while (wall_seconds() - begin < target)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->extra_rows, 4 * H, H, 1.0f, s->extra_a,
                    H, s->p->w_hh[0], H, 0.0f, s->extra_c, 4 * H);
    trace_op_end("planted.extra_work", op_start);
}

/* What layer l reads: x, or the output of the layer below (masked, under
 * dropout). */
static const float *layer_input(const cpu_state *s, int l)
{
    if (l == 0)
        return s->p->x;
    const cpu_layer *below = &s->layers[l - 1];
    return below->masked ? below->masked : below->out;
}

/* dst[i] = src[i] * mask[i] (the cell's padding zeros stay zero) */
static void masked_copy(float *restrict dst, const float *restrict src, const float *restrict mask, size_t n)
{
    if (FAULT_ON(FAULT_DROPOUT_UNSCALED)) {
        for (size_t i = 0; i < n; i++)
            dst[i] = mask[i] != 0.0f ? src[i] : 0.0f;
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] * mask[i];
}

/* Under dropout, layer l's output masked for the layer above. */
static void mask_output(cpu_state *s, int l)
{
    const float *mask = lstm_dropout_mask(s->p, l);
    const lstm_shape *sh = &s->p->shape;
    const size_t n = lstm_seq_elems(sh, sh->hidden_size);
    cpu_layer *ly = &s->layers[l];
    if (mask)
        TRACE_OP("dropout.mask_output", masked_copy(ly->masked, ly->out, mask, n));
}

/* Step t's recurrent term into its gates g (B x 4H): the LSTM's GEMM adds
 * h W_hh^T itself; the LayerNorm model's adds LN_h of it (tape: h_hat). */
static void step_recurrent(cpu_state *s, int l, int t, float *g, const float *hs)
{
    const lstm_problem *p = s->p;
    const int B = p->shape.batch, H = p->shape.hidden_size;
    const lstm_layernorm ln = lstm_layernorm_of(p, l);
    cpu_layer *ly = &s->layers[l];
    if (!(ln.eps > 0)) {
        if (FAULT_ON(FAULT_TRANSPOSED_WEIGHT))
            gemm(s, "gemm.recurrent", CblasNoTrans, CblasNoTrans, B, 4 * H, H, hs, H, p->w_hh[l], 4 * H, 1.0f, g, 4 * H);
        else
            gemm(s, "gemm.recurrent", CblasNoTrans, CblasTrans, B, 4 * H, H, hs, H, p->w_hh[l], H, 1.0f, g, 4 * H);
        return;
    }
    const size_t at = (size_t)t * B;
    gemm(s, "gemm.recurrent", CblasNoTrans, CblasTrans, B, 4 * H, H, hs, H, p->w_hh[l], H, 0.0f, s->h_proj, 4 * H);
    TRACE_OP("layernorm.recurrent", {
        cpu_ln_rows(s->h_proj, ly->h_hat + at * 4 * H, ly->rstd_h + at, B, 4 * H, ln.h_weight, ln.h_bias,
                    (float)ln.eps);
        for (size_t i = 0; i < (size_t)B * 4 * H; i++)
            g[i] += s->h_proj[i];
    });
}

/* x_t W_ih^T of every step of layer l as one GEMM, into the layer's gates'
 * tape. */
static void input_projection(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const int H = p->shape.hidden_size, In = lstm_layer_input_size(&p->shape, l);
    gemm(s, "gemm.input_projection", CblasNoTrans, CblasTrans, p->shape.seq_length * p->shape.batch, 4 * H, In,
         layer_input(s, l), In, p->w_ih[l], In, 0.0f, s->layers[l].gates, 4 * H);
}

/* Layer l's final state from its tapes: c of the last step (a finished
 * sequence's was carried on), h of each sequence's own last step (its
 * output is zero after it). */
static void final_state(cpu_state *s, int l)
{
    const lstm_shape *sh = &s->p->shape;
    const size_t H = (size_t)sh->hidden_size, BH = (size_t)sh->batch * H;
    const cpu_layer *ly = &s->layers[l];
    memcpy(s->cy + (size_t)l * BH, ly->c_seq + (size_t)sh->seq_length * BH, BH * sizeof(float));
    for (int b = 0; b < sh->batch; b++) { /* h_seq[len]: h_0 where the length is 0 */
        const int steps = s->len[b] < 0 ? 0 : s->len[b] < sh->seq_length ? s->len[b] : sh->seq_length;
        memcpy(s->hy + (size_t)l * BH + (size_t)b * H, ly->h_seq + (size_t)steps * BH + (size_t)b * H,
               H * sizeof(float));
    }
}

/* Layer l the BLAS way: the input projection of every step in one GEMM,
 * then per step the recurrent GEMM and the cell, reading the state before
 * step t from the tapes (h_seq[t], c_seq[t]) and writing the next one
 * there, as the fused step does. */
static void layer_forward_gemm(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const int T = p->shape.seq_length, B = p->shape.batch, H = p->shape.hidden_size;
    const size_t BH = (size_t)B * H, H4 = 4 * (size_t)H;
    cpu_layer *ly = &s->layers[l];
    const lstm_layernorm ln = lstm_layernorm_of(p, l);
    const float *b_ih = p->b_ih ? p->b_ih[l] : NULL, *b_hh = p->b_hh ? p->b_hh[l] : NULL;
    TRACE_OP("copy.initial_state", {
        memcpy(ly->h_seq, p->h0 + (size_t)l * BH, BH * sizeof(float));
        memcpy(ly->c_seq, p->c0 + (size_t)l * BH, BH * sizeof(float));
    });
    input_projection(s, l);
    if (ln.eps > 0)
        TRACE_OP("layernorm.input",
                 cpu_ln_rows(ly->gates, ly->i_hat, ly->rstd_i, T * B, 4 * H, ln.i_weight, ln.i_bias, (float)ln.eps));
    for (int t = 0; t < T; t++) {
        float *g = ly->gates + (size_t)t * B * H4;
        /* (a finished sequence's row of h_prev is zero: its sums are not read) */
        step_recurrent(s, l, t, g, ly->h_prev + (size_t)t * BH);
        const uint64_t cell_start = trace_op_begin();
        /* fused cell; finished sequences carry c on, their output zero */
        for (int b = 0; b < B; b++) {
            const size_t at = (size_t)t * BH + (size_t)b * H;
            float *gb = g + (size_t)b * H4, *ct = ly->c + at, *ot = ly->out + at;
            const float *cp = ly->c_prev + at;
            if (t >= s->len[b]) {
                memset(gb, 0, H4 * sizeof(float));
                memcpy(ct, cp, (size_t)H * sizeof(float));
                memset(ot, 0, (size_t)H * sizeof(float));
                continue;
            }
            if (ln.eps > 0)
                cpu_ln_cell_forward(H, &ln, gb, cp, ct, ly->c_hat + at, ly->rstd_c + (size_t)t * B + b, ot);
            else
                cell_forward(H, gb, b_ih, b_hh, cp, ct, ot);
        }
        trace_op_end(ln.eps > 0 ? "cell.forward_layernorm" : "cell.forward", cell_start);
    }
    TRACE_OP("copy.final_state", final_state(s, l));
}

/* A gates' tape above this size is streamed past the caches (cpu_step.h):
 * larger than a core's L2 and a fair share of L3 on the CPUs we run on. At
 * the default shape (52 MB) streaming saves 3-5 ms of 250; at the small
 * set (0.6 MB) it cost the backward 5%. Only the AVX-512 kernels stream
 * it: an AVX2 vector is half a line (cpu_step_kernel.h, stream_n). */
#define STREAMED_TAPE_BYTES ((size_t)8 << 20)

/* What one member of the fused layer's team reads (layer_forward_fused). */
typedef struct fused_layer {
    cpu_state *s;
    int l;
} fused_layer;

/* One member's share of a layer: its blocks of hidden units (their panels
 * packed at create), every step of them, meeting the others after each
 * step (the next reads all of h_t). */
static void fused_layer_member(void *arg, lc_team *team, int rank, int size)
{
    const fused_layer *fl = arg;
    cpu_state *s = fl->s;
    const lstm_problem *p = s->p;
    const int l = fl->l, T = p->shape.seq_length, B = p->shape.batch, H = p->shape.hidden_size;
    const int In = step_input(s, l), lanes = s->kernels->lanes;
    const int blocks = cpu_step_blocks(H, lanes);
    const int first = blocks * rank / size, end = blocks * (rank + 1) / size;
    const size_t BH = (size_t)B * H;
    cpu_layer *ly = &s->layers[l];
    const float *in = layer_input(s, l);
    cpu_forward_step st = {
        .batch = B, .hidden = H, .input = In, .packed = ly->fwd_panels, .bias = s->bias, .len = s->len,
        .faults = {FAULT_ON(FAULT_GATE_ORDER), FAULT_ON(FAULT_WRONG_ACTIVATION),
                   FAULT_ON(FAULT_OUTPUT_GATE_1PCT) ? 1.01f : 1.0f},
        /* (a projection in the tape is read back just before: in the caches) */
        .stream_gates = In && (size_t)T * BH * 4 * sizeof(float) > STREAMED_TAPE_BYTES,
    };
    for (int t = 0; t < T; t++) {
        const size_t at = (size_t)t * BH;
        st.t = t;
        st.x = In ? in + (size_t)t * B * In : NULL;
        st.h_in = ly->h_prev + at;
        st.c_in = ly->c_prev + at;
        st.c_out = ly->c + at;
        st.gates = ly->gates + at * 4;
        st.out = ly->out + at;
        TRACE_OP("step.forward", s->kernels->forward(&st, first, end));
        TRACE_OP("barrier", lc_team_barrier(team));
    }
}

/* Layer l with the fused step: step t reads the state before it from the
 * tapes (h_seq[t], c_seq[t]) and writes the next one there. */
static void layer_forward_fused(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const int H = p->shape.hidden_size;
    const size_t BH = (size_t)p->shape.batch * H;
    cpu_layer *ly = &s->layers[l];
    TRACE_OP("copy.initial_state", {
        memcpy(ly->h_seq, p->h0 + (size_t)l * BH, BH * sizeof(float));
        memcpy(ly->c_seq, p->c0 + (size_t)l * BH, BH * sizeof(float));
    });
    TRACE_OP("pack.bias", cpu_pack_bias(s->bias, p->b_ih ? p->b_ih[l] : NULL, p->b_hh ? p->b_hh[l] : NULL, H,
                                        s->kernels->lanes, FAULT_ON(FAULT_MISSING_BIAS)));
    if (!step_input(s, l)) /* the fused steps add h_{t-1} W_hh^T to it, and the cells write over it */
        input_projection(s, l);
    /* OpenBLAS's idle workers spin (and yield) for about 2^28 cycles after
     * each call; with as many threads as cores they took the team's cores
     * (2 threads on 2 cores: 171 instead of 136 ms a forward). Its own fork
     * handler stops them with blas_thread_shutdown_ and its next call
     * starts them again: the runner does the same, where OpenBLAS has it. */
    if (s->park_blas_threads)
        TRACE_OP("blas.park_threads", s->park_blas_threads());
    fused_layer fl = {s, l};
    lc_parallel_team(team_for(s, cpu_step_blocks(H, s->kernels->lanes)), fused_layer_member, &fl);
    TRACE_OP("copy.final_state", final_state(s, l));
}

static int cpu_forward(void *vs, lc_error *err)
{
    (void)err;
    cpu_state *s = vs;
    const double started = EXTRA_WORK_PERCENT() > 0 ? wall_seconds() : 0;
    for (int l = 0; l < s->p->shape.num_layers; l++) {
        if (s->kernels)
            layer_forward_fused(s, l);
        else
            layer_forward_gemm(s, l);
        mask_output(s, l);
    }
    extra_work(s, started);
    return LC_OK;
}

/* Step t of layer l backwards, every sequence: the step's dgates (under
 * LayerNorm also d_cell, and dgates_hh: dgates back through LN_h) from
 * dh, dc and d_out; dc becomes the gradient of c_{t-1}. Returns the
 * gradient W_hh's GEMM reads. */
static const float *step_cells_backward(cpu_state *s, int l, int t, int end_shift)
{
    const lstm_problem *p = s->p;
    const int B = p->shape.batch, H = p->shape.hidden_size;
    const size_t BH = (size_t)B * H, H4 = 4 * (size_t)H;
    const lstm_layernorm ln = lstm_layernorm_of(p, l);
    const cpu_layer *ly = &s->layers[l];
    const float *g = ly->gates + (size_t)t * B * H4;
    float *dg = s->dgates + (size_t)t * B * H4;
    for (int b = 0; b < B; b++) {
        const size_t at = (size_t)t * BH + (size_t)b * H;
        float *dgb = dg + (size_t)b * H4, *dh = s->dh + (size_t)b * H, *dc = s->dc + (size_t)b * H;
        if (t >= s->len[b] + end_shift) {
            memset(dgb, 0, H4 * sizeof(float));
            if (ln.eps > 0)
                memset(s->d_cell + at, 0, (size_t)H * sizeof(float));
        } else if (ln.eps > 0)
            cpu_ln_cell_backward(H, &ln, g + (size_t)b * H4, ly->c + at, ly->c_hat + at, ly->rstd_c[(size_t)t * B + b],
                                 ly->c_prev + at, s->out_grad + at, dh, dc, dgb, s->d_cell + at);
        else
            cell_backward(H, g + (size_t)b * H4, ly->c + at, ly->c_prev + at, s->out_grad + at, dh, dc, dgb);
    }
    if (!(ln.eps > 0))
        return dg;
    float *dgh = s->dgates_hh + (size_t)t * B * H4;
    memcpy(dgh, dg, B * H4 * sizeof(float));
    cpu_ln_rows_backward(dgh, ly->h_hat + (size_t)t * B * H4, ly->rstd_h + (size_t)t * B, B, 4 * H, ln.h_weight);
    return dgh;
}

/* Layer l's backward through time on BLAS: per step the cells, then
 * dh_{t-1} = dgates_t W_hh (finished sequences pass dh on). */
static void layer_backward_gemm(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const int T = p->shape.seq_length, B = p->shape.batch, H = p->shape.hidden_size;
    const int end_shift = FAULT_ON(FAULT_SEQ_END_OFF_BY_ONE) ? 1 : 0;
    float *dh = s->dh;
    for (int t = T - 1; t >= 0; t--) {
        const float *dg;
        TRACE_OP("cell.backward", dg = step_cells_backward(s, l, t, end_shift));
        gemm(s, "gemm.recurrent_grad", CblasNoTrans, CblasNoTrans, B, H, 4 * H, dg, 4 * H, p->w_hh[l], H, 0.0f,
             s->dh_next, H);
        for (int b = 0; b < B; b++)
            if (t >= s->len[b] + end_shift && !FAULT_ON(FAULT_STATE_GRAD_NOT_CARRIED))
                memcpy(s->dh_next + (size_t)b * H, dh + (size_t)b * H, (size_t)H * sizeof(float));
        float *swap = s->dh;
        s->dh = s->dh_next;
        s->dh_next = swap;
        dh = s->dh;
    }
    memcpy(s->dh0 + (size_t)l * B * H, dh, (size_t)B * H * sizeof(float));
}

/* One member's share of a layer's backward (cpu_backward_step): its
 * items (their panels packed at create), every step of them, from the cells of
 * step T-1 alone (t = T) down to dh_0 (t = 0), meeting the others after
 * each (the next step reads all of dgates_{t-1}). Without x's columns
 * (backward_step_input 0) the items are h's alone. */
static void fused_backward_member(void *arg, lc_team *team, int rank, int size)
{
    const fused_layer *fl = arg;
    cpu_state *s = fl->s;
    const lstm_problem *p = s->p;
    const int l = fl->l, T = p->shape.seq_length, B = p->shape.batch, H = p->shape.hidden_size;
    const int In = backward_step_input(s, l), lanes = s->kernels->lanes;
    const size_t BH = (size_t)B * H, BH4 = 4 * BH;
    int dh_items, dx_items;
    cpu_backward_items(In, H, lanes, &dh_items, &dx_items);
    int dh_share[2], dx_share[2], then[2];
    cpu_backward_share(dh_items, dx_items, rank, size, dh_share, dx_share, then);
    const cpu_layer *ly = &s->layers[l];
    float *const dh[2] = {s->dh, s->dh_next}, *d_in = l == 0 ? s->dx : s->d_in;
    cpu_backward_step st = {
        .batch = B, .hidden = H, .input = In, .packed = ly->bwd_panels, .dc = s->dc, .len = s->len,
        .faults = {FAULT_ON(FAULT_SMALL_GATE_GRAD) ? 1.0001f : 1.0f, FAULT_ON(FAULT_SEQ_END_OFF_BY_ONE),
                   FAULT_ON(FAULT_STATE_GRAD_NOT_CARRIED)},
    };
    st.tape = cpu_gate_tape_at(s->gate_tape, T * B, lanes);
    for (int t = T; t >= 0; t--) {
        const size_t cell = t > 0 ? (size_t)(t - 1) : 0; /* the step whose cell runs */
        st.t = t;
        st.dgates_in = t < T ? dgates_of_step(s, t) : NULL; /* written by the call before */
        st.dx = t < T && In ? d_in + (size_t)t * B * In : NULL;
        st.dh_in = dh[t == T ? 0 : (T - 1 - t) % 2];
        st.dh_out = t == 0 ? s->dh0 + (size_t)l * BH : dh[(T - t) % 2];
        st.gates = t > 0 ? ly->gates + cell * BH4 : NULL;
        st.c = ly->c + cell * BH;
        st.c_prev = ly->c_prev + cell * BH;
        st.d_out = s->out_grad + cell * BH;
        st.dgates_out = dgates_of_step(s, (int)cell);
        TRACE_OP("step.backward", {
            s->kernels->backward(&st, dh_share[0], dh_share[1], then[0]);
            s->kernels->backward(&st, dh_items + dx_share[0], dh_items + dx_share[1], then[1]);
        });
        if (t > 0)
            TRACE_OP("barrier", lc_team_barrier(team));
    }
}

/* Layer l's backward through time with the fused step (cpu_step.h): the
 * team computes dgates of every step, dh_0, and the input's gradient
 * (where the steps multiply x's columns). */
static void layer_backward_fused(cpu_state *s, int l)
{
    int dh_items, dx_items;
    cpu_backward_items(backward_step_input(s, l), s->p->shape.hidden_size, s->kernels->lanes, &dh_items, &dx_items);
    const int items = dh_items + dx_items;
    if (s->park_blas_threads) /* as before the forward's team (layer_forward_fused) */
        TRACE_OP("blas.park_threads", s->park_blas_threads());
    fused_layer fl = {s, l};
    lc_parallel_team(team_for(s, items), fused_backward_member, &fl);
}

/* Backward through time of layer l: from the seeds dhy, dcy and the
 * gradient of the layer's output (s->out_grad) to dgates of every step, and
 * the gradient of the initial state (and, fused where the steps compute
 * it, of the layer's input). */
static void layer_backward_steps(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const size_t BH = (size_t)p->shape.batch * p->shape.hidden_size;
    const size_t seed_at = FAULT_ON(FAULT_STATE_GRAD_ONE_LAYER) ? 0 : (size_t)l * BH;
    TRACE_OP("copy.state_grad_seeds", {
        if (p->dhy) memcpy(s->dh, p->dhy + seed_at, BH * sizeof(float));
        else memset(s->dh, 0, BH * sizeof(float));
        if (p->dcy && !FAULT_ON(FAULT_DCY_IGNORED)) memcpy(s->dc, p->dcy + seed_at, BH * sizeof(float));
        else memset(s->dc, 0, BH * sizeof(float));
    });
    /* steps t >= len[b] are padding for sequence b: no cell, and the state
     * gradient passes through unchanged to the sequence's last step */
    if (s->kernels)
        layer_backward_fused(s, l);
    else
        layer_backward_gemm(s, l);
    TRACE_OP("copy.state_grad", memcpy(s->dc0 + (size_t)l * BH, s->dc, BH * sizeof(float)));
}

/* Under LayerNorm, layer l's LayerNorm parameter gradients from dgates
 * (LN_i's and LN_h's output gradient) and d_cell (LN_c's), then dgates
 * back through LN_i: what W_ih's gradient and the input's read. */
static void layer_layernorm_grads(cpu_state *s, int l)
{
    const lstm_shape *sh = &s->p->shape;
    const int rows = sh->seq_length * sh->batch, B = sh->batch, H = sh->hidden_size;
    const lstm_layernorm ln = lstm_layernorm_of(s->p, l);
    cpu_layer *ly = &s->layers[l];
    float **grad = ly->ln_grad;
    cpu_ln_param_grads(s->dgates, ly->i_hat, rows, B, 4 * H, grad[LSTMCHECK_LN_I_WEIGHT], grad[LSTMCHECK_LN_I_BIAS]);
    cpu_ln_param_grads(s->dgates, ly->h_hat, rows, B, 4 * H, grad[LSTMCHECK_LN_H_WEIGHT], grad[LSTMCHECK_LN_H_BIAS]);
    cpu_ln_param_grads(s->d_cell, ly->c_hat, rows, B, H, grad[LSTMCHECK_LN_C_WEIGHT], grad[LSTMCHECK_LN_C_BIAS]);
    cpu_ln_rows_backward(s->dgates, ly->i_hat, ly->rstd_i, rows, 4 * H, ln.i_weight);
}

/* What one member of the weight gradients' team reads. */
typedef struct wgrad_team {
    cpu_state *s;
    const cpu_weight_grads *wg;
} wgrad_team;

static void weight_grads_member(void *arg, lc_team *team, int rank, int size)
{
    const wgrad_team *w = arg;
    cpu_weight_grads_member(w->s->kernels, w->wg, &w->s->wgrad, team, rank, size); /* its parts traced inside */
}

/* dW_ih, dW_hh and both bias gradients on the kernels' GEMM, its strips
 * (columns of x and h_prev, and the bias's) split over the team. */
static void kernel_weight_grads(cpu_state *s, cpu_layer *ly, const cpu_weight_grads *wg)
{
    const size_t M = 4 * (size_t)wg->hidden;
    float *db = s->wgrad.col_sums;
    memset(db, 0, M * sizeof(float));
    wgrad_team w = {s, wg};
    const int strips = cpu_wgrad_strips(wg, s->kernels->strip_rows);
    lc_parallel_team(team_for(s, strips), weight_grads_member, &w);
    TRACE_OP("sum.bias_grads", {
        for (size_t j = 0; j < M; j++) {
            ly->db_ih[j] += db[j];
            ly->db_hh[j] += db[j];
        }
    });
}

/* The gradient of layer l's input sequence, dgates W_ih over every step
 * as one GEMM (dgates of every step kept: dgates_steps). */
static void input_grad(cpu_state *s, int l)
{
    const lstm_shape *sh = &s->p->shape;
    const int H = sh->hidden_size, In = lstm_layer_input_size(sh, l);
    gemm(s, "gemm.input_grad", CblasNoTrans, CblasNoTrans, sh->seq_length * sh->batch, In, 4 * H, s->dgates, 4 * H,
         s->p->w_ih[l], In, 0.0f, l == 0 ? s->dx : s->d_in, In);
}

/* Layer l's weight gradients over all steps at once (rows past a length
 * are zero). */
static void layer_weight_grads(cpu_state *s, int l)
{
    const lstm_problem *p = s->p;
    const lstm_shape *sh = &p->shape;
    const int T = sh->seq_length, B = sh->batch, H = sh->hidden_size;
    const int In = lstm_layer_input_size(sh, l);
    const size_t BH = (size_t)B * H, H4 = 4 * (size_t)H;
    cpu_layer *ly = &s->layers[l];
    const float *in = layer_input(s, l);
    const int layernorm = lstm_layernorm_of(p, l).eps > 0;
    if (layernorm)
        TRACE_OP("layernorm.grads", layer_layernorm_grads(s, l));
    int rows = T * B;
    /* what reaches W_ih x_t and W_hh h_{t-1}: the same dgates, but for LayerNorm */
    const float *dg_ih = s->dgates, *dg_hh = layernorm ? s->dgates_hh : s->dgates, *in_all = in;
    const float *hp_all = FAULT_ON(FAULT_BWD_TIME_OFFSET) ? ly->out : ly->h_prev;
    size_t tape_row = 0; /* the fused steps' gate tape (its blocks' panels) from this row */
    if (FAULT_ON(FAULT_WGRAD_LAST_STEP)) {
        rows = B;
        tape_row = (size_t)(T - 1) * B;
        if (!s->kernels) { /* (the kernels' weight gradients read the tape) */
            dg_ih += (size_t)(T - 1) * B * H4;
            dg_hh += (size_t)(T - 1) * B * H4;
        }
        in_all += (size_t)(T - 1) * B * In;
        hp_all += (size_t)(T - 1) * BH;
    }
    if (s->kernels) { /* no LayerNorm here */
        cpu_gate_tape tape = cpu_gate_tape_at(s->gate_tape, T * B, s->kernels->lanes);
        tape.at = cpu_gate_tape_row(&tape, 0, tape_row);
        const cpu_weight_grads wg = {.rows = rows, .hidden = H, .dgates = tape, .in = {in_all, hp_all},
                                     .width = {In, H}, .grad = {ly->dw_ih, ly->dw_hh}};
        kernel_weight_grads(s, ly, &wg);
        return;
    }
    gemm(s, "gemm.weight_grads", CblasTrans, CblasNoTrans, 4 * H, In, rows, dg_ih, 4 * H, in_all, In, 1.0f, ly->dw_ih,
         In);
    gemm(s, "gemm.weight_grads", CblasTrans, CblasNoTrans, 4 * H, H, rows, dg_hh, 4 * H, hp_all, H, 1.0f, ly->dw_hh,
         H);
    const uint64_t bias_start = trace_op_begin();
    for (int r = 0; !layernorm && r < rows; r++) {
        const float *row = dg_ih + (size_t)r * H4;
        for (size_t j = 0; j < H4; j++) {
            ly->db_ih[j] += row[j];
            ly->db_hh[j] += row[j];
        }
    }
    if (!layernorm)
        trace_op_end("sum.bias_grads", bias_start);
}

static int cpu_backward(void *vs, lc_error *err)
{
    (void)err;
    cpu_state *s = vs;
    const double started = EXTRA_WORK_PERCENT() > 0 ? wall_seconds() : 0;
    const lstm_problem *p = s->p;
    const lstm_shape *sh = &p->shape;
    const size_t out_elems = lstm_seq_elems(sh, sh->hidden_size);
    s->out_grad = p->dy;
    if (!p->dy) {
        TRACE_OP("zero.output_grad", memset(s->d_out, 0, out_elems * sizeof(float)));
        s->out_grad = s->d_out;
    }
    for (int l = sh->num_layers - 1; l >= 0; l--) {
        layer_backward_steps(s, l);
        layer_weight_grads(s, l);
        /* after the weight gradients' team: OpenBLAS's spinning workers are
         * parked before the next team (layer_backward_fused) */
        if (!steps_give_input_grad(s))
            input_grad(s, l);
        if (l == 0)
            break;
        /* the gradient of this layer's input is that of the layer below's
         * output, through its dropout mask; unmasked, the buffers trade
         * places (the layer below writes its input's gradient into the
         * one this layer read) */
        const float *mask = !FAULT_ON(FAULT_DROPOUT_BWD_UNMASKED) ? lstm_dropout_mask(p, l - 1) : NULL;
        if (mask)
            TRACE_OP("dropout.mask_grad", masked_copy(s->d_out, s->d_in, mask, out_elems));
        else {
            float *swap = s->d_out;
            s->d_out = s->d_in;
            s->d_in = swap;
        }
        s->out_grad = s->d_out;
    }
    s->backward_done = 1;
    extra_work(s, started);
    return LC_OK;
}

static int cpu_zero_grads(void *vs, lc_error *err)
{
    (void)err;
    cpu_state *s = vs;
    const lstm_shape *sh = &s->p->shape;
    const uint64_t op_start = trace_op_begin();
    for (int l = 0; l < sh->num_layers; l++) {
        cpu_layer *ly = &s->layers[l];
        memset(ly->dw_ih, 0, lstm_w_ih_elems(sh, l) * sizeof(float));
        memset(ly->dw_hh, 0, lstm_w_hh_elems(sh) * sizeof(float));
        if (ly->db_ih) {
            memset(ly->db_ih, 0, 4 * (size_t)sh->hidden_size * sizeof(float));
            memset(ly->db_hh, 0, 4 * (size_t)sh->hidden_size * sizeof(float));
        }
        for (size_t i = 0; ly->i_hat && i < LN_PARAMS; i++)
            memset(ly->ln_grad[ln_params[i].slot], 0, (size_t)ln_params[i].width * sh->hidden_size * sizeof(float));
    }
    trace_op_end("zero.grads", op_start);
    return LC_OK;
}

/* y into double, every step of every sequence (padding included: its
 * zeros are an output too). */
static void copy_outputs(double *y, const float *out, const lstm_shape *sh, const int *len)
{
    const size_t H = (size_t)sh->hidden_size, B = (size_t)sh->batch;
    if (!FAULT_ON(FAULT_PADDING_UNWRITTEN)) {
        lstm_copy_to_double(y, out, lstm_seq_elems(sh, sh->hidden_size));
        return;
    }
    for (size_t t = 0; t < (size_t)sh->seq_length; t++)
        for (size_t b = 0; b < B; b++)
            if ((int)t < len[b])
                lstm_copy_to_double(y + (t * B + b) * H, out + (t * B + b) * H, H);
}

static int cpu_read_results(void *vs, lstm_results *r, lc_error *err)
{
    (void)err;
    cpu_state *s = vs;
    const lstm_shape *sh = &s->p->shape;
    const int L = sh->num_layers;
    if (FAULT_ON(FAULT_ZERO_OUTPUTS)) {
        lstm_results_fill(r, 0.0);
        return LC_OK;
    }
    copy_outputs(r->y, s->layers[L - 1].out, sh, s->len);
    /* planted: y masked too, as read (the output is also h_prev's tape:
     * masked in place, dW_hh would change with it) */
    const float *below = L > 1 ? lstm_dropout_mask(s->p, L - 2) : NULL;
    if (FAULT_ON(FAULT_DROPOUT_AFTER_LAST) && below)
        for (size_t i = 0; i < lstm_seq_elems(sh, sh->hidden_size); i++)
            r->y[i] *= below[i];
    lstm_copy_to_double(r->hy, s->hy, lstm_state_elems(sh));
    lstm_copy_to_double(r->cy, s->cy, lstm_state_elems(sh));
    if (!s->backward_done)
        return LC_OK;
    lstm_copy_to_double(r->dx, s->dx, lstm_seq_elems(sh, sh->input_size));
    lstm_copy_to_double(r->dh0, s->dh0, lstm_state_elems(sh));
    lstm_copy_to_double(r->dc0, s->dc0, lstm_state_elems(sh));
    for (int l = 0; l < L; l++) {
        const cpu_layer *ly = &s->layers[l];
        lstm_copy_to_double(r->dw_ih[l], ly->dw_ih, lstm_w_ih_elems(sh, l));
        lstm_copy_to_double(r->dw_hh[l], ly->dw_hh, lstm_w_hh_elems(sh));
        if (ly->db_ih) {
            lstm_copy_to_double(r->db_ih[l], ly->db_ih, 4 * (size_t)sh->hidden_size);
            lstm_copy_to_double(r->db_hh[l], ly->db_hh, 4 * (size_t)sh->hidden_size);
        }
        for (size_t i = 0; ly->i_hat && i < LN_PARAMS; i++) {
            const int slot = ln_params[i].slot;
            lstm_copy_to_double(r->model_grads[slot][l], ly->ln_grad[slot], (size_t)ln_params[i].width * sh->hidden_size);
        }
    }
    return LC_OK;
}

static size_t cpu_peak_device_bytes(void *vs)
{
    (void)vs;
    return 0;
}

/* The cpu runner's table; its test-build variants differ in name, precision
 * and what their GEMMs see (impl). */
#define CPU_RUNNER(NAME, MODEL, PRECISION, OPERANDS, AVAILABLE, DESCRIPTION)                          \
    {                                                                                                 \
        .name = NAME, .device = LC_DEVICE_CPU, .description = DESCRIPTION, .model = MODEL,            \
        .caps = RUNNER_MULTILAYER | RUNNER_VARLEN | RUNNER_BACKWARD | RUNNER_STATE_GRADS,             \
        .precision = PRECISION, .max_layers = 0, .available = AVAILABLE, .create = cpu_create,       \
        .forward = cpu_forward, .backward = cpu_backward, .zero_grads = cpu_zero_grads,               \
        .read_results = cpu_read_results, .peak_device_bytes = cpu_peak_device_bytes,                 \
        .destroy = cpu_destroy, .impl = OPERANDS,                                                     \
    }

const runner_ops runner_cpu_ops = CPU_RUNNER("cpu", RUNNER_MODEL_OF(cpu), PRECISION_FP32, NULL, cpu_available,
    "FP32: per step one fused GEMM + cell pass, forward and backward, weight gradients one GEMM (packed weights, AVX-512/AVX2)");
const runner_ops runner_cpu_dropout_ops = CPU_RUNNER("cpu_dropout", RUNNER_MODEL_OF(cpu_dropout), PRECISION_FP32,
    NULL, cpu_available, "the cpu runner with dropout 0.4 between layers (masks drawn from the seed)");
const runner_ops runner_cpu_layernorm_ops = CPU_RUNNER("cpu_layernorm", RUNNER_MODEL_OF(cpu_layernorm), PRECISION_FP32,
    NULL, cpu_gemm_path_available, "the LayerNorm LSTM in FP32 on OpenBLAS: LN_i over all steps at once, per step a GEMM, LN_h, fused LayerNorm cell");

#ifdef LSTMCHECK_FAULTS
static const gemm_operands tf32_nearest = OPERANDS_TF32_NEAREST, tf32_truncated = OPERANDS_TF32_TRUNCATED;
static const runner_ops runner_cpu_tf32_ops = CPU_RUNNER("cpu_tf32", MODEL_LSTM, PRECISION_TF32, &tf32_nearest, cpu_gemm_path_available,
    "the cpu runner with every GEMM operand rounded to TF32 (nearest even), summed in FP32");
static const runner_ops runner_cpu_tf32_trunc_ops = CPU_RUNNER("cpu_tf32_trunc", MODEL_LSTM, PRECISION_TF32, &tf32_truncated, cpu_gemm_path_available,
    "the cpu runner with every GEMM operand truncated to TF32, summed in FP32");

const runner_ops *lstm_cpu_runner_at(lstm_model_id model, const char *arithmetic)
{
    static const struct {
        lstm_model_id model;
        const char *arithmetic;
        const runner_ops *runner;
    } at[] = {{MODEL_LSTM, "fp32", &runner_cpu_ops}, {MODEL_LSTM, "tf32", &runner_cpu_tf32_ops},
              {MODEL_LSTM, "tf32_trunc", &runner_cpu_tf32_trunc_ops}, {MODEL_DROPOUT, "fp32", &runner_cpu_dropout_ops},
              {MODEL_LAYERNORM, "fp32", &runner_cpu_layernorm_ops}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (at[i].model == model && !strcmp(at[i].arithmetic, arithmetic))
            return at[i].runner;
    return NULL;
}
#endif
