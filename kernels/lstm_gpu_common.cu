// Shared instance state and orchestration of the cuBLAS GPU runners
// (see lstm_gpu_common.cuh).
#include "lstm_gpu_common.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

// Allocate n floats on the device, counted in the instance's pool and
// remembered for lc_gpu_destroy.
int lc_gpu_alloc(lc_gpu_state *s, float **ptr, size_t n, lc_error *err)
{
    *ptr = nullptr;
    if (s->nallocs == s->cap_allocs) {
        const int nc = s->cap_allocs ? 2 * s->cap_allocs : 32;
        lc_gpu_alloc_rec *a = (lc_gpu_alloc_rec *)realloc(s->allocs, (size_t)nc * sizeof *a);
        if (!a) {
            lc_error_set(err, "%s: out of host memory", s->name);
            return LC_ERROR;
        }
        s->allocs = a;
        s->cap_allocs = nc;
    }
    void *p = nullptr;
    const size_t bytes = n * sizeof(float);
    if (lc_device_alloc(&s->pool, &p, bytes, err) != LC_OK) {
        lc_error why = *err;
        lc_error_set(err, "%s: %s", s->name, why.msg);
        return LC_ERROR;
    }
    s->allocs[s->nallocs].ptr = p;
    s->allocs[s->nallocs].bytes = bytes;
    s->nallocs++;
    *ptr = (float *)p;
    return LC_OK;
}

namespace {

int upload(lc_gpu_state *s, float *dst, const float *src, size_t n, lc_error *err)
{
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, s->stream));
    return LC_OK;
}

// Device -> double host tensor, through the float staging buffer.
int fetch(lc_gpu_state *s, double *dst, const float *src, size_t n, lc_error *err)
{
    if (!dst || !src || n == 0)
        return LC_OK;
    LC_TRY(lc_fetch_staged(s->stream, s->name, s->host, s->host_elems, src, n, err));
    lstm_copy_to_double(dst, s->host, n);
    return LC_OK;
}

// The ABI slot (LSTMCHECK_DROPOUT_MASK, LSTMCHECK_LN_*) a model tensor sits
// in, or -1 for one of nn.LSTM's own parameters.
int model_slot(const model_tensor *t)
{
    for (int slot = 0; slot < LSTMCHECK_MODEL_SLOTS; slot++)
        if (t->input_at == offsetof(lstm_problem, model_inputs) + (size_t)slot * sizeof(float **))
            return slot;
    return -1;
}

// Layer l's tensors of the model's own (model/model.h), uploaded, with
// gradients for its parameters; under dropout, room for the masked output.
int layer_model_tensors(lc_gpu_state *s, const lstm_problem *p, int l, lc_error *err)
{
    const lstm_model *m = lstm_model_get(p->model);
    lc_gpu_layer *ly = &s->layers[l];
    for (int i = 0; m && i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        const int slot = model_slot(t);
        if (slot < 0 || l >= model_tensor_layers(t, &p->shape))
            continue;
        const size_t n = model_tensor_elems(t, &p->shape, l);
        LC_TRY(lc_gpu_alloc(s, &ly->slot[slot], n, err));
        LC_TRY(upload(s, ly->slot[slot], model_tensor_inputs(t, p)[l], n, err));
        ly->slot_elems[slot] = n;
        if (t->has_grad)
            LC_TRY(lc_gpu_alloc(s, &ly->dslot[slot], n, err));
    }
    if (ly->slot[LSTMCHECK_DROPOUT_MASK])
        LC_TRY(lc_gpu_alloc(s, &ly->dropped, (size_t)s->T * s->B * s->H, err));
    return LC_OK;
}

size_t max3(size_t a, size_t b, size_t c)
{
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

// The stream, the cuBLAS handle, the layer table and the host staging buffer.
int host_setup(lc_gpu_state *s, lc_error *err)
{
    const size_t T = (size_t)s->T, B = (size_t)s->B, I = (size_t)s->I, H = (size_t)s->H,
                 L = (size_t)s->L;
    const size_t BH = B * H, G = 4 * H;
    s->stream = lc_cuda_stream();
    if (!s->stream) {
        lc_error_set(err, "%s: cannot create the CUDA stream", s->name);
        return LC_ERROR;
    }
    s->blas = lc_cublas_handle(err);
    if (!s->blas)
        return LC_ERROR;
    s->layers = (lc_gpu_layer *)calloc(L, sizeof *s->layers);
    s->host_elems = max3(T * B * (I > H ? I : H), G * (I > H ? I : H), L * BH);
    s->host = (float *)malloc(s->host_elems * sizeof(float));
    if (!s->layers || !s->host) {
        lc_error_set(err, "%s: out of host memory", s->name);
        return LC_ERROR;
    }
    return LC_OK;
}

// Layer l's parameters, gradients, gates and states; uploads its
// parameters (the model's own too) and hs[0] = h0[l], cs[0] = c0[l].
int layer_create(lc_gpu_state *s, const lstm_problem *p, int l, lc_error *err)
{
    const size_t T = (size_t)s->T, B = (size_t)s->B, H = (size_t)s->H;
    const size_t BH = B * H, G = 4 * H;
    lc_gpu_layer *ly = &s->layers[l];
    ly->in_size = lstm_layer_input_size(&p->shape, l);
    const size_t In = (size_t)ly->in_size;
    LC_TRY(lc_gpu_alloc(s, &ly->w_ih, G * In, err));
    LC_TRY(lc_gpu_alloc(s, &ly->w_hh, G * H, err));
    LC_TRY(lc_gpu_alloc(s, &ly->dw_ih, G * In, err));
    LC_TRY(lc_gpu_alloc(s, &ly->dw_hh, G * H, err));
    if (p->b_ih && p->b_hh) { // not under LayerNorm
        LC_TRY(lc_gpu_alloc(s, &ly->b_ih, G, err));
        LC_TRY(lc_gpu_alloc(s, &ly->b_hh, G, err));
        LC_TRY(lc_gpu_alloc(s, &ly->db_ih, G, err));
        LC_TRY(lc_gpu_alloc(s, &ly->db_hh, G, err));
        LC_TRY(upload(s, ly->b_ih, p->b_ih[l], G, err));
        LC_TRY(upload(s, ly->b_hh, p->b_hh[l], G, err));
    }
    LC_TRY(lc_gpu_alloc(s, &ly->gates, T * B * G, err));
    LC_TRY(lc_gpu_alloc(s, &ly->hs, (T + 1) * BH, err));
    LC_TRY(lc_gpu_alloc(s, &ly->cs, (T + 1) * BH, err));
    LC_TRY(upload(s, ly->w_ih, p->w_ih[l], G * In, err));
    LC_TRY(upload(s, ly->w_hh, p->w_hh[l], G * H, err));
    LC_TRY(upload(s, ly->hs, p->h0 + (size_t)l * BH, BH, err)); // hs[0] = h0[l]
    LC_TRY(upload(s, ly->cs, p->c0 + (size_t)l * BH, BH, err)); // cs[0] = c0[l]
    return layer_model_tensors(s, p, l, err);
}

// x and the backward seeds the runner takes (a state-only runner has no y,
// so no dy), allocated and uploaded.
int inputs_create(lc_gpu_state *s, const lstm_problem *p, lc_error *err)
{
    const size_t T = (size_t)s->T, B = (size_t)s->B, I = (size_t)s->I, H = (size_t)s->H,
                 L = (size_t)s->L;
    const size_t BH = B * H;
    const bool state_only = (s->caps & RUNNER_STATE_ONLY) != 0;
    LC_TRY(lc_gpu_alloc(s, &s->x, T * B * I, err));
    LC_TRY(upload(s, s->x, p->x, T * B * I, err));
    if (p->dy && !state_only) {
        LC_TRY(lc_gpu_alloc(s, &s->dy, T * BH, err));
        LC_TRY(upload(s, s->dy, p->dy, T * BH, err));
    }
    if (p->dhy) {
        LC_TRY(lc_gpu_alloc(s, &s->dhy, L * BH, err));
        LC_TRY(upload(s, s->dhy, p->dhy, L * BH, err));
    }
    if (p->dcy) {
        LC_TRY(lc_gpu_alloc(s, &s->dcy, L * BH, err));
        LC_TRY(upload(s, s->dcy, p->dcy, L * BH, err));
    }
    return LC_OK;
}

// The input gradients and the backward's scratch (step and scratch as
// `needs` asks).
int grad_buffers_create(lc_gpu_state *s, unsigned needs, lc_error *err)
{
    const size_t T = (size_t)s->T, B = (size_t)s->B, I = (size_t)s->I, H = (size_t)s->H,
                 L = (size_t)s->L;
    const size_t BH = B * H, G = 4 * H;
    LC_TRY(lc_gpu_alloc(s, &s->dx, T * B * I, err));
    LC_TRY(lc_gpu_alloc(s, &s->dh0, L * BH, err));
    LC_TRY(lc_gpu_alloc(s, &s->dc0, L * BH, err));
    LC_TRY(lc_gpu_alloc(s, &s->dgates, T * B * G, err));
    if (s->L > 1)
        LC_TRY(lc_gpu_alloc(s, &s->d_out, T * BH, err));
    LC_TRY(lc_gpu_alloc(s, &s->dh, BH, err));
    LC_TRY(lc_gpu_alloc(s, &s->dc, BH, err));
    if (needs & LC_NEED_STEP)
        LC_TRY(lc_gpu_alloc(s, &s->step, B * G, err));
    if (needs & LC_NEED_SCRATCH)
        LC_TRY(lc_gpu_alloc(s, &s->scratch, (size_t)LC_UNFUSED_SCRATCH_ROWS * BH, err));
    LC_TRY(lc_gpu_alloc(s, &s->bias_ws, (size_t)LC_BIAS_GRAD_CHUNKS * G, err));
    return LC_OK;
}

int gpu_create(lc_gpu_state *s, const lstm_problem *p, unsigned needs, lc_error *err)
{
    LC_TRY(host_setup(s, err));
    for (int l = 0; l < s->L; l++)
        LC_TRY(layer_create(s, p, l, err));
    LC_TRY(inputs_create(s, p, err));
    LC_TRY(grad_buffers_create(s, needs, err));
    LC_TRY(lc_gpu_zero_grads(s, err));
    // the uploads read pageable host memory of the problem: finish them here
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    return LC_OK;
}

} // namespace

int lc_fetch_staged(cudaStream_t stream, const char *name, float *host, size_t host_elems,
                    const float *src, size_t n, lc_error *err)
{
    if (n > host_elems) {
        lc_error_set(err, "%s: read-back of %zu elements exceeds the staging buffer", name, n);
        return LC_ERROR;
    }
    CUDA_CHECK(cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return LC_OK;
}

int lc_gemm(const lc_gpu_state *s, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc,
            lc_error *err)
{
    if (M <= 0 || N <= 0)
        return LC_OK;
    // row-major C (M x N) = op(A) op(B)  <=>  column-major C^T (N x M) = op(B)^T op(A)^T:
    // the same flags, B first, N and M swapped (proof in the header).
    CUBLAS_CHECK(cublasSgemm(s->blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
                             &beta, C, ldc));
    return LC_OK;
}

int lc_gpu_create(const lstm_problem *p, const char *name, unsigned caps, unsigned needs,
                  void **out, lc_error *err)
{
    *out = nullptr;
    const int ready = lc_cuda_enter(err); // a broken setup is an error here too
    if (ready != LC_OK)
        return ready;
    const lstm_shape *sh = &p->shape;
    if (lstm_shape_validate(sh, err))
        return LC_UNSUPPORTED;
    if (sh->num_layers > 1 && !(caps & RUNNER_MULTILAYER)) {
        lc_error_set(err, "%s runs one layer only (numLayers=%d)", name, sh->num_layers);
        return LC_UNSUPPORTED;
    }
    for (int b = 0; p->lengths && b < sh->batch; b++) {
        if (p->lengths[b] != sh->seq_length) {
            lc_error_set(err, "%s does not take variable-length batches", name);
            return LC_UNSUPPORTED;
        }
    }
    // cuBLAS takes int sizes and strides: T*B rows and every dimension must fit
    const long long TB = (long long)sh->seq_length * sh->batch;
    if (TB > INT_MAX || 4LL * sh->hidden_size > INT_MAX) {
        lc_error_set(err, "%s: T*B=%lld or 4H is too large for int GEMM sizes", name, TB);
        return LC_UNSUPPORTED;
    }
    lc_gpu_state *s = (lc_gpu_state *)calloc(1, sizeof *s);
    if (!s) {
        lc_error_set(err, "%s: out of host memory", name);
        return LC_ERROR;
    }
    s->p = p;
    s->name = name;
    s->caps = caps;
    s->T = sh->seq_length;
    s->B = sh->batch;
    s->I = sh->input_size;
    s->H = sh->hidden_size;
    s->L = sh->num_layers;
    if (gpu_create(s, p, needs, err) != LC_OK) {
        lc_gpu_destroy(s);
        return LC_ERROR;
    }
    *out = s;
    return LC_OK;
}

int lc_gpu_check_model(const runner_ops *self, const lstm_problem *p, lc_error *err)
{
    if (p->model == self->model)
        return LC_OK;
    lc_error_set(err, "%s computes the %s model, and was given a problem of the %s model", self->name,
                 lstm_model_name(self->model), lstm_model_name(p->model));
    return LC_ERROR;
}

void lc_gpu_destroy(void *state)
{
    lc_gpu_state *s = (lc_gpu_state *)state;
    if (!s)
        return;
    if (s->stream && s->nallocs)
        cudaStreamSynchronize(s->stream); // nothing in flight may still use the buffers
    for (int i = s->nallocs - 1; i >= 0; i--)
        lc_device_free(&s->pool, s->allocs[i].ptr, s->allocs[i].bytes);
    cudaGetLastError(); // leave no sticky error of a failed run to the next runner
    free(s->allocs);
    free(s->layers);
    free(s->host);
    free(s);
}

int lc_gpu_zero_grads(void *state, lc_error *err)
{
    lc_gpu_state *s = (lc_gpu_state *)state;
    const size_t G = 4 * (size_t)s->H;
    for (int l = 0; l < s->L; l++) {
        lc_gpu_layer *ly = &s->layers[l];
        CUDA_CHECK(cudaMemsetAsync(ly->dw_ih, 0, G * (size_t)ly->in_size * sizeof(float), s->stream));
        CUDA_CHECK(cudaMemsetAsync(ly->dw_hh, 0, G * (size_t)s->H * sizeof(float), s->stream));
        if (ly->db_ih) {
            CUDA_CHECK(cudaMemsetAsync(ly->db_ih, 0, G * sizeof(float), s->stream));
            CUDA_CHECK(cudaMemsetAsync(ly->db_hh, 0, G * sizeof(float), s->stream));
        }
        for (int slot = 0; slot < LSTMCHECK_MODEL_SLOTS; slot++)
            if (ly->dslot[slot])
                CUDA_CHECK(cudaMemsetAsync(ly->dslot[slot], 0, ly->slot_elems[slot] * sizeof(float),
                                           s->stream));
    }
    return LC_OK;
}

int lc_gpu_read_results(void *state, lstm_results *r, lc_error *err)
{
    lc_gpu_state *s = (lc_gpu_state *)state;
    const size_t T = (size_t)s->T, B = (size_t)s->B, I = (size_t)s->I, H = (size_t)s->H;
    const size_t BH = B * H, G = 4 * H;
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    if (s->forward_done) {
        if (!(s->caps & RUNNER_STATE_ONLY))
            LC_TRY(fetch(s, r->y, s->layers[s->L - 1].hs + BH, T * BH, err));
        for (int l = 0; l < s->L; l++) {
            const lc_gpu_layer *ly = &s->layers[l];
            LC_TRY(fetch(s, r->hy + (size_t)l * BH, ly->hs + T * BH, BH, err)); // hs[T]
            LC_TRY(fetch(s, r->cy + (size_t)l * BH, ly->cs + T * BH, BH, err)); // cs[T]
        }
    }
    if (!s->backward_done)
        return LC_OK;
    LC_TRY(fetch(s, r->dx, s->dx, T * B * I, err));
    LC_TRY(fetch(s, r->dh0, s->dh0, (size_t)s->L * BH, err));
    LC_TRY(fetch(s, r->dc0, s->dc0, (size_t)s->L * BH, err));
    for (int l = 0; l < s->L; l++) {
        const lc_gpu_layer *ly = &s->layers[l];
        LC_TRY(fetch(s, r->dw_ih[l], ly->dw_ih, G * (size_t)ly->in_size, err));
        LC_TRY(fetch(s, r->dw_hh[l], ly->dw_hh, G * H, err));
        if (r->db_ih && r->db_hh) {
            LC_TRY(fetch(s, r->db_ih[l], ly->db_ih, G, err));
            LC_TRY(fetch(s, r->db_hh[l], ly->db_hh, G, err));
        }
        for (int slot = 0; slot < LSTMCHECK_MODEL_SLOTS; slot++) {
            if (!r->model_grads[slot] || !r->model_grads[slot][l])
                continue;
            if (!ly->dslot[slot]) { // the results' model is not the problem's
                lc_error_set(err, "%s: the results ask for the gradient in model slot %d, which layer %d lacks",
                             s->name, slot, l);
                return LC_ERROR;
            }
            LC_TRY(fetch(s, r->model_grads[slot][l], ly->dslot[slot], ly->slot_elems[slot], err));
        }
    }
    return LC_OK;
}

size_t lc_gpu_peak_device_bytes(void *state)
{
    const lc_gpu_state *s = (const lc_gpu_state *)state;
    return s ? s->pool.peak : 0;
}

const float *lc_layer_input(const lc_gpu_state *s, int l)
{
    if (l == 0)
        return s->x;
    const lc_gpu_layer *below = &s->layers[l - 1];
    return below->dropped ? below->dropped : below->hs + (size_t)s->B * s->H;
}

int lc_gpu_drop_output(const lc_gpu_state *s, int l, lc_error *err)
{
    const lc_gpu_layer *ly = &s->layers[l];
    if (!ly->dropped)
        return LC_OK;
    const int TB = s->T * s->B; // hs + B*H: the layer's output, (T, B, H)
    return lc_ew_binary(LC_EW_MUL, TB, s->H, ly->hs + (size_t)s->B * s->H, (size_t)s->H,
                        ly->slot[LSTMCHECK_DROPOUT_MASK], (size_t)s->H, ly->dropped, (size_t)s->H,
                        s->stream, err);
}

int lc_gpu_drop_gradient(const lc_gpu_state *s, int l, lc_error *err)
{
    const lc_gpu_layer *ly = &s->layers[l];
    if (!ly->dropped)
        return LC_OK;
    return lc_ew_binary(LC_EW_MUL, s->T * s->B, s->H, s->d_out, (size_t)s->H,
                        ly->slot[LSTMCHECK_DROPOUT_MASK], (size_t)s->H, s->d_out, (size_t)s->H,
                        s->stream, err);
}

float *lc_gates_at(const lc_gpu_state *s, int l, int t)
{
    return s->layers[l].gates + (size_t)t * s->B * 4 * s->H;
}

lc_cell_fwd lc_step_cell(const lc_gpu_state *s, int l, int t)
{
    const lc_gpu_layer *ly = &s->layers[l];
    const size_t BH = (size_t)s->B * s->H, H = (size_t)s->H;
    lc_cell_fwd a;
    memset(&a, 0, sizeof a);
    a.rows = s->B;
    a.H = s->H;
    a.pre_a = lc_gates_at(s, l, t);
    a.ld_pre_a = 4 * H;
    a.c_prev = ly->cs + (size_t)t * BH;
    a.ld_c_prev = H;
    a.gates = lc_gates_at(s, l, t);
    a.ld_gates = 4 * H;
    a.c = ly->cs + (size_t)(t + 1) * BH;
    a.ld_c = H;
    a.h = ly->hs + (size_t)(t + 1) * BH;
    a.ld_h = H;
    return a;
}

int lc_gemm_input_step(const lc_gpu_state *s, int l, int t, float *C, float beta, lc_error *err)
{
    const lc_gpu_layer *ly = &s->layers[l];
    const int In = ly->in_size;
    const float *in_t = lc_layer_input(s, l) + (size_t)t * s->B * In;
    // (B x In) (4H x In)^T -> (B x 4H)
    return lc_gemm(s, false, true, s->B, 4 * s->H, In, 1.0f, in_t, In, ly->w_ih, In, beta, C,
                   4 * s->H, err);
}

int lc_gemm_recurrent_step(const lc_gpu_state *s, int l, int t, float *C, float beta,
                           lc_error *err)
{
    const lc_gpu_layer *ly = &s->layers[l];
    const float *h_prev = ly->hs + (size_t)t * s->B * s->H; // hs[t] = h_{t-1}
    // (B x H) (4H x H)^T -> (B x 4H)
    return lc_gemm(s, false, true, s->B, 4 * s->H, s->H, 1.0f, h_prev, s->H, ly->w_hh, s->H, beta,
                   C, 4 * s->H, err);
}

int lc_gemm_input_all(const lc_gpu_state *s, int l, float beta, lc_error *err)
{
    const lc_gpu_layer *ly = &s->layers[l];
    const int In = ly->in_size;
    // (T*B x In) (4H x In)^T -> (T*B x 4H)
    return lc_gemm(s, false, true, s->T * s->B, 4 * s->H, In, 1.0f, lc_layer_input(s, l), In,
                   ly->w_ih, In, beta, ly->gates, 4 * s->H, err);
}
