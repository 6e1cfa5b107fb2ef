// The cuDNN 9 LSTM shared by the cuDNN runners (see cudnn_common.cuh and
// docs/cudnn-runners.md).
//
// Life of an instance:
//   create     descriptors (RNN, dropout: none, or cuDNN's own with cfg.own_dropout
//              on a dropout model's problem; x/y RNN data, h/c tensors),
//              weight / work / reserve space sizes, device buffers, our
//              parameters copied into cuDNN's weight space at the places
//              cudnnGetRNNWeightParams names, inputs and seeds uploaded,
//              weight gradients zeroed; optionally one probe run.
//   forward    cudnnRNNForward(CUDNN_FWD_MODE_TRAINING) -> y, hy, cy, reserve
//   backward   cudnnRNNBackwardData_v8 -> dx, dhx (dh0), dcx (dc0), then
//              cudnnRNNBackwardWeights_v8(CUDNN_WGRAD_MODE_ADD) -> dweight
//   zero_grads dweight space set to zero (gradients accumulate until then)
//   read_results  copies back; parameter gradients are read out of the
//              dweight space at the same offsets as the weights.
// Every copy and memset is asynchronous on the shared (non-blocking) stream,
// which cuDNN also uses; nothing relies on the legacy default stream.
#include "cudnn_common.cuh"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static_assert(sizeof(int) == sizeof(int32_t), "cuDNN's length arrays are int32");

namespace {

// The configuration codes of cuDNN 9's NOT_SUPPORTED category. The others
// (INCOMPATIBLE_CUDA_DRIVER, INCOMPATIBLE_CUDART, ARCH_MISMATCH,
// RUNTIME_PREREQUISITE_MISSING, SUBLIBRARY_UNAVAILABLE, ...) describe the
// machine, and any code added later is an error until it is listed here.
bool is_config_refusal(cudnnStatus_t st)
{
    switch (st) {
    case CUDNN_STATUS_NOT_SUPPORTED:
    case CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN:
    case CUDNN_STATUS_NOT_SUPPORTED_SHAPE:
    case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE:
    case CUDNN_STATUS_NOT_SUPPORTED_LAYOUT:
    case CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT:
    case CUDNN_STATUS_NOT_SUPPORTED_PADDING:
    case CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM:
    case CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE:
        return true;
    default:
        return false;
    }
}

// After a failed probe run: a sticky CUDA error (a fault) is never a
// refusal; a non-sticky launch error is one, and is named in `cuda`.
bool context_healthy(char *cuda, size_t n)
{
    const cudaError_t last = cudaGetLastError(); // clears a non-sticky error
    const cudaError_t sync = cudaStreamSynchronize(lc_cuda_stream());
    snprintf(cuda, n, "%s", last != cudaSuccess ? cudaGetErrorName(last) : "");
    if (sync != cudaSuccess) {
        snprintf(cuda, n, "%s (sticky)", cudaGetErrorName(sync));
        return false;
    }
    return true;
}

bool may_refuse(cudnnStatus_t st, lc_cudnn_refusals refusals, char *cuda, size_t n)
{
    cuda[0] = '\0';
    const int cat = CUDNN_STATUS_CATEGORY(st);
    if (refusals == LC_REFUSE_NOTHING)
        return false;
    if (is_config_refusal(st))
        return true;
    if (refusals != LC_REFUSE_PROBE)
        return false;
    if (cat == CUDNN_STATUS_BAD_PARAM)
        return true;
    return cat == CUDNN_STATUS_EXECUTION_FAILED && context_healthy(cuda, n);
}

} // namespace

int lc_cudnn_fail(cudnnStatus_t status, lc_cudnn_refusals refusals, const char *file, int line,
                  const char *call, lc_error *err)
{
    char detail[256], cuda[96];
    detail[0] = '\0';
    cudnnGetLastErrorString(detail, sizeof detail);
    detail[sizeof detail - 1] = '\0';
    const bool refused = may_refuse(status, refusals, cuda, sizeof cuda);
    // The call's text goes last: it is long, and the message may be cut.
    lc_error_set(err, "%s%s:%d: %s (%d)%s%s%s%s%s in %s",
                 refused ? "cuDNN refuses this configuration: " : "", file, line,
                 cudnnGetErrorString(status), (int)status, cuda[0] ? ", CUDA " : "", cuda,
                 detail[0] ? " [" : "", detail, detail[0] ? "]" : "", call);
    return refused ? LC_UNSUPPORTED : LC_ERROR;
}

namespace {

// cuDNN's dropout RNG seed (cudnn_dropout at p > 0)
constexpr unsigned long long kDropoutSeed = 20240401ULL;

enum {
    LIN_IDS = 8,     // LSTM: 0-3 input matrices (i, f, g, o), 4-7 recurrent ones
    MAX_ALLOCS = 24, // device buffers of one instance
};

struct dev_alloc {
    void **slot;
    size_t bytes;
};

struct cudnn_state {
    lc_cudnn_config cfg;
    const lstm_problem *p;
    cudaStream_t stream;

    lc_device_pool pool;
    dev_alloc allocs[MAX_ALLOCS];
    int nallocs;

    cudnnHandle_t handle;
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t dropout;
    cudnnRNNDataDescriptor_t xdesc, ydesc;
    cudnnTensorDescriptor_t hdesc, cdesc; // (L, B, H), packed
    cudnnTensorDescriptor_t mdesc, bdesc; // filled by cudnnGetRNNWeightParams

    float dropout_p;   // cuDNN's dropout between layers (0: none)
    void *dropout_states; // its RNG states (NULL without dropout)
    size_t dropout_states_size;
    int *host_len;     // B lengths (all T without varlen); the data descriptors' array
    float pad_fill;    // 0: y (and dx) past a sequence's length
    size_t *mat_off;   // [L * LIN_IDS] byte offsets of the matrices in the weight space
    size_t *bias_off;  // [L * LIN_IDS] byte offsets of the biases

    size_t wsize, worksize, reservesize;
    void *w, *dw, *work, *reserve;
    int32_t *dev_len;                   // device copy of host_len
    float *x, *y, *hx, *cx, *hy, *cy;   // (T,B,I) (T,B,H) (L,B,H) x4
    float *dy, *dhy, *dcy;              // seeds; dhy/dcy NULL when the problem has none
    float *dx, *dhx, *dcx;              // input gradients
    int forward_done, backward_done;
};

int s_alloc(cudnn_state *s, void **slot, size_t bytes, lc_error *err)
{
    if (s->nallocs >= MAX_ALLOCS) {
        lc_error_set(err, "%s: internal: more than %d device buffers", s->cfg.name, MAX_ALLOCS);
        return LC_ERROR;
    }
    if (lc_device_alloc(&s->pool, slot, bytes, err) != LC_OK) {
        if (err) { // name the runner, as the cuBLAS runners do
            lc_error e = *err;
            lc_error_set(err, "%s: %s", s->cfg.name, e.msg);
        }
        return LC_ERROR;
    }
    s->allocs[s->nallocs].slot = slot;
    s->allocs[s->nallocs].bytes = bytes;
    s->nallocs++;
    return LC_OK;
}

cudnnStatus_t set_rnn_descriptor(cudnn_state *s, cudnnMathType_t math)
{
    const lstm_shape *sh = &s->p->shape;
    const uint32_t aux = s->cfg.varlen ? CUDNN_RNN_PADDED_IO_ENABLED : CUDNN_RNN_PADDED_IO_DISABLED;
    return cudnnSetRNNDescriptor_v8(s->rnn, s->cfg.algo, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                    CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                    CUDNN_DATA_FLOAT, math, sh->input_size, sh->hidden_size,
                                    sh->hidden_size /* projSize: no projection */,
                                    sh->num_layers, s->dropout, aux);
}

// Where cuDNN keeps one matrix (rows x cols) or bias (rows x 1) of the
// weight space; checks the shape it reports against ours (row-major, packed).
int locate(const cudnn_state *s, cudnnTensorDescriptor_t desc, const void *addr, int rows,
           int cols, int layer, int id, const char *what, size_t *off, lc_error *err)
{
    if (!addr) {
        lc_error_set(err, "%s: cuDNN reports no %s for layer %d, linLayerID %d", s->cfg.name,
                     what, layer, id);
        return LC_ERROR;
    }
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int nb = 0, dims[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
    CUDNN_CHECK(cudnnGetTensorNdDescriptor(desc, 3, &dt, &nb, dims, strides));
    const char *base = (const char *)s->w, *at = (const char *)addr;
    const size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    const size_t byte_off = at >= base ? (size_t)(at - base) : 0;
    const bool shape_ok = dt == CUDNN_DATA_FLOAT && nb == 3 && dims[0] == 1 &&
                          dims[1] == rows && dims[2] == cols && strides[1] == cols &&
                          strides[2] == 1;
    const bool place_ok =
        at >= base && byte_off % sizeof(float) == 0 && byte_off + bytes <= s->wsize;
    if (!shape_ok || !place_ok) {
        lc_error_set(err,
                     "%s: unexpected cuDNN weight layout: layer %d linLayerID %d %s is "
                     "[%d,%d,%d] strides [%d,%d,%d] at byte %zu of %zu, expected [1,%d,%d] "
                     "row-major float",
                     s->cfg.name, layer, id, what, dims[0], dims[1], dims[2], strides[0],
                     strides[1], strides[2], byte_off, s->wsize, rows, cols);
        return LC_ERROR;
    }
    *off = byte_off;
    return LC_OK;
}

int upload(cudnn_state *s, void *dst, const void *src, size_t bytes, lc_error *err)
{
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s->stream));
    return LC_OK;
}

int run_forward(cudnn_state *s, lc_cudnn_refusals refusals, lc_error *err)
{
    CUDNN_CHECK_AS(refusals,
                   cudnnRNNForward(s->handle, s->rnn, CUDNN_FWD_MODE_TRAINING, s->dev_len,
                                   s->xdesc, s->x, s->ydesc, s->y, s->hdesc, s->hx, s->hy,
                                   s->cdesc, s->cx, s->cy, s->wsize, s->w, s->worksize, s->work,
                                   s->reservesize, s->reserve));
    return LC_OK;
}

int run_backward(cudnn_state *s, lc_cudnn_refusals refusals, lc_error *err)
{
    // dx, dhx, dcx are written (not accumulated); NULL dhy / dcy mean zero.
    CUDNN_CHECK_AS(refusals,
                   cudnnRNNBackwardData_v8(s->handle, s->rnn, s->dev_len, s->ydesc, s->y, s->dy,
                                           s->xdesc, s->dx, s->hdesc, s->hx, s->dhy, s->dhx,
                                           s->cdesc, s->cx, s->dcy, s->dcx, s->wsize, s->w,
                                           s->worksize, s->work, s->reservesize, s->reserve));
    // Adds this pass's parameter gradients to the dweight space.
    CUDNN_CHECK_AS(refusals,
                   cudnnRNNBackwardWeights_v8(s->handle, s->rnn, CUDNN_WGRAD_MODE_ADD, s->dev_len,
                                              s->xdesc, s->x, s->hdesc, s->hx, s->ydesc, s->y,
                                              s->wsize, s->dw, s->worksize, s->work,
                                              s->reservesize, s->reserve));
    return LC_OK;
}

// Shapes the cuDNN runners refuse before any call: lengths without varlen,
// and sizes past cuDNN's int tensor sizes.
int check_supported(const cudnn_state *s, lc_error *err)
{
    const lstm_problem *p = s->p;
    const lstm_shape *sh = &p->shape;
    const int B = sh->batch, I = sh->input_size, H = sh->hidden_size, L = sh->num_layers;
    const char *name = s->cfg.name;

    if (p->lengths && !s->cfg.varlen) {
        lc_error_set(err, "%s takes no variable-length batches", name);
        return LC_UNSUPPORTED;
    }
    // the plain LSTM's problems; a dropout model's with cuDNN's own mask
    const lstm_model *m = lstm_model_get(p->model);
    if (p->model != MODEL_LSTM && !(s->cfg.own_dropout && m && m->dropout > 0)) {
        lc_error_set(err, "%s computes nn.LSTM%s, not the %s model", name,
                     s->cfg.own_dropout ? " with its own dropout" : "", lstm_model_name(p->model));
        return LC_ERROR;
    }
    // cuDNN describes the state tensors and weight blocks with int sizes
    const size_t wide = (size_t)(I > H ? I : H);
    if ((size_t)L * B * H > INT_MAX || 4 * (size_t)H * wide > INT_MAX) {
        lc_error_set(err, "%s: shape too large for cuDNN's int tensor sizes", name);
        return LC_UNSUPPORTED;
    }
    return LC_OK;
}

// The stream, the lengths array of the data descriptors and the tables of
// weight-space offsets.
int host_setup(cudnn_state *s, lc_error *err)
{
    const lstm_problem *p = s->p;
    const int B = p->shape.batch, L = p->shape.num_layers;
    const char *name = s->cfg.name;

    s->stream = lc_cuda_stream();
    if (!s->stream) {
        lc_error_set(err, "%s: could not create the CUDA stream", name);
        return LC_ERROR;
    }
    s->host_len = (int *)malloc((size_t)B * sizeof(int));
    s->mat_off = (size_t *)calloc((size_t)L * LIN_IDS, sizeof(size_t));
    s->bias_off = (size_t *)calloc((size_t)L * LIN_IDS, sizeof(size_t));
    if (!s->host_len || !s->mat_off || !s->bias_off) {
        lc_error_set(err, "%s: out of host memory", name);
        return LC_ERROR;
    }
    for (int b = 0; b < B; b++)
        s->host_len[b] = lstm_length(p, b);
    s->pad_fill = 0.0f;
    s->dropout_p = p->model == MODEL_LSTM ? 0.0f : (float)lstm_model_get(p->model)->dropout;
    return LC_OK;
}

// The handle on the shared stream, every descriptor, and the dropout
// descriptor: none, or cuDNN's own at dropout_p with its RNG states.
int create_descriptors(cudnn_state *s, lc_error *err)
{
    // a failing cudnnCreate is the machine (library, driver), never a shape
    CUDNN_CHECK(cudnnCreate(&s->handle));
    CUDNN_CHECK(cudnnSetStream(s->handle, s->stream));
    CUDNN_CHECK(cudnnCreateRNNDescriptor(&s->rnn));
    CUDNN_CHECK(cudnnCreateDropoutDescriptor(&s->dropout));
    CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&s->xdesc));
    CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&s->ydesc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&s->hdesc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&s->cdesc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&s->mdesc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&s->bdesc));
    if (s->dropout_p == 0.0f) {
        // no dropout: with probability 0 cuDNN needs no RNG state memory
        CUDNN_CHECK(cudnnSetDropoutDescriptor(s->dropout, s->handle, 0.0f, nullptr, 0, 0));
        return LC_OK;
    }
    CUDNN_CHECK(cudnnDropoutGetStatesSize(s->handle, &s->dropout_states_size));
    if (s_alloc(s, &s->dropout_states, s->dropout_states_size, err))
        return LC_ERROR;
    // a fixed seed: the masks repeat from run to run on one GPU model and cuDNN version
    CUDNN_CHECK(cudnnSetDropoutDescriptor(s->dropout, s->handle, s->dropout_p, s->dropout_states,
                                          s->dropout_states_size, kDropoutSeed));
    // it initializes the RNG states with a kernel, on a stream cuDNN does not
    // name: wait for the whole device before our stream may use them
    CUDA_CHECK(cudaDeviceSynchronize());
    return LC_OK;
}

// The RNN, x/y data and h/c tensor descriptors for this shape, and the
// weight, work and reserve space sizes; a configuration refusal is
// LC_UNSUPPORTED.
int describe_shape(cudnn_state *s, lc_error *err)
{
    const lstm_shape *sh = &s->p->shape;
    const int T = sh->seq_length, B = sh->batch, I = sh->input_size, H = sh->hidden_size,
              L = sh->num_layers;

    const cudnnStatus_t st = set_rnn_descriptor(s, s->cfg.math);
    if (st != CUDNN_STATUS_SUCCESS)
        return lc_cudnn_fail(st, LC_REFUSE_CONFIG, __FILE__, __LINE__, "cudnnSetRNNDescriptor_v8",
                             err);
    if (s->cfg.algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        CUDNN_CHECK_SHAPE(cudnnBuildRNNDynamic(s->handle, s->rnn, B));

    // x (T,B,I) and y (T,B,H), time-major. Fixed length: the packed layout
    // with every length T is exactly our (T,B,*) array. Variable length:
    // padded (unpacked) time-major, per-sequence lengths, padding filled
    // with 0 in the outputs (cuDNN copies the fill value).
    const cudnnRNNDataLayout_t layout = s->cfg.varlen ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED
                                                      : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    CUDNN_CHECK_SHAPE(cudnnSetRNNDataDescriptor(s->xdesc, CUDNN_DATA_FLOAT, layout, T, B, I,
                                                s->host_len, &s->pad_fill));
    CUDNN_CHECK_SHAPE(cudnnSetRNNDataDescriptor(s->ydesc, CUDNN_DATA_FLOAT, layout, T, B, H,
                                                s->host_len, &s->pad_fill));
    const int hdims[3] = {L, B, H}, hstrides[3] = {B * H, H, 1};
    CUDNN_CHECK_SHAPE(cudnnSetTensorNdDescriptor(s->hdesc, CUDNN_DATA_FLOAT, 3, hdims, hstrides));
    CUDNN_CHECK_SHAPE(cudnnSetTensorNdDescriptor(s->cdesc, CUDNN_DATA_FLOAT, 3, hdims, hstrides));

    // sizes
    CUDNN_CHECK_SHAPE(cudnnGetRNNWeightSpaceSize(s->handle, s->rnn, &s->wsize));
    CUDNN_CHECK_SHAPE(cudnnGetRNNTempSpaceSizes(s->handle, s->rnn, CUDNN_FWD_MODE_TRAINING,
                                                s->xdesc, &s->worksize, &s->reservesize));
    return LC_OK;
}

// Bytes of x (T,B,I), of y (T,B,H) and of one state (L,B,H).
size_t x_bytes(const lstm_shape *sh) { return lstm_seq_elems(sh, sh->input_size) * sizeof(float); }
size_t y_bytes(const lstm_shape *sh) { return lstm_seq_elems(sh, sh->hidden_size) * sizeof(float); }
size_t state_bytes(const lstm_shape *sh) { return lstm_state_elems(sh) * sizeof(float); }

int alloc_buffers(cudnn_state *s, lc_error *err)
{
    const lstm_problem *p = s->p;
    const size_t xbytes = x_bytes(&p->shape), ybytes = y_bytes(&p->shape),
                 sbytes = state_bytes(&p->shape);
    if (s_alloc(s, &s->w, s->wsize, err) || s_alloc(s, &s->dw, s->wsize, err) ||
        s_alloc(s, &s->work, s->worksize, err) || s_alloc(s, &s->reserve, s->reservesize, err) ||
        s_alloc(s, (void **)&s->dev_len, (size_t)p->shape.batch * sizeof(int32_t), err) ||
        s_alloc(s, (void **)&s->x, xbytes, err) || s_alloc(s, (void **)&s->y, ybytes, err) ||
        s_alloc(s, (void **)&s->hx, sbytes, err) || s_alloc(s, (void **)&s->cx, sbytes, err) ||
        s_alloc(s, (void **)&s->hy, sbytes, err) || s_alloc(s, (void **)&s->cy, sbytes, err) ||
        s_alloc(s, (void **)&s->dy, ybytes, err) || s_alloc(s, (void **)&s->dx, xbytes, err) ||
        s_alloc(s, (void **)&s->dhx, sbytes, err) || s_alloc(s, (void **)&s->dcx, sbytes, err) ||
        (p->dhy && s_alloc(s, (void **)&s->dhy, sbytes, err)) ||
        (p->dcy && s_alloc(s, (void **)&s->dcy, sbytes, err)))
        return LC_ERROR;
    return LC_OK;
}

// Where cuDNN keeps each gate's matrices and biases (mat_off, bias_off).
int locate_weights(cudnn_state *s, lc_error *err)
{
    const lstm_shape *sh = &s->p->shape;
    const int H = sh->hidden_size, L = sh->num_layers;
    for (int l = 0; l < L; l++) {
        const int in_l = lstm_layer_input_size(sh, l);
        for (int id = 0; id < LIN_IDS; id++) {
            void *m = nullptr, *b = nullptr;
            CUDNN_CHECK(cudnnGetRNNWeightParams(s->handle, s->rnn, l, s->wsize, s->w, id,
                                                s->mdesc, &m, s->bdesc, &b));
            const int k = l * LIN_IDS + id;
            if (locate(s, s->mdesc, m, H, id < 4 ? in_l : H, l, id, "matrix", &s->mat_off[k],
                       err) ||
                locate(s, s->bdesc, b, H, 1, l, id, "bias", &s->bias_off[k], err))
                return LC_ERROR;
        }
    }
    return LC_OK;
}

// Parameters: gate q of W_ih is rows q*H .. q*H+H-1, i.e. H x I_l row-major,
// exactly cuDNN's matrix of linLayerID q (recurrent: 4 + q); biases likewise.
int upload_weights(cudnn_state *s, lc_error *err)
{
    const lstm_problem *p = s->p;
    const lstm_shape *sh = &p->shape;
    const int H = sh->hidden_size, L = sh->num_layers;
    char *w = (char *)s->w;
    CUDA_CHECK(cudaMemsetAsync(s->w, 0, s->wsize, s->stream));
    for (int l = 0; l < L; l++) {
        const size_t in_l = (size_t)lstm_layer_input_size(sh, l);
        for (int q = 0; q < 4; q++) {
            const int ki = l * LIN_IDS + q, kh = l * LIN_IDS + 4 + q;
            if (upload(s, w + s->mat_off[ki], p->w_ih[l] + (size_t)q * H * in_l,
                       (size_t)H * in_l * sizeof(float), err) ||
                upload(s, w + s->mat_off[kh], p->w_hh[l] + (size_t)q * H * H,
                       (size_t)H * H * sizeof(float), err) ||
                upload(s, w + s->bias_off[ki], p->b_ih[l] + (size_t)q * H,
                       (size_t)H * sizeof(float), err) ||
                upload(s, w + s->bias_off[kh], p->b_hh[l] + (size_t)q * H,
                       (size_t)H * sizeof(float), err))
                return LC_ERROR;
        }
    }
    return LC_OK;
}

// Inputs and seeds uploaded; outputs start at zero, and gradients are zero
// until the first backward.
int upload_inputs(cudnn_state *s, lc_error *err)
{
    const lstm_problem *p = s->p;
    const size_t xbytes = x_bytes(&p->shape), ybytes = y_bytes(&p->shape),
                 sbytes = state_bytes(&p->shape);
    if (upload(s, s->dev_len, s->host_len, (size_t)p->shape.batch * sizeof(int32_t), err) ||
        upload(s, s->x, p->x, xbytes, err) || upload(s, s->hx, p->h0, sbytes, err) ||
        upload(s, s->cx, p->c0, sbytes, err) ||
        (p->dy && upload(s, s->dy, p->dy, ybytes, err)) ||
        (p->dhy && upload(s, s->dhy, p->dhy, sbytes, err)) ||
        (p->dcy && upload(s, s->dcy, p->dcy, sbytes, err)))
        return LC_ERROR;
    if (!p->dy)
        CUDA_CHECK(cudaMemsetAsync(s->dy, 0, ybytes, s->stream));
    // outputs start at zero; gradients are zero until the first backward
    CUDA_CHECK(cudaMemsetAsync(s->dw, 0, s->wsize, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->y, 0, ybytes, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->hy, 0, sbytes, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->cy, 0, sbytes, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->dx, 0, xbytes, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->dhx, 0, sbytes, s->stream));
    CUDA_CHECK(cudaMemsetAsync(s->dcx, 0, sbytes, s->stream));
    return LC_OK;
}

// With cfg.probe, one forward and backward: cuDNN may accept the descriptor
// and refuse the algorithm only when it runs, so find out here, where a
// refusal means "unsupported shape". Then wait for the stream.
int probe_and_sync(cudnn_state *s, lc_error *err)
{
    if (s->cfg.probe) {
        int rc = run_forward(s, LC_REFUSE_PROBE, err);
        if (rc == LC_OK)
            rc = run_backward(s, LC_REFUSE_PROBE, err);
        if (rc != LC_OK)
            return rc;
        CUDA_CHECK(cudaMemsetAsync(s->dw, 0, s->wsize, s->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    return LC_OK;
}

// Everything create does, in order; the first failure's status (LC_ERROR,
// or LC_UNSUPPORTED for a refused shape) with err set. The caller destroys
// the partial instance.
int setup(cudnn_state *s, lc_error *err)
{
    int rc = check_supported(s, err);
    if (rc == LC_OK)
        rc = host_setup(s, err);
    if (rc == LC_OK)
        rc = create_descriptors(s, err);
    if (rc == LC_OK)
        rc = describe_shape(s, err);
    if (rc == LC_OK)
        rc = alloc_buffers(s, err);
    if (rc == LC_OK)
        rc = locate_weights(s, err);
    if (rc == LC_OK)
        rc = upload_weights(s, err);
    if (rc == LC_OK)
        rc = upload_inputs(s, err);
    if (rc == LC_OK)
        rc = probe_and_sync(s, err);
    return rc;
}

int fetch(cudnn_state *s, const void *dev, size_t n, float *host, double *dst, lc_error *err)
{
    CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, s->stream));
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    lstm_copy_to_double(dst, host, n);
    return LC_OK;
}

int read_into(cudnn_state *s, lstm_results *r, float *host, lc_error *err)
{
    const lstm_shape *sh = &s->p->shape;
    const int T = sh->seq_length, B = sh->batch, I = sh->input_size, H = sh->hidden_size,
              L = sh->num_layers;
    const size_t n_x = lstm_seq_elems(sh, I), n_y = lstm_seq_elems(sh, H),
                 n_s = lstm_state_elems(sh);
    if (fetch(s, s->y, n_y, host, r->y, err) || fetch(s, s->hy, n_s, host, r->hy, err) ||
        fetch(s, s->cy, n_s, host, r->cy, err))
        return LC_ERROR;
    if (!s->backward_done)
        return LC_OK;
    if (fetch(s, s->dx, n_x, host, r->dx, err) || fetch(s, s->dhx, n_s, host, r->dh0, err) ||
        fetch(s, s->dcx, n_s, host, r->dc0, err))
        return LC_ERROR;
    if (s->cfg.varlen) {
        // dx of padded steps means nothing; our semantics define it as 0
        for (int t = 0; t < T; t++)
            for (int b = 0; b < B; b++)
                if (t >= s->host_len[b])
                    memset(r->dx + ((size_t)t * B + b) * I, 0, (size_t)I * sizeof(double));
    }
    // the whole dweight space, then each gate's blocks out of it
    CUDA_CHECK(cudaMemcpyAsync(host, s->dw, s->wsize, cudaMemcpyDeviceToHost, s->stream));
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    for (int l = 0; l < L; l++) {
        const size_t in_l = (size_t)lstm_layer_input_size(sh, l);
        for (int q = 0; q < 4; q++) {
            const int ki = l * LIN_IDS + q, kh = l * LIN_IDS + 4 + q;
            lstm_copy_to_double(r->dw_ih[l] + (size_t)q * H * in_l,
                                host + s->mat_off[ki] / sizeof(float), (size_t)H * in_l);
            lstm_copy_to_double(r->dw_hh[l] + (size_t)q * H * H,
                                host + s->mat_off[kh] / sizeof(float), (size_t)H * H);
            lstm_copy_to_double(r->db_ih[l] + (size_t)q * H,
                                host + s->bias_off[ki] / sizeof(float), (size_t)H);
            lstm_copy_to_double(r->db_hh[l] + (size_t)q * H,
                                host + s->bias_off[kh] / sizeof(float), (size_t)H);
        }
    }
    return LC_OK;
}

} // namespace

int lc_cudnn_create(const lc_cudnn_config *cfg, const lstm_problem *p, void **state,
                    lc_error *err)
{
    *state = nullptr;
    const int ready = lc_cuda_enter(err); // a broken setup is an error here too
    if (ready != LC_OK)
        return ready;
    cudnn_state *s = (cudnn_state *)calloc(1, sizeof *s);
    if (!s) {
        lc_error_set(err, "%s: out of host memory", cfg->name);
        return LC_ERROR;
    }
    s->cfg = *cfg;
    s->p = p;
    const int rc = setup(s, err);
    if (rc != LC_OK) {
        lc_cudnn_destroy(s); // frees everything allocated so far
        return rc;
    }
    *state = s;
    return LC_OK;
}

int lc_cudnn_forward(void *state, lc_error *err)
{
    cudnn_state *s = (cudnn_state *)state;
    if (lc_extra_work_gpu_begin(err) != LC_OK) // test build only: perf_power's planted slowdown
        return LC_ERROR;
    const int rc = run_forward(s, LC_REFUSE_NOTHING, err);
    if (rc != LC_OK)
        return rc;
    s->forward_done = 1;
    return lc_extra_work_gpu_end(err);
}

int lc_cudnn_backward(void *state, lc_error *err)
{
    cudnn_state *s = (cudnn_state *)state;
    // cuDNN's backward reads the reserve space the forward wrote
    if (!s->forward_done) {
        lc_error_set(err, "%s: backward before forward", s->cfg.name);
        return LC_ERROR;
    }
    if (lc_extra_work_gpu_begin(err) != LC_OK) // test build only: perf_power's planted slowdown
        return LC_ERROR;
    const int rc = run_backward(s, LC_REFUSE_NOTHING, err);
    if (rc != LC_OK)
        return rc;
    s->backward_done = 1;
    return lc_extra_work_gpu_end(err);
}

int lc_cudnn_zero_grads(void *state, lc_error *err)
{
    cudnn_state *s = (cudnn_state *)state;
    CUDA_CHECK(cudaMemsetAsync(s->dw, 0, s->wsize, s->stream));
    return LC_OK;
}

int lc_cudnn_read_results(void *state, lstm_results *r, lc_error *err)
{
    cudnn_state *s = (cudnn_state *)state;
    const lstm_shape *sh = &s->p->shape;
    size_t n = lstm_seq_elems(sh, sh->input_size);
    if (lstm_seq_elems(sh, sh->hidden_size) > n)
        n = lstm_seq_elems(sh, sh->hidden_size);
    if (lstm_state_elems(sh) > n)
        n = lstm_state_elems(sh);
    if ((s->wsize + sizeof(float) - 1) / sizeof(float) > n)
        n = (s->wsize + sizeof(float) - 1) / sizeof(float);
    float *host = (float *)malloc(n * sizeof(float));
    if (!host) {
        lc_error_set(err, "%s: out of host memory for read-back", s->cfg.name);
        return LC_ERROR;
    }
    const int rc = read_into(s, r, host, err);
    free(host);
    return rc;
}

size_t lc_cudnn_peak_device_bytes(void *state)
{
    return state ? ((cudnn_state *)state)->pool.peak : 0;
}

void lc_cudnn_destroy(void *state)
{
    cudnn_state *s = (cudnn_state *)state;
    if (!s)
        return;
    if (s->stream)
        cudaStreamSynchronize(s->stream); // work in flight may still use the buffers
    for (int i = s->nallocs - 1; i >= 0; i--) {
        lc_device_free(&s->pool, *s->allocs[i].slot, s->allocs[i].bytes);
        *s->allocs[i].slot = nullptr;
    }
    if (s->mdesc)
        cudnnDestroyTensorDescriptor(s->mdesc);
    if (s->bdesc)
        cudnnDestroyTensorDescriptor(s->bdesc);
    if (s->hdesc)
        cudnnDestroyTensorDescriptor(s->hdesc);
    if (s->cdesc)
        cudnnDestroyTensorDescriptor(s->cdesc);
    if (s->xdesc)
        cudnnDestroyRNNDataDescriptor(s->xdesc);
    if (s->ydesc)
        cudnnDestroyRNNDataDescriptor(s->ydesc);
    if (s->rnn)
        cudnnDestroyRNNDescriptor(s->rnn);
    if (s->dropout)
        cudnnDestroyDropoutDescriptor(s->dropout);
    if (s->handle)
        cudnnDestroy(s->handle);
    free(s->host_len);
    free(s->mat_off);
    free(s->bias_off);
    free(s);
    cudaGetLastError(); // leave no stale (non-sticky) error to the next runner
}
