// Shared LSTM device kernels (see lstm_cells.cuh for the contract).
// Strict FP32: expf/tanhf (no fast-math intrinsics), no TF32 anywhere.
#include "lstm_cells.cuh"
#include "kernel_common.cuh"

using namespace lc_kernels; // kernel_common.cuh

namespace {

// One thread per (row r, unit k): reads the four pre-activations of unit k
// before writing the four activations, so gates may alias pre_a / pre_b.
__global__ void cell_forward_kernel(lc_cell_fwd a)
{
    const size_t H = (size_t)a.H;
    const size_t n = (size_t)a.rows * H;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / H, k = idx - r * H;
        const float *pa = a.pre_a + r * a.ld_pre_a;
        float pi = pa[k], pf = pa[H + k], pg = pa[2 * H + k], po = pa[3 * H + k];
        if (a.pre_b) {
            const float *pb = a.pre_b + r * a.ld_pre_b;
            pi += pb[k]; pf += pb[H + k]; pg += pb[2 * H + k]; po += pb[3 * H + k];
        }
        if (a.bias_a) {
            pi += a.bias_a[k]; pf += a.bias_a[H + k]; pg += a.bias_a[2 * H + k]; po += a.bias_a[3 * H + k];
        }
        if (a.bias_b) {
            pi += a.bias_b[k]; pf += a.bias_b[H + k]; pg += a.bias_b[2 * H + k]; po += a.bias_b[3 * H + k];
        }
        const float gi = sigmoid_f(pi), gf = sigmoid_f(pf), gg = tanhf(pg), go = sigmoid_f(po);
        const float cp = a.c_prev ? a.c_prev[r * a.ld_c_prev + k] : 0.0f;
        const float c = gf * cp + gi * gg;
        float *g = a.gates + r * a.ld_gates;
        g[k] = gi; g[H + k] = gf; g[2 * H + k] = gg; g[3 * H + k] = go;
        a.c[r * a.ld_c + k] = c;
        if (!a.h)
            continue; // the LayerNorm cell: c is normalized before h is formed
        const float h = go * tanhf(c);
        a.h[r * a.ld_h + k] = h;
        if (a.h2)
            a.h2[r * a.ld_h2 + k] = h;
    }
}

// One thread per (row, unit); dc is read before dc_prev is written, so they may alias.
__global__ void cell_backward_kernel(lc_cell_bwd a)
{
    const size_t H = (size_t)a.H;
    const size_t n = (size_t)a.rows * H;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / H, k = idx - r * H;
        const float *g = a.gates + r * a.ld_gates;
        const float go = g[3 * H + k];
        float dh = 0.0f;
        if (a.dh_a)
            dh += a.dh_a[r * a.ld_dh_a + k];
        if (a.dh_b)
            dh += a.dh_b[r * a.ld_dh_b + k];
        const float tc = tanhf(a.c[r * a.ld_c + k]);
        const float dc_in = a.dc ? a.dc[r * a.ld_dc + k] : 0.0f;
        const float dct = dc_in + dh * go * (1.0f - tc * tc);
        const float cp = a.c_prev ? a.c_prev[r * a.ld_c_prev + k] : 0.0f;
        float *dg = a.dgates + r * a.ld_dgates;
        a.dc_prev[r * a.ld_dc_prev + k] = gate_grads(g, H, k, dct, dh, tc, cp, dg);
    }
}

template <lc_ew_unary_op OP>
__global__ void ew_unary_kernel(int rows, int cols, const float *a, size_t lda, float *out, size_t ldo)
{
    const size_t C = (size_t)cols, n = (size_t)rows * C;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / C, j = idx - r * C;
        const float v = a[r * lda + j];
        float o;
        if (OP == LC_EW_SIGMOID)
            o = sigmoid_f(v);
        else if (OP == LC_EW_TANH)
            o = tanhf(v);
        else
            o = v;
        out[r * ldo + j] = o;
    }
}

template <lc_ew_binary_op OP>
__global__ void ew_binary_kernel(int rows, int cols, const float *a, size_t lda, const float *b,
                                 size_t ldb, float *out, size_t ldo)
{
    const size_t C = (size_t)cols, n = (size_t)rows * C;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / C, j = idx - r * C;
        const float x = a[r * lda + j], y = b[r * ldb + j];
        float o;
        if (OP == LC_EW_ADD)
            o = x + y;
        else if (OP == LC_EW_MUL)
            o = x * y;
        else if (OP == LC_EW_SIGMOID_BWD)
            o = x * y * (1.0f - y);
        else
            o = x * (1.0f - y * y);
        out[r * ldo + j] = o;
    }
}

// mode 0: out = bias; mode 1: out += bias; mode 2: out = 0
template <int MODE>
__global__ void bias_rows_kernel(int rows, int cols, const float *bias, float *out, size_t ldo)
{
    const size_t C = (size_t)cols, n = (size_t)rows * C;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / C, j = idx - r * C;
        float *o = out + r * ldo + j;
        if (MODE == 0)
            *o = bias[j];
        else if (MODE == 1)
            *o += bias[j];
        else
            *o = 0.0f;
    }
}

// Bias gradient, pass 1: block (32, 8) sums 32 columns over one chunk of
// rows (of dg, or of dg * by elementwise: a LayerNorm weight's gradient);
// partial[chunk * cols + col]. Pass 2 adds the chunks in order. With one
// chunk (partial NULL: the per-step reductions over B rows) pass 1 adds
// its sums to db_a and db_b itself: one launch instead of two.
constexpr int kBgCols = 32, kBgLanes = 8;

__global__ void bias_grad_partial_kernel(int rows, int cols, const float *dg, size_t ld,
                                         const float *by, size_t ld_by, int rows_per_chunk,
                                         float *partial, float *db_a, float *db_b)
{
    __shared__ float sum[kBgLanes][kBgCols + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * kBgCols + tx;
    const int chunk = blockIdx.y;
    const long long begin = (long long)chunk * rows_per_chunk;
    long long end = begin + rows_per_chunk;
    if (end > rows)
        end = rows;
    float s = 0.0f;
    if (col < cols)
        for (long long r = begin + ty; r < end; r += kBgLanes)
            s += by ? dg[(size_t)r * ld + col] * by[(size_t)r * ld_by + col] : dg[(size_t)r * ld + col];
    sum[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && col < cols) {
        float t = 0.0f;
        for (int l = 0; l < kBgLanes; l++)
            t += sum[l][tx];
        if (partial) {
            partial[(size_t)chunk * cols + col] = t;
        } else {
            db_a[col] += t;
            if (db_b)
                db_b[col] += t;
        }
    }
}

__global__ void bias_grad_finish_kernel(int cols, int chunks, const float *partial, float *db_a,
                                        float *db_b)
{
    for (size_t j = grid_start(); j < (size_t)cols; j += grid_step()) {
        float t = 0.0f;
        for (int c = 0; c < chunks; c++)
            t += partial[(size_t)c * cols + j];
        db_a[j] += t;
        if (db_b)
            db_b[j] += t;
    }
}

} // namespace

int lc_cell_forward(const lc_cell_fwd *a, cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)a->rows * (size_t)a->H;
    if (n == 0)
        return LC_OK;
    cell_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(*a);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_cell_backward(const lc_cell_bwd *a, cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)a->rows * (size_t)a->H;
    if (n == 0)
        return LC_OK;
    cell_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(*a);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_ew_unary(lc_ew_unary_op op, int rows, int cols, const float *a, size_t lda, float *out,
                size_t ldo, cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)rows * (size_t)cols;
    if (n == 0)
        return LC_OK;
    const unsigned nb = blocks_for(n);
    switch (op) {
    case LC_EW_SIGMOID:
        ew_unary_kernel<LC_EW_SIGMOID><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, out, ldo);
        break;
    case LC_EW_TANH:
        ew_unary_kernel<LC_EW_TANH><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, out, ldo);
        break;
    default:
        ew_unary_kernel<LC_EW_COPY><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, out, ldo);
        break;
    }
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_ew_binary(lc_ew_binary_op op, int rows, int cols, const float *a, size_t lda,
                 const float *b, size_t ldb, float *out, size_t ldo, cudaStream_t stream,
                 lc_error *err)
{
    const size_t n = (size_t)rows * (size_t)cols;
    if (n == 0)
        return LC_OK;
    const unsigned nb = blocks_for(n);
    switch (op) {
    case LC_EW_ADD:
        ew_binary_kernel<LC_EW_ADD><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, b, ldb, out, ldo);
        break;
    case LC_EW_MUL:
        ew_binary_kernel<LC_EW_MUL><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, b, ldb, out, ldo);
        break;
    case LC_EW_SIGMOID_BWD:
        ew_binary_kernel<LC_EW_SIGMOID_BWD><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, b, ldb,
                                                                         out, ldo);
        break;
    default:
        ew_binary_kernel<LC_EW_TANH_BWD><<<nb, kThreads, 0, stream>>>(rows, cols, a, lda, b, ldb,
                                                                      out, ldo);
        break;
    }
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_ew_add_bias(int rows, int cols, const float *bias, float *out, size_t ldo,
                   cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)rows * (size_t)cols;
    if (n == 0)
        return LC_OK;
    bias_rows_kernel<1><<<blocks_for(n), kThreads, 0, stream>>>(rows, cols, bias, out, ldo);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_bias_broadcast(int rows, int cols, const float *bias, float *out, size_t ldo,
                      cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)rows * (size_t)cols;
    if (n == 0)
        return LC_OK;
    bias_rows_kernel<0><<<blocks_for(n), kThreads, 0, stream>>>(rows, cols, bias, out, ldo);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_ew_zero(int rows, int cols, float *out, size_t ldo, cudaStream_t stream, lc_error *err)
{
    const size_t n = (size_t)rows * (size_t)cols;
    if (n == 0)
        return LC_OK;
    bias_rows_kernel<2><<<blocks_for(n), kThreads, 0, stream>>>(rows, cols, nullptr, out, ldo);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

namespace {

// Column sums of dg (times by, where given) added to db_a and db_b.
int column_sums(int rows, int cols, const float *dg, size_t ld, const float *by, size_t ld_by,
                float *partial, float *db_a, float *db_b, cudaStream_t stream, lc_error *err)
{
    if (rows <= 0 || cols <= 0)
        return LC_OK;
    // about 256 rows per chunk, at most LC_BIAS_GRAD_CHUNKS chunks
    int chunks = (int)(((long long)rows + 255) / 256);
    if (chunks > LC_BIAS_GRAD_CHUNKS)
        chunks = LC_BIAS_GRAD_CHUNKS;
    if (chunks < 1)
        chunks = 1;
    const int rows_per_chunk = (int)(((long long)rows + chunks - 1) / chunks);
    const dim3 block(kBgCols, kBgLanes);
    const dim3 grid((unsigned)((cols + kBgCols - 1) / kBgCols), (unsigned)chunks);
    float *chunk_sums = chunks > 1 ? partial : nullptr;
    bias_grad_partial_kernel<<<grid, block, 0, stream>>>(rows, cols, dg, ld, by, ld_by,
                                                         rows_per_chunk, chunk_sums, db_a, db_b);
    CUDA_CHECK_LAUNCH();
    if (!chunk_sums)
        return LC_OK;
    bias_grad_finish_kernel<<<blocks_for((size_t)cols), kThreads, 0, stream>>>(cols, chunks, partial,
                                                                               db_a, db_b);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

} // namespace

int lc_bias_grad(int rows, int cols, const float *dg, size_t ld, float *partial, float *db_a,
                 float *db_b, cudaStream_t stream, lc_error *err)
{
    return column_sums(rows, cols, dg, ld, nullptr, 0, partial, db_a, db_b, stream, err);
}

int lc_column_dot(int rows, int cols, const float *a, size_t lda, const float *b, size_t ldb,
                  float *partial, float *out, cudaStream_t stream, lc_error *err)
{
    return column_sums(rows, cols, a, lda, b, ldb, partial, out, nullptr, stream, err);
}

// ---------------------------------------------------------------------------
// Unfused cells: the fused arithmetic above, one elementwise kernel per op.

int lc_cell_forward_unfused(const lc_cell_fwd *a, float *scratch, cudaStream_t stream,
                            lc_error *err)
{
    const int R = a->rows, H = a->H, H4 = 4 * a->H;
    if ((size_t)R * (size_t)H == 0)
        return LC_OK;
    float *g = a->gates;
    const size_t ldg = a->ld_gates;
    float *t0 = scratch, *t1 = scratch + (size_t)R * H;
    // pre-activations into gates
    if (a->pre_b)
        LC_TRY(lc_ew_binary(LC_EW_ADD, R, H4, a->pre_a, a->ld_pre_a, a->pre_b, a->ld_pre_b, g, ldg,
                            stream, err));
    else if (a->pre_a != g)
        LC_TRY(lc_ew_unary(LC_EW_COPY, R, H4, a->pre_a, a->ld_pre_a, g, ldg, stream, err));
    if (a->bias_a)
        LC_TRY(lc_ew_add_bias(R, H4, a->bias_a, g, ldg, stream, err));
    if (a->bias_b)
        LC_TRY(lc_ew_add_bias(R, H4, a->bias_b, g, ldg, stream, err));
    // activations in place: i, f sigmoid; g tanh; o sigmoid
    float *gi = g, *gf = g + H, *gg = g + 2 * (size_t)H, *go = g + 3 * (size_t)H;
    LC_TRY(lc_ew_unary(LC_EW_SIGMOID, R, H, gi, ldg, gi, ldg, stream, err));
    LC_TRY(lc_ew_unary(LC_EW_SIGMOID, R, H, gf, ldg, gf, ldg, stream, err));
    LC_TRY(lc_ew_unary(LC_EW_TANH, R, H, gg, ldg, gg, ldg, stream, err));
    LC_TRY(lc_ew_unary(LC_EW_SIGMOID, R, H, go, ldg, go, ldg, stream, err));
    // c = f * c_prev + i * g
    if (a->c_prev) {
        LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, gf, ldg, a->c_prev, a->ld_c_prev, t0, H, stream, err));
        LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, gi, ldg, gg, ldg, t1, H, stream, err));
        LC_TRY(lc_ew_binary(LC_EW_ADD, R, H, t0, H, t1, H, a->c, a->ld_c, stream, err));
    } else {
        LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, gi, ldg, gg, ldg, a->c, a->ld_c, stream, err));
    }
    // h = o * tanh(c)
    LC_TRY(lc_ew_unary(LC_EW_TANH, R, H, a->c, a->ld_c, t0, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, go, ldg, t0, H, a->h, a->ld_h, stream, err));
    if (a->h2)
        LC_TRY(lc_ew_unary(LC_EW_COPY, R, H, a->h, a->ld_h, a->h2, a->ld_h2, stream, err));
    return LC_OK;
}

namespace {

// dh = dh_a + dh_b of the unfused cell backward: one of them as it is, their
// sum in t0 (rows x H), or zero in t0 when neither is given.
struct dh_sum {
    const float *dh;
    size_t ldh;
};

int sum_dh(const lc_cell_bwd *a, float *t0, cudaStream_t stream, dh_sum *out, lc_error *err)
{
    const int R = a->rows, H = a->H;
    if (a->dh_a && a->dh_b) {
        LC_TRY(lc_ew_binary(LC_EW_ADD, R, H, a->dh_a, a->ld_dh_a, a->dh_b, a->ld_dh_b, t0, H, stream,
                            err));
        out->dh = t0; out->ldh = H;
    } else if (a->dh_a) {
        out->dh = a->dh_a; out->ldh = a->ld_dh_a;
    } else if (a->dh_b) {
        out->dh = a->dh_b; out->ldh = a->ld_dh_b;
    } else {
        LC_TRY(lc_ew_zero(R, H, t0, H, stream, err));
        out->dh = t0; out->ldh = H;
    }
    return LC_OK;
}

} // namespace

int lc_cell_backward_unfused(const lc_cell_bwd *a, float *scratch, cudaStream_t stream,
                             lc_error *err)
{
    const int R = a->rows, H = a->H;
    if ((size_t)R * (size_t)H == 0)
        return LC_OK;
    const float *g = a->gates;
    const size_t ldg = a->ld_gates;
    const float *gi = g, *gf = g + H, *gg = g + 2 * (size_t)H, *go = g + 3 * (size_t)H;
    float *dg = a->dgates;
    const size_t ldd = a->ld_dgates;
    float *dgi = dg, *dgf = dg + H, *dgg = dg + 2 * (size_t)H, *dgo = dg + 3 * (size_t)H;
    float *t0 = scratch, *t1 = scratch + (size_t)R * H, *t2 = scratch + 2 * (size_t)R * H;
    // dh = dh_a + dh_b
    dh_sum d;
    LC_TRY(sum_dh(a, t0, stream, &d, err));
    const float *dh = d.dh;
    const size_t ldh = d.ldh;
    // t1 = tanh(c); dpre_o = (dh * tc) * o(1-o)
    LC_TRY(lc_ew_unary(LC_EW_TANH, R, H, a->c, a->ld_c, t1, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, dh, ldh, t1, H, t2, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_SIGMOID_BWD, R, H, t2, H, go, ldg, dgo, ldd, stream, err));
    // t2 = dct = dc + (dh * o) * (1 - tc^2)
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, dh, ldh, go, ldg, t2, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_TANH_BWD, R, H, t2, H, t1, H, t2, H, stream, err));
    if (a->dc)
        LC_TRY(lc_ew_binary(LC_EW_ADD, R, H, a->dc, a->ld_dc, t2, H, t2, H, stream, err));
    // dpre_i = (dct * g) * i(1-i)
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, t2, H, gg, ldg, t1, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_SIGMOID_BWD, R, H, t1, H, gi, ldg, dgi, ldd, stream, err));
    // dpre_g = (dct * i) * (1 - g^2)
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, t2, H, gi, ldg, t1, H, stream, err));
    LC_TRY(lc_ew_binary(LC_EW_TANH_BWD, R, H, t1, H, gg, ldg, dgg, ldd, stream, err));
    // dpre_f = (dct * c_prev) * f(1-f)
    if (a->c_prev) {
        LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, t2, H, a->c_prev, a->ld_c_prev, t1, H, stream, err));
        LC_TRY(lc_ew_binary(LC_EW_SIGMOID_BWD, R, H, t1, H, gf, ldg, dgf, ldd, stream, err));
    } else {
        LC_TRY(lc_ew_zero(R, H, dgf, ldd, stream, err));
    }
    // dc_prev = dct * f (dc was consumed above, so dc_prev may alias it)
    LC_TRY(lc_ew_binary(LC_EW_MUL, R, H, t2, H, gf, ldg, a->dc_prev, a->ld_dc_prev, stream, err));
    return LC_OK;
}
