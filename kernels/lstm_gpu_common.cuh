// Shared instance state and orchestration pieces of the cuBLAS GPU runners
// (runner_cublas.cu: aten, py, jit, jit_premul, jit_premul_bias, jit_simple,
// jit_multilayer, jit_wgrad_all, jit_dropout), of the variable-length vl_jit
// and vl_py (runner_vl_jit.cu) and of the LayerNorm runners
// (runner_layernorm.cu).
//
// Device layout per layer l (all row-major, FP32):
//   gates (T, B, 4H): the step's pre-activations, overwritten in place by
//                     the activated i, f, g, o that the backward needs
//   hs    (T+1, B, H): hs[0] = h0[l], hs[t+1] = h_t. So hs + B*H is the
//                     layer's output sequence (y for the last layer, the
//                     next layer's input), hs[0..T-1] are the h_{t-1} that
//                     dW_hh needs, and hs[T] is hy[l]. Same for cs and c.
// Everything runs on lc_cuda_stream(); GEMMs on lc_cublas_handle() (strict
// FP32; the math mode is lc_cublas_math's). Every allocation goes through the instance's
// lc_device_pool and is freed by lc_gpu_destroy, also after a failed create.
#ifndef LSTMCHECK_LSTM_GPU_COMMON_CUH
#define LSTMCHECK_LSTM_GPU_COMMON_CUH

#include "cuda_util.h"
#include "lstm_cells.cuh"
#include "nvtx_steps.h"

struct lc_gpu_layer {
    int in_size;                          // I for layer 0, H above
    float *w_ih, *w_hh, *b_ih, *b_hh;     // parameters (no biases under LayerNorm: NULL)
    float *dw_ih, *dw_hh, *db_ih, *db_hh; // gradients, accumulated until zero_grads
    // The model's own tensors of this layer, in the ABI's slots (NULL where
    // it has none): a dropout mask, the LayerNorms' weights and biases; the
    // gradients of those that are parameters in dslot.
    float *slot[LSTMCHECK_MODEL_SLOTS], *dslot[LSTMCHECK_MODEL_SLOTS];
    size_t slot_elems[LSTMCHECK_MODEL_SLOTS];
    float *dropped;                       // (T, B, H): hs[1..T] times the mask, the next layer's input; NULL without a mask
    float *gates;                         // (T, B, 4H)
    float *hs, *cs;                       // (T+1, B, H)
};

struct lc_gpu_alloc_rec {
    void *ptr;
    size_t bytes;
};

// What a runner needs besides the common buffers.
enum {
    LC_NEED_STEP = 1u << 0,    // step: one (B, 4H) buffer for a per-step GEMM output
    LC_NEED_SCRATCH = 1u << 1, // scratch of the unfused cells (3 x B x H)
};

struct lc_gpu_state {
    const lstm_problem *p;
    const char *name;
    unsigned caps;
    int T, B, I, H, L;
    cudaStream_t stream;
    cublasHandle_t blas;
    lc_device_pool pool;
    lc_gpu_alloc_rec *allocs;
    int nallocs, cap_allocs;
    lc_gpu_layer *layers;   // L entries
    float *x;               // (T, B, I)
    float *dy;              // (T, B, H) or NULL (no dy seed, or a state-only runner)
    float *dhy, *dcy;       // (L, B, H) or NULL
    float *dx;              // (T, B, I)
    float *dh0, *dc0;       // (L, B, H)
    float *dgates;          // (T, B, 4H) gradient of the pre-activations, one layer at a time
    float *d_out;           // (T, B, H) gradient into a lower layer's outputs; L > 1 only
    float *dh, *dc;         // (B, H) running state gradients
    float *step;            // (B, 4H) when LC_NEED_STEP
    float *scratch;         // (3, B, H) when LC_NEED_SCRATCH
    float *bias_ws;         // LC_BIAS_GRAD_CHUNKS x 4H
    float *host;            // host staging for read-back
    size_t host_elems;
    int forward_done, backward_done;
};

// Row-major GEMM on cuBLAS (column-major):  C = alpha * op(A) op(B) + beta * C
// with op(A) M x K, op(B) K x N, C M x N, all row-major, lda/ldb/ldc the row
// strides. Proof of the mapping: a row-major X (r x c, stride ld) is, read
// column-major, the matrix X^T (c x r, leading dimension ld). So row-major C
// is column-major C^T = (op(A) op(B))^T = op(B)^T op(A)^T. Column-major B's
// memory is B^T, so op(B)^T is "B's memory, transposed iff transB": cuBLAS
// computes C^T (N x M, ldc) = opB(Bmem) (N x K, ldb) * opA(Amem) (K x M, lda)
// with the SAME transpose flags, operands swapped and M, N swapped.
int lc_gemm(const lc_gpu_state *s, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc,
            lc_error *err);

// n floats of device memory counted in the instance's pool and freed by
// lc_gpu_destroy (a runner's own buffers beside the common ones).
int lc_gpu_alloc(lc_gpu_state *s, float **ptr, size_t n, lc_error *err);

// n floats from src on the device into host (staging of host_elems floats),
// on stream, and waits for them; more than fits is an error naming `name`.
int lc_fetch_staged(cudaStream_t stream, const char *name, float *host, size_t host_elems,
                    const float *src, size_t n, lc_error *err);

// Create: checks the problem (no per-sequence lengths; L > 1 only with
// RUNNER_MULTILAYER in caps), allocates, uploads parameters (the model's
// own too: lc_gpu_layer's slots), x, h0, c0 and the backward seeds (dy, dhy, dcy; a RUNNER_STATE_ONLY runner has no y, so
// it takes dhy and dcy only), zeroes the gradients, and waits for the
// uploads. On failure everything is freed and *out stays NULL.
int lc_gpu_create(const lstm_problem *p, const char *name, unsigned caps, unsigned needs,
                  void **out, lc_error *err);
// LC_OK when p is a problem of the model self computes; else LC_ERROR
// naming both (a runner given another model's problem would compute the
// wrong thing, or read tensors it was not given).
int lc_gpu_check_model(const runner_ops *self, const lstm_problem *p, lc_error *err);
void lc_gpu_destroy(void *state);
int lc_gpu_zero_grads(void *state, lc_error *err);
int lc_gpu_read_results(void *state, lstm_results *r, lc_error *err);
size_t lc_gpu_peak_device_bytes(void *state);

// The input sequence of layer l: x, or layer l-1's output hs + B*H (its
// dropped copy under dropout).
const float *lc_layer_input(const lc_gpu_state *s, int l);
// Pointers into a layer's (T, B, w) buffers at step t.
float *lc_gates_at(const lc_gpu_state *s, int l, int t); // (B, 4H) of step t
// The fused/unfused cell arguments of step t of layer l: pre_a = gates[t]
// (overwritten with the activations), c_prev = cs[t], c = cs[t+1],
// h = hs[t+1]; the caller sets pre_b and the biases.
lc_cell_fwd lc_step_cell(const lc_gpu_state *s, int l, int t);

// Dropout between layers (no-ops for a layer without a mask): after layer
// l's forward, its output times its mask into `dropped`; after layer l+1's
// backward has left the gradient of its input in d_out, d_out times layer
// l's mask, so that layer l's steps read the gradient of their output.
int lc_gpu_drop_output(const lc_gpu_state *s, int l, lc_error *err);
int lc_gpu_drop_gradient(const lc_gpu_state *s, int l, lc_error *err);

// Per-step GEMMs, rows = B:  C (B x 4H) = in_t W_ih^T + beta C,  C = h_{t-1} W_hh^T + beta C
int lc_gemm_input_step(const lc_gpu_state *s, int l, int t, float *C, float beta, lc_error *err);
int lc_gemm_recurrent_step(const lc_gpu_state *s, int l, int t, float *C, float beta,
                           lc_error *err);
// gates (T*B x 4H) = in W_ih^T + beta gates: the input projection of all steps
int lc_gemm_input_all(const lc_gpu_state *s, int l, float beta, lc_error *err);

#endif
