// The variable-length runners, side by side as rows of data (variants), as
// in runner_cublas.cu. Both sort the batch by length (descending, stable)
// once and upload a permuted copy of the problem into the shared
// cuBLAS-runner state (lstm_gpu_common.cuh); the sequences still running at
// step t are then the first active[t] rows. read_results un-permutes.
//   vl_jit: the way packed sequences run. Per layer and step, two GEMMs
//     (x_t W_ih^T, h W_hh^T) and one fused cell (lstm_cells.cuh) over the
//     running rows only, a prefix that shrinks as t grows; the backward
//     likewise, then the weight and input gradients as single GEMMs over all
//     T*B rows (the rows of finished sequences hold zero gate gradients).
//   vl_py: the original fastrnns vl_py, each sequence alone as a batch of 1
//     in eager PyTorch: per sequence and step, two 1-row GEMMs and the eager
//     cell; autograd's backward per step (cell, dh, dW_hh, dW_ih, dx_t and
//     each bias on its own). Launch-bound by design.
// Strict FP32. See docs/cudnn-runners.md.
#include "runners/runner.h"
#include "lstm_cells.cuh"
#include "lstm_gpu_common.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

enum vl_batching {
    BATCH_SHRINKING,    // per step one batch of the running rows (packed sequences)
    BATCH_PER_SEQUENCE, // each sequence alone, step by step, as a batch of 1
};
enum vl_cell {
    CELL_FUSED, // one kernel forward, one backward
    CELL_EAGER, // cells.py in eager PyTorch: one kernel per op
};

struct vl_variant {
    const char *name;
    vl_batching batching;
    vl_cell cell;
    unsigned caps;
    int max_layers; // 0: no limit
};

constexpr unsigned kVarlen = RUNNER_VARLEN | RUNNER_BACKWARD | RUNNER_STATE_GRADS;

// clang-format off
//                             name      batching            cell        caps                         max_layers
constexpr vl_variant kVlJit = {"vl_jit", BATCH_SHRINKING,    CELL_FUSED, kVarlen | RUNNER_MULTILAYER, 0};
constexpr vl_variant kVlPy =  {"vl_py",  BATCH_PER_SEQUENCE, CELL_EAGER, kVarlen,                     1};
// clang-format on

struct vl_state {
    const vl_variant *var;
    const lstm_problem *p; // the caller's problem, original batch order
    // The problem with the batch sorted by length and lengths = NULL: what
    // the shared state was created from (it keeps a pointer to it). Owns its
    // x, h0, c0, dy, dhy, dcy; the parameters are the caller's.
    lstm_problem sorted;
    lc_gpu_state *g;
    int *perm;   // perm[j]: original batch index of sorted row j
    int *len;    // len[j]: length of sorted row j, non-increasing in j
    int *active; // active[t]: rows 0 .. active[t]-1 run at step t (T entries)
    float *host; // read-back staging
    size_t host_elems;
};

struct len_idx {
    int len, idx;
};

// Longest first; equal lengths keep their batch order (qsort is not stable).
int by_length_desc(const void *a, const void *b)
{
    const len_idx *x = (const len_idx *)a, *y = (const len_idx *)b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

// A host copy of src (outer slices of B rows of `width` floats) whose row j
// of every slice is src's row perm[j]; NULL for NULL src, *ok = false when
// out of memory.
float *dup_permuted(const float *src, size_t outer, int B, size_t width, const int *perm,
                    bool *ok)
{
    if (!src)
        return nullptr;
    float *dst = (float *)malloc(outer * (size_t)B * width * sizeof(float) + 1);
    if (!dst) {
        *ok = false;
        return nullptr;
    }
    for (size_t o = 0; o < outer; o++)
        for (int j = 0; j < B; j++)
            memcpy(dst + (o * (size_t)B + (size_t)j) * width,
                   src + (o * (size_t)B + (size_t)perm[j]) * width, width * sizeof(float));
    return dst;
}

void vl_destroy(void *vs)
{
    vl_state *v = (vl_state *)vs;
    if (!v)
        return;
    lc_gpu_destroy(v->g); // synchronizes, frees every device buffer
    free(v->sorted.x);
    free(v->sorted.h0);
    free(v->sorted.c0);
    free(v->sorted.dy);
    free(v->sorted.dhy);
    free(v->sorted.dcy);
    free(v->perm);
    free(v->len);
    free(v->active);
    free(v->host);
    free(v);
}

// The rows that finished sequences never write again must hold finite
// zeros: vl_jit's all-rows gradient GEMMs read them (times zero gate
// gradients).
int init_device(vl_state *v, lc_error *err)
{
    lc_gpu_state *g = v->g;
    const size_t T = (size_t)g->T, B = (size_t)g->B, H = (size_t)g->H;
    const size_t BH = B * H, TBG = T * B * 4 * H;
    for (int l = 0; l < g->L; l++) {
        const lc_gpu_layer *ly = &g->layers[l];
        CUDA_CHECK(cudaMemsetAsync(ly->hs + BH, 0, T * BH * sizeof(float), g->stream)); // past h0
        CUDA_CHECK(cudaMemsetAsync(ly->cs + BH, 0, T * BH * sizeof(float), g->stream)); // past c0
        CUDA_CHECK(cudaMemsetAsync(ly->gates, 0, TBG * sizeof(float), g->stream));
    }
    CUDA_CHECK(cudaMemsetAsync(g->dgates, 0, TBG * sizeof(float), g->stream));
    if (g->d_out)
        CUDA_CHECK(cudaMemsetAsync(g->d_out, 0, T * BH * sizeof(float), g->stream));
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return LC_OK;
}

// Fills order with (length, batch index), checks that every length is in
// 1..T, and sorts it longest first; errors name the runner `name`.
int order_by_length(const lstm_problem *p, const char *name, len_idx *order, lc_error *err)
{
    const int T = p->shape.seq_length, B = p->shape.batch;
    for (int b = 0; b < B; b++) {
        order[b].len = lstm_length(p, b);
        order[b].idx = b;
        if (order[b].len < 1 || order[b].len > T) {
            lc_error_set(err, "%s: length %d of sequence %d is outside 1..%d", name,
                         order[b].len, b, T);
            return LC_ERROR;
        }
    }
    qsort(order, (size_t)B, sizeof *order, by_length_desc);
    return LC_OK;
}

// perm and len from the sorted order, and active[t]: the rows longer than t.
void take_order(vl_state *v, const len_idx *order, int T, int B)
{
    for (int j = 0; j < B; j++) {
        v->perm[j] = order[j].idx;
        v->len[j] = order[j].len;
    }
    for (int t = 0, n = B; t < T; t++) {
        while (n > 0 && v->len[n - 1] <= t)
            n--;
        v->active[t] = n;
    }
}

// The batch sorted by length, once: perm, len and active.
int sort_batch(vl_state *v, const lstm_problem *p, lc_error *err)
{
    const int T = p->shape.seq_length, B = p->shape.batch;
    len_idx *order = (len_idx *)malloc((size_t)B * sizeof *order);
    v->perm = (int *)malloc((size_t)B * sizeof(int));
    v->len = (int *)malloc((size_t)B * sizeof(int));
    v->active = (int *)malloc((size_t)T * sizeof(int));
    int rc = LC_ERROR;
    if (!order || !v->perm || !v->len || !v->active)
        lc_error_set(err, "%s: out of host memory", v->var->name);
    else
        rc = order_by_length(p, v->var->name, order, err);
    if (rc == LC_OK)
        take_order(v, order, T, B);
    free(order);
    return rc;
}

// Staging: a layer's hs / cs (T+1,B,H), dx (T,B,I), a weight gradient, a
// state (L,B,H); the largest of them.
size_t staging_elems(const lstm_shape *sh)
{
    const size_t Ts = (size_t)sh->seq_length, Ls = (size_t)sh->num_layers,
                 Hs = (size_t)sh->hidden_size, Is = (size_t)sh->input_size;
    const size_t B = (size_t)sh->batch;
    const size_t wide = Is > Hs ? Is : Hs;
    size_t n = (Ts + 1) * B * Hs;
    if (Ts * B * Is > n)
        n = Ts * B * Is;
    if (4 * Hs * wide > n)
        n = 4 * Hs * wide;
    if (Ls * B * Hs > n)
        n = Ls * B * Hs;
    return n;
}

// The permuted problem (x, h0, c0 and the seeds re-ordered along the batch,
// the caller's parameters, no lengths) and the read-back staging.
int make_sorted_problem(vl_state *v, const lstm_problem *p, lc_error *err)
{
    const lstm_shape *sh = &p->shape;
    const int B = sh->batch;
    bool ok = true;
    const size_t Ts = (size_t)sh->seq_length, Ls = (size_t)sh->num_layers,
                 Hs = (size_t)sh->hidden_size, Is = (size_t)sh->input_size;
    v->sorted.shape = *sh;
    v->sorted.lengths = nullptr;
    v->sorted.w_ih = p->w_ih;
    v->sorted.w_hh = p->w_hh;
    v->sorted.b_ih = p->b_ih;
    v->sorted.b_hh = p->b_hh;
    v->sorted.x = dup_permuted(p->x, Ts, B, Is, v->perm, &ok);
    v->sorted.h0 = dup_permuted(p->h0, Ls, B, Hs, v->perm, &ok);
    v->sorted.c0 = dup_permuted(p->c0, Ls, B, Hs, v->perm, &ok);
    v->sorted.dy = dup_permuted(p->dy, Ts, B, Hs, v->perm, &ok);
    v->sorted.dhy = dup_permuted(p->dhy, Ls, B, Hs, v->perm, &ok);
    v->sorted.dcy = dup_permuted(p->dcy, Ls, B, Hs, v->perm, &ok);
    v->host_elems = staging_elems(sh);
    v->host = (float *)malloc(v->host_elems * sizeof(float));
    if (!ok || !v->host) {
        lc_error_set(err, "%s: out of host memory", v->var->name);
        return LC_ERROR;
    }
    return LC_OK;
}

int vl_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    const vl_variant *var = static_cast<const vl_variant *>(self->impl);
    *out = nullptr;
    if (lstm_shape_validate(&p->shape, err))
        return LC_UNSUPPORTED;
    vl_state *v = (vl_state *)calloc(1, sizeof *v);
    if (!v) {
        lc_error_set(err, "%s: out of host memory", var->name);
        return LC_ERROR;
    }
    v->var = var;
    v->p = p;
    unsigned needs = LC_NEED_STEP;
    if (var->cell == CELL_EAGER)
        needs |= LC_NEED_SCRATCH; // the eager cell's intermediates
    int rc = sort_batch(v, p, err);
    if (rc == LC_OK)
        rc = make_sorted_problem(v, p, err);
    if (rc == LC_OK)
        rc = lc_gpu_create(&v->sorted, var->name, var->caps, needs, (void **)&v->g, err);
    if (rc == LC_OK)
        rc = init_device(v, err);
    if (rc != LC_OK) {
        vl_destroy(v); // frees everything allocated so far
        return rc;
    }
    *out = v;
    return LC_OK;
}

// The variant's cell forward on a's rows (the eager one uses scratch).
int cell_forward(const vl_state *v, const lc_cell_fwd *a, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    if (v->var->cell == CELL_EAGER)
        return lc_cell_forward_unfused(a, g->scratch, g->stream, err);
    return lc_cell_forward(a, g->stream, err);
}

// The variant's cell backward on a's rows.
int cell_backward(const vl_state *v, const lc_cell_bwd *a, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    if (v->var->cell == CELL_EAGER)
        return lc_cell_backward_unfused(a, g->scratch, g->stream, err);
    return lc_cell_backward(a, g->stream, err);
}

// The cell forward's arguments for step t of layer l over sorted rows
// row0 .. row0+n-1: the step's buffers from row row0 on, pre_b the
// recurrent product in step's first n rows, both biases.
lc_cell_fwd rows_cell_fwd(const lc_gpu_state *g, int l, int t, int row0, int n)
{
    const size_t H = (size_t)g->H, G = 4 * H, r0 = (size_t)row0;
    lc_cell_fwd a = lc_step_cell(g, l, t);
    a.rows = n;
    a.pre_a += r0 * G;
    a.gates += r0 * G;
    a.c_prev += r0 * H;
    a.c += r0 * H;
    a.h += r0 * H;
    a.pre_b = g->step;
    a.ld_pre_b = G;
    a.bias_a = g->layers[l].b_ih;
    a.bias_b = g->layers[l].b_hh;
    return a;
}

// Step t of layer l over sorted rows row0 .. row0+n-1: two GEMMs of n rows,
// then the cell.
int forward_rows(const vl_state *v, int l, int t, int row0, int n, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const lc_gpu_layer *ly = &g->layers[l];
    const int H = g->H, G = 4 * g->H, In = ly->in_size;
    const size_t row = (size_t)t * g->B + (size_t)row0; // row0 of step t in a (T, B, *) buffer
    // gates_t[rows] = in_t[rows] W_ih^T         (n x In)(4H x In)^T
    LC_TRY(lc_gemm(g, false, true, n, G, In, 1.0f, lc_layer_input(g, l) + row * In, In, ly->w_ih,
                   In, 0.0f, lc_gates_at(g, l, t) + (size_t)row0 * G, G, err));
    // step[0:n] = h_{t-1}[rows] W_hh^T           hs[t] holds h_{t-1}
    LC_TRY(lc_gemm(g, false, true, n, G, H, 1.0f, ly->hs + row * H, H, ly->w_hh, H, 0.0f, g->step,
                   G, err));
    const lc_cell_fwd a = rows_cell_fwd(g, l, t, row0, n);
    return cell_forward(v, &a, err);
}

// vl_jit: every step over the rows still running, a prefix of the sorted batch.
int forward_layer_shrinking(const vl_state *v, int l, lc_error *err)
{
    for (int t = 0; t < v->g->T; t++) {
        LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
        const int n = v->active[t];
        if (n == 0)
            break; // no sequence is this long (active[] only shrinks)
        LC_TRY(forward_rows(v, l, t, 0, n, err));
    }
    return LC_OK;
}

// vl_py: each sequence alone, all its steps before the next sequence (the
// original's loop order).
int forward_layer_per_sequence(const vl_state *v, int l, lc_error *err)
{
    for (int j = 0; j < v->g->B; j++) {
        for (int t = 0; t < v->len[j]; t++) {
            LC_NVTX_STEP(t);
            LC_TRY(forward_rows(v, l, t, j, 1, err));
        }
    }
    return LC_OK;
}

int vl_forward(void *vs, lc_error *err)
{
    vl_state *v = (vl_state *)vs;
    lc_gpu_state *g = v->g;
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    for (int l = 0; l < g->L; l++) {
        if (v->var->batching == BATCH_PER_SEQUENCE)
            LC_TRY(forward_layer_per_sequence(v, l, err));
        else
            LC_TRY(forward_layer_shrinking(v, l, err));
    }
    g->forward_done = 1;
    return lc_extra_work_gpu_end(err);
}

// dh, dc of every row start as the seeds of its last step: only that row's
// own steps write it (vl_jit: a row joins at its own last step t,
// active[t+1] <= row < active[t], and the later steps only wrote rows below
// their smaller count).
int seed_state_grads(lc_gpu_state *g, int l, lc_error *err)
{
    const size_t BH = (size_t)g->B * g->H;
    if (g->dhy)
        CUDA_CHECK(cudaMemcpyAsync(g->dh, g->dhy + (size_t)l * BH, BH * sizeof(float),
                                   cudaMemcpyDeviceToDevice, g->stream));
    else
        CUDA_CHECK(cudaMemsetAsync(g->dh, 0, BH * sizeof(float), g->stream));
    if (g->dcy)
        CUDA_CHECK(cudaMemcpyAsync(g->dc, g->dcy + (size_t)l * BH, BH * sizeof(float),
                                   cudaMemcpyDeviceToDevice, g->stream));
    else
        CUDA_CHECK(cudaMemsetAsync(g->dc, 0, BH * sizeof(float), g->stream));
    return LC_OK;
}

// The cell backward's arguments for step t of layer l over sorted rows
// row0 .. row0+n-1; dseq is the gradient into the layer's outputs (or NULL).
lc_cell_bwd rows_cell_bwd(const lc_gpu_state *g, int l, int t, int row0, int n, const float *dseq)
{
    const lc_gpu_layer *ly = &g->layers[l];
    const int H = g->H, G = 4 * g->H;
    const size_t BH = (size_t)g->B * H, BG = (size_t)g->B * G, Hs = (size_t)H;
    const size_t rH = (size_t)row0 * H, rG = (size_t)row0 * G; // row0 in (B, H) and (B, 4H)
    lc_cell_bwd a;
    memset(&a, 0, sizeof a);
    a.rows = n;
    a.H = H;
    a.gates = ly->gates + (size_t)t * BG + rG;
    a.ld_gates = (size_t)G;
    a.c = ly->cs + (size_t)(t + 1) * BH + rH; // c_t
    a.ld_c = Hs;
    a.c_prev = ly->cs + (size_t)t * BH + rH;  // c_{t-1}
    a.ld_c_prev = Hs;
    a.dh_a = dseq ? dseq + (size_t)t * BH + rH : nullptr;
    a.ld_dh_a = Hs;
    a.dh_b = g->dh + rH;
    a.ld_dh_b = Hs;
    a.dc = g->dc + rH;
    a.ld_dc = Hs;
    a.dgates = g->dgates + (size_t)t * BG + rG;
    a.ld_dgates = (size_t)G;
    a.dc_prev = (t == 0 ? g->dc0 + (size_t)l * BH : g->dc) + rH;
    a.ld_dc_prev = Hs;
    return a;
}

// Step t of layer l over sorted rows row0 .. row0+n-1: the cell backward,
// then dh_{t-1}[rows] = dgates_t[rows] W_hh (dh0 at step 0).
int backward_rows(const vl_state *v, int l, int t, int row0, int n, const float *dseq,
                  lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const int H = g->H, G = 4 * g->H;
    const size_t BH = (size_t)g->B * H;
    const lc_cell_bwd a = rows_cell_bwd(g, l, t, row0, n, dseq);
    LC_TRY(cell_backward(v, &a, err));
    // (n x 4H) (4H x H); the cell has consumed these rows of dh (stream order)
    float *dh_out = (t == 0 ? g->dh0 + (size_t)l * BH : g->dh) + (size_t)row0 * H;
    return lc_gemm(g, false, false, n, H, G, 1.0f, a.dgates, G, g->layers[l].w_hh, H, 0.0f, dh_out,
                   H, err);
}

// Layer l's weight, bias and input gradients, all T*B rows at once;
// finished rows have zero gate gradients and finite (zero) states, so they
// contribute nothing.
int layer_grads_all_rows(const lc_gpu_state *g, int l, lc_error *err)
{
    const lc_gpu_layer *ly = &g->layers[l];
    const int In = ly->in_size, H = g->H, G = 4 * g->H, TB = g->T * g->B;
    const float *in = lc_layer_input(g, l);
    // dW_ih (4H x In) += dgates^T (4H x TB) in (TB x In)
    LC_TRY(lc_gemm(g, true, false, G, In, TB, 1.0f, g->dgates, G, in, In, 1.0f, ly->dw_ih, In,
                   err));
    // dW_hh (4H x H) += dgates^T h_prev (TB x H); hs[0..T-1] are the h_{t-1}
    LC_TRY(lc_gemm(g, true, false, G, H, TB, 1.0f, g->dgates, G, ly->hs, H, 1.0f, ly->dw_hh, H,
                   err));
    LC_TRY(lc_bias_grad(TB, G, g->dgates, (size_t)G, g->bias_ws, ly->db_ih, ly->db_hh,
                        g->stream, err));
    // input gradient (TB x In) = dgates W_ih: dx, or the layer below's d_out
    float *d_in = l == 0 ? g->dx : g->d_out;
    LC_TRY(lc_gemm(g, false, false, TB, In, G, 1.0f, g->dgates, G, ly->w_ih, In, 0.0f, d_in, In,
                   err));
    return LC_OK;
}

// vl_py's gradients of step t of sorted row j, per step from its 1-row
// dgates as autograd forms them: dW_hh += dg^T h_{t-1} and dW_ih += dg^T x_t
// (rank-1 updates), dx_t = dg W_ih, and each bias reduced on its own.
int row_grads(const vl_state *v, int l, int t, int j, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const lc_gpu_layer *ly = &g->layers[l];
    const int H = g->H, G = 4 * g->H, In = ly->in_size;
    const size_t row = (size_t)t * g->B + (size_t)j; // row j of step t in a (T, B, *) buffer
    const float *dg = g->dgates + row * G;
    // hs[t] holds h_{t-1}
    LC_TRY(lc_gemm(g, true, false, G, H, 1, 1.0f, dg, G, ly->hs + row * H, H, 1.0f, ly->dw_hh, H,
                   err));
    LC_TRY(lc_gemm(g, true, false, G, In, 1, 1.0f, dg, G, lc_layer_input(g, l) + row * In, In,
                   1.0f, ly->dw_ih, In, err));
    float *d_in = l == 0 ? g->dx : g->d_out; // dx, or the layer below's d_out
    LC_TRY(lc_gemm(g, false, false, 1, In, G, 1.0f, dg, G, ly->w_ih, In, 0.0f, d_in + row * In, In,
                   err));
    LC_TRY(lc_bias_grad(1, G, dg, (size_t)G, g->bias_ws, ly->db_ih, nullptr, g->stream, err));
    return lc_bias_grad(1, G, dg, (size_t)G, g->bias_ws, ly->db_hh, nullptr, g->stream, err);
}

// vl_jit: steps last first over the running rows, then the weight, bias and
// input gradients once over all rows.
int backward_layer_shrinking(const vl_state *v, int l, const float *dseq, lc_error *err)
{
    for (int t = v->g->T - 1; t >= 0; t--) {
        LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
        const int n = v->active[t]; // n == B at t == 0: every length is >= 1
        if (n > 0)
            LC_TRY(backward_rows(v, l, t, 0, n, dseq, err));
    }
    return layer_grads_all_rows(v->g, l, err);
}

// vl_py: each sequence alone, its steps last first, each with its gradients.
int backward_layer_per_sequence(const vl_state *v, int l, const float *dseq, lc_error *err)
{
    for (int j = 0; j < v->g->B; j++) {
        for (int t = v->len[j] - 1; t >= 0; t--) {
            LC_NVTX_STEP(t);
            LC_TRY(backward_rows(v, l, t, j, 1, dseq, err));
            LC_TRY(row_grads(v, l, t, j, err));
        }
    }
    return LC_OK;
}

int vl_backward(void *vs, lc_error *err)
{
    vl_state *v = (vl_state *)vs;
    lc_gpu_state *g = v->g;
    const bool per_sequence = v->var->batching == BATCH_PER_SEQUENCE;
    if (!g->forward_done) {
        lc_error_set(err, "%s: backward before forward", v->var->name);
        return LC_ERROR;
    }
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    // per sequence, dx rows are written up to each sequence's end only
    if (per_sequence)
        CUDA_CHECK(cudaMemsetAsync(g->dx, 0, (size_t)g->T * g->B * g->I * sizeof(float),
                                   g->stream));
    for (int l = g->L - 1; l >= 0; l--) {
        const float *dseq = l == g->L - 1 ? g->dy : g->d_out; // gradient into the outputs
        LC_TRY(seed_state_grads(g, l, err));
        if (per_sequence)
            LC_TRY(backward_layer_per_sequence(v, l, dseq, err));
        else
            LC_TRY(backward_layer_shrinking(v, l, dseq, err));
    }
    g->backward_done = 1;
    return lc_extra_work_gpu_end(err);
}

int vl_zero_grads(void *vs, lc_error *err)
{
    return lc_gpu_zero_grads(((vl_state *)vs)->g, err);
}

// n floats from the device into the staging buffer.
int fetch_raw(vl_state *v, const float *src, size_t n, lc_error *err)
{
    return lc_fetch_staged(v->g->stream, v->var->name, v->host, v->host_elems, src, n, err);
}

// (outer, B, width) staged in sorted order -> dst in the original order.
void unpermute_to_double(const vl_state *v, double *dst, size_t outer, size_t width)
{
    const size_t B = (size_t)v->g->B;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < B; j++)
            lstm_copy_to_double(dst + (o * B + (size_t)v->perm[j]) * width,
                                v->host + (o * B + j) * width, width);
}

// Staged hs or cs (T+1,B,H) of a layer -> dst (B,H) in the original order:
// row j's last state is hs[len_j].
void unpermute_last_state(const vl_state *v, double *dst)
{
    const size_t B = (size_t)v->g->B, H = (size_t)v->g->H;
    for (size_t j = 0; j < B; j++)
        lstm_copy_to_double(dst + (size_t)v->perm[j] * H,
                            v->host + ((size_t)v->len[j] * B + j) * H, H);
}

// Staged hs (T+1,B,H) of the last layer -> y (T,B,H) in the original order:
// y_t is hs[t+1], and 0 past each sequence's end.
void unpermute_y(const vl_state *v, double *y)
{
    const size_t T = (size_t)v->g->T, B = (size_t)v->g->B, H = (size_t)v->g->H;
    for (size_t t = 0; t < T; t++) {
        for (size_t j = 0; j < B; j++) {
            double *dst = y + (t * B + (size_t)v->perm[j]) * H;
            if (t < (size_t)v->len[j])
                lstm_copy_to_double(dst, v->host + ((t + 1) * B + j) * H, H);
            else
                memset(dst, 0, H * sizeof(double)); // past the sequence's end
        }
    }
}

// Layer l's hy and cy, and y for the last layer.
int read_layer_outputs(vl_state *v, lstm_results *r, size_t l, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const size_t T = (size_t)g->T, BH = (size_t)g->B * g->H;
    const lc_gpu_layer *ly = &g->layers[l];
    LC_TRY(fetch_raw(v, ly->hs, (T + 1) * BH, err));
    unpermute_last_state(v, r->hy + l * BH);
    if (l == (size_t)g->L - 1)
        unpermute_y(v, r->y);
    LC_TRY(fetch_raw(v, ly->cs, (T + 1) * BH, err));
    unpermute_last_state(v, r->cy + l * BH);
    return LC_OK;
}

// dx, dh0 and dc0 in the original order; dx's padded rows are zero (zero
// gate gradients), as the semantics want.
int read_input_grads(vl_state *v, lstm_results *r, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const size_t T = (size_t)g->T, B = (size_t)g->B, I = (size_t)g->I, H = (size_t)g->H,
                 L = (size_t)g->L;
    const size_t BH = B * H;
    LC_TRY(fetch_raw(v, g->dx, T * B * I, err));
    unpermute_to_double(v, r->dx, T, I);
    LC_TRY(fetch_raw(v, g->dh0, L * BH, err));
    unpermute_to_double(v, r->dh0, L, H);
    LC_TRY(fetch_raw(v, g->dc0, L * BH, err));
    unpermute_to_double(v, r->dc0, L, H);
    return LC_OK;
}

// n floats from the device into dst, through the staging buffer.
int fetch_to_double(vl_state *v, double *dst, const float *src, size_t n, lc_error *err)
{
    LC_TRY(fetch_raw(v, src, n, err));
    lstm_copy_to_double(dst, v->host, n);
    return LC_OK;
}

// The parameter gradients: they do not depend on the batch order.
int read_param_grads(vl_state *v, lstm_results *r, lc_error *err)
{
    const lc_gpu_state *g = v->g;
    const size_t H = (size_t)g->H, G = 4 * H;
    for (size_t l = 0; l < (size_t)g->L; l++) {
        const lc_gpu_layer *ly = &g->layers[l];
        const size_t In = (size_t)ly->in_size;
        LC_TRY(fetch_to_double(v, r->dw_ih[l], ly->dw_ih, G * In, err));
        LC_TRY(fetch_to_double(v, r->dw_hh[l], ly->dw_hh, G * H, err));
        LC_TRY(fetch_to_double(v, r->db_ih[l], ly->db_ih, G, err));
        LC_TRY(fetch_to_double(v, r->db_hh[l], ly->db_hh, G, err));
    }
    return LC_OK;
}

int vl_read_results(void *vs, lstm_results *r, lc_error *err)
{
    vl_state *v = (vl_state *)vs;
    lc_gpu_state *g = v->g;
    CUDA_CHECK(cudaStreamSynchronize(g->stream));
    if (g->forward_done) {
        for (size_t l = 0; l < (size_t)g->L; l++)
            LC_TRY(read_layer_outputs(v, r, l, err));
    }
    if (!g->backward_done)
        return LC_OK;
    LC_TRY(read_input_grads(v, r, err));
    return read_param_grads(v, r, err);
}

size_t vl_peak_device_bytes(void *vs)
{
    const vl_state *v = (const vl_state *)vs;
    return v ? lc_gpu_peak_device_bytes(v->g) : 0;
}

// The roster's name of a runner is its variant's (checked at compile time).
constexpr bool same_name(const char *a, const char *b)
{
    return *a == *b && (*a == '\0' || same_name(a + 1, b + 1));
}

} // namespace

// One runner_ops table per variant; impl is the variant.
#define LC_VL_RUNNER(runner, variant, text)                                                       \
    static_assert(same_name(variant.name, #runner), #runner ": the variant's name differs");     \
    extern "C" const runner_ops runner_##runner##_ops = {                                         \
        .name = variant.name, .device = LC_DEVICE_CUDA, .description = text,                      \
        .caps = variant.caps, .precision = PRECISION_FP32, .max_layers = variant.max_layers,      \
        .available = lc_cuda_available, .create = vl_create, .forward = vl_forward,               \
        .backward = vl_backward, .zero_grads = vl_zero_grads, .read_results = vl_read_results,    \
        .peak_device_bytes = vl_peak_device_bytes, .destroy = vl_destroy, .impl = &variant,       \
        .model = RUNNER_MODEL_OF(runner),                                                         \
    }

LC_VL_RUNNER(vl_jit, kVlJit,
             "FP32 cuBLAS, variable length: batch sorted by length once, per step 2 GEMMs "
             "+ 1 fused cell over the still-running rows only");
LC_VL_RUNNER(vl_py, kVlPy,
             "FP32 cuBLAS, variable length as the original: each sequence alone as a batch of 1, "
             "per step 2 GEMMs + 12 elementwise kernels, gradients per step as autograd; "
             "launch-bound, not in the perf matrix");
