/* PyTorch's own CPU LSTM as a plugin runner, torch:lstm: at::lstm (what
 * nn.LSTM's forward calls) and autograd's backward, through libtorch's C++
 * API, so that it is gated and timed like every runner with no Python in
 * the timed region. Used as the PyTorch row of tests/perf/cpu_peers.c and
 * checked by numerics.torch_lstm.* (tests/torch/CMakeLists.txt).
 *
 * Threads: a fair comparison runs every CPU runner on as many threads as
 * OpenBLAS has in this process (docs/perf.md); PyTorch's intra-op pool
 * is set to that count at create and before each timed call. */
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/utils/rnn.h>
#include <torch/version.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

#include "lstmcheck/runner.h"

namespace {

struct TorchLstm {
    lstmcheck_shape s{};
    at::Tensor x, h0, c0;            /* leaves with gradients */
    at::Tensor lengths;              /* int64 (B), or undefined: every sequence T long */
    std::vector<at::Tensor> params;  /* per layer w_ih, w_hh, b_ih, b_hh: at::lstm's order */
    at::Tensor dy, dhy, dcy;         /* the backward seeds (zeros where NULL) */
    at::Tensor y, hy, cy;            /* the last forward's outputs (undefined: none succeeded) */
    bool backward_ran = false;       /* gradients exist (an undefined one: nothing reached it) */
};

/* OpenBLAS's thread count in this process (lstmcheck links it), looked up
 * rather than linked: 0 where it is absent. */
int blas_threads()
{
    static int (*get)(void);
    static bool looked;
    if (!looked) {
        *(void **)&get = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
        looked = true;
    }
    return get ? get() : 0;
}

void match_blas_threads()
{
    const int n = blas_threads();
    if (n > 0 && at::get_num_threads() != n)
        at::set_num_threads(n);
}

/* A float tensor copied from lstmcheck's buffer (zeros for NULL). */
at::Tensor copied(const float *data, at::IntArrayRef sizes, bool grad)
{
    at::Tensor t = data ? at::from_blob(const_cast<float *>(data), sizes, at::kFloat).clone()
                        : at::zeros(sizes, at::kFloat);
    if (grad)
        t.set_requires_grad(true);
    return t;
}

/* Widen a float tensor into lstmcheck's double buffer; an undefined one
 * is zeros where zero_if_undefined (a gradient nothing reached), else left
 * as it is (an output no forward made). */
void widen(const at::Tensor &t, double *out, int64_t n, bool zero_if_undefined = true)
{
    if (!out || (!t.defined() && !zero_if_undefined))
        return;
    if (!t.defined()) {
        for (int64_t i = 0; i < n; i++)
            out[i] = 0;
        return;
    }
    at::Tensor c = t.contiguous();
    const float *f = c.data_ptr<float>();
    for (int64_t i = 0; i < n; i++)
        out[i] = f[i];
}

/* Every entry point runs its body here: a C++ exception becomes the
 * runner's error, its first line. */
template <typename F> int guarded(lstmcheck_error *err, F body)
{
    try {
        body();
        return LSTMCHECK_OK;
    } catch (const std::exception &e) {
        std::snprintf(err->msg, sizeof err->msg, "libtorch: %.400s", e.what());
        for (char *c = err->msg; *c; c++)
            if (*c == '\n')
                *c = '\0';
        return LSTMCHECK_ERROR;
    } catch (...) {
        std::snprintf(err->msg, sizeof err->msg, "libtorch: an exception that is not a std::exception");
        return LSTMCHECK_ERROR;
    }
}

int torch_create(const lstmcheck_runner *, const lstmcheck_problem *p, void **state, lstmcheck_error *err)
{
    TorchLstm *t = nullptr;
    int rc = guarded(err, [&] {
        t = new TorchLstm;
        match_blas_threads();
        const lstmcheck_shape &s = p->shape;
        const int64_t T = s.seq_length, B = s.batch, H = s.hidden_size, L = s.num_layers;
        t->s = s;
        t->x = copied(p->x, {T, B, s.input_size}, true);
        t->h0 = copied(p->h0, {L, B, H}, true);
        t->c0 = copied(p->c0, {L, B, H}, true);
        for (int l = 0; l < L; l++) {
            const int64_t in = l ? H : s.input_size;
            t->params.push_back(copied(p->w_ih[l], {4 * H, in}, true));
            t->params.push_back(copied(p->w_hh[l], {4 * H, H}, true));
            t->params.push_back(copied(p->b_ih[l], {4 * H}, true));
            t->params.push_back(copied(p->b_hh[l], {4 * H}, true));
        }
        if (p->lengths)
            t->lengths = at::from_blob(p->lengths, {B}, at::kInt).to(at::kLong);
        t->dy = copied(p->dy, {T, B, H}, false);
        t->dhy = copied(p->dhy, {L, B, H}, false);
        t->dcy = copied(p->dcy, {L, B, H}, false);
    });
    if (rc != LSTMCHECK_OK) {
        delete t;
        return rc;
    }
    *state = t;
    return LSTMCHECK_OK;
}

/* Packed sequences as nn.LSTM takes them from pack_padded_sequence(...,
 * enforce_sorted=False): the batch sorted by length, the states permuted
 * alike, the outputs padded with zeros and put back in the batch's order. */
void forward_packed(TorchLstm *t)
{
    namespace rnn = torch::nn::utils::rnn;
    rnn::PackedSequence in = rnn::pack_padded_sequence(t->x, t->lengths, /*batch_first=*/false,
                                                       /*enforce_sorted=*/false);
    const at::Tensor &sorted = in.sorted_indices(), &unsorted = in.unsorted_indices();
    auto out = at::lstm(in.data(), in.batch_sizes(), {t->h0.index_select(1, sorted), t->c0.index_select(1, sorted)},
                        t->params, /*has_biases=*/true, t->s.num_layers, /*dropout=*/0.0, /*train=*/true,
                        /*bidirectional=*/false);
    rnn::PackedSequence y(std::get<0>(out), in.batch_sizes(), sorted, unsorted);
    t->y = std::get<0>(rnn::pad_packed_sequence(y, /*batch_first=*/false, 0.0, t->s.seq_length));
    t->hy = std::get<1>(out).index_select(1, unsorted);
    t->cy = std::get<2>(out).index_select(1, unsorted);
}

int torch_forward(void *state, lstmcheck_error *err)
{
    auto *t = static_cast<TorchLstm *>(state);
    return guarded(err, [&] {
        match_blas_threads();
        t->y = t->hy = t->cy = at::Tensor(); /* a failure leaves no stale graph behind */
        if (t->lengths.defined())
            return forward_packed(t);
        /* nn.LSTM(batch_first=False, dropout=0, bidirectional=False), training */
        auto out = at::lstm(t->x, {t->h0, t->c0}, t->params, /*has_biases=*/true, t->s.num_layers,
                            /*dropout=*/0.0, /*train=*/true, /*bidirectional=*/false, /*batch_first=*/false);
        t->y = std::get<0>(out);
        t->hy = std::get<1>(out);
        t->cy = std::get<2>(out);
    });
}

int torch_backward(void *state, lstmcheck_error *err)
{
    auto *t = static_cast<TorchLstm *>(state);
    return guarded(err, [&] {
        match_blas_threads();
        if (!t->y.defined())
            throw std::runtime_error("backward() without a forward() that succeeded");
        torch::autograd::backward({t->y, t->hy, t->cy}, {t->dy, t->dhy, t->dcy});
        t->backward_ran = true;
    });
}

/* PyTorch 1.13's zero_grad(): gradients kept, zeroed in place. */
int torch_zero_grads(void *state, lstmcheck_error *err)
{
    auto *t = static_cast<TorchLstm *>(state);
    return guarded(err, [&] {
        for (at::Tensor *leaf : {&t->x, &t->h0, &t->c0})
            if (leaf->grad().defined())
                leaf->mutable_grad().zero_();
        for (at::Tensor &w : t->params)
            if (w.grad().defined())
                w.mutable_grad().zero_();
    });
}

int torch_read_results(void *state, lstmcheck_results *r, lstmcheck_error *err)
{
    auto *t = static_cast<TorchLstm *>(state);
    return guarded(err, [&] {
        const lstmcheck_shape &s = t->s;
        const int64_t T = s.seq_length, B = s.batch, H = s.hidden_size, L = s.num_layers;
        widen(t->y, r->y, T * B * H, false);
        widen(t->hy, r->hy, L * B * H, false);
        widen(t->cy, r->cy, L * B * H, false);
        if (!t->backward_ran)
            return; /* no gradients yet: left as lstmcheck filled them */
        widen(t->x.grad(), r->dx, T * B * s.input_size);
        widen(t->h0.grad(), r->dh0, L * B * H);
        widen(t->c0.grad(), r->dc0, L * B * H);
        for (int l = 0; l < L; l++) {
            const int64_t in = l ? H : s.input_size;
            widen(t->params[4 * l + 0].grad(), r->dw_ih ? r->dw_ih[l] : nullptr, 4 * H * in);
            widen(t->params[4 * l + 1].grad(), r->dw_hh ? r->dw_hh[l] : nullptr, 4 * H * H);
            widen(t->params[4 * l + 2].grad(), r->db_ih ? r->db_ih[l] : nullptr, 4 * H);
            widen(t->params[4 * l + 3].grad(), r->db_hh ? r->db_hh[l] : nullptr, 4 * H);
        }
    });
}

size_t torch_peak_device_bytes(void *) { return 0; }

void torch_destroy(void *state) { delete static_cast<TorchLstm *>(state); }

#define TORCH_LSTM_STRINGIFY2(x) #x
#define TORCH_LSTM_STRINGIFY(x) TORCH_LSTM_STRINGIFY2(x)

const lstmcheck_runner torch_lstm = {
    "lstm",
    LSTMCHECK_CPU,
    "PyTorch " TORCH_LSTM_STRINGIFY(TORCH_VERSION_MAJOR) "." TORCH_LSTM_STRINGIFY(TORCH_VERSION_MINOR)
    " nn.LSTM on the CPU: at::lstm and autograd, libtorch C++",
    LSTMCHECK_MULTILAYER | LSTMCHECK_VARLEN | LSTMCHECK_BACKWARD | LSTMCHECK_STATE_GRADS,
    LSTMCHECK_FP32,
    0,
    nullptr,
    torch_create,
    torch_forward,
    torch_backward,
    torch_zero_grads,
    torch_read_results,
    torch_peak_device_bytes,
    torch_destroy,
    nullptr,
    LSTMCHECK_MODEL_LSTM,
};

const lstmcheck_runner *const torch_runners[] = {&torch_lstm, nullptr};

} // namespace

LSTMCHECK_PLUGIN("torch", torch_runners);
