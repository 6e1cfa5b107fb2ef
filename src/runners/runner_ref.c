/* Runner "ref": the reference itself, timed. The role of the original's
 * eager Python loop (py): slow and obviously correct. */
#include "model/reference.h"
#include "runners/runner.h"

#include <stdlib.h>

typedef struct ref_state {
    const lstm_problem *p;
    lstm_results res;
    lstm_reference_tape *tape;
    int backward_done;
} ref_state;

static int ref_available(lc_error *why)
{
    (void)why;
    return LC_OK;
}

static void ref_destroy(void *vs)
{
    ref_state *s = vs;
    if (!s)
        return;
    lstm_reference_tape_free(s->tape);
    lstm_results_free(&s->res);
    free(s);
}

static int ref_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    (void)self;
    ref_state *s = calloc(1, sizeof *s);
    if (!s) {
        lc_error_set(err, "ref: out of host memory");
        return LC_ERROR;
    }
    s->p = p;
    if (lstm_results_alloc(&s->res, &p->shape, p->model, err)) {
        free(s);
        return LC_ERROR;
    }
    *out = s;
    return LC_OK;
}

static int ref_forward(void *vs, lc_error *err)
{
    ref_state *s = vs;
    lstm_reference_tape_free(s->tape);
    s->tape = NULL;
    return lstm_reference_forward(s->p, &s->res, &s->tape, err) ? LC_ERROR : LC_OK;
}

static int ref_backward(void *vs, lc_error *err)
{
    ref_state *s = vs;
    if (!s->tape) {
        lc_error_set(err, "ref: backward called before forward");
        return LC_ERROR;
    }
    if (lstm_reference_backward(s->p, s->tape, &s->res, err))
        return LC_ERROR;
    s->backward_done = 1;
    return LC_OK;
}

static int ref_zero_grads(void *vs, lc_error *err)
{
    /* the reference overwrites its gradients on every backward pass */
    (void)vs;
    (void)err;
    return LC_OK;
}

static void copy_doubles(double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

static int ref_read_results(void *vs, lstm_results *r, lc_error *err)
{
    (void)err;
    ref_state *s = vs;
    const lstm_shape *sh = &s->p->shape;
    copy_doubles(r->y, s->res.y, lstm_seq_elems(sh, sh->hidden_size));
    copy_doubles(r->hy, s->res.hy, lstm_state_elems(sh));
    copy_doubles(r->cy, s->res.cy, lstm_state_elems(sh));
    if (!s->backward_done)
        return LC_OK;
    copy_doubles(r->dx, s->res.dx, lstm_seq_elems(sh, sh->input_size));
    copy_doubles(r->dh0, s->res.dh0, lstm_state_elems(sh));
    copy_doubles(r->dc0, s->res.dc0, lstm_state_elems(sh));
    for (int l = 0; l < sh->num_layers; l++) {
        copy_doubles(r->dw_ih[l], s->res.dw_ih[l], lstm_w_ih_elems(sh, l));
        copy_doubles(r->dw_hh[l], s->res.dw_hh[l], lstm_w_hh_elems(sh));
        copy_doubles(r->db_ih[l], s->res.db_ih[l], 4 * (size_t)sh->hidden_size);
        copy_doubles(r->db_hh[l], s->res.db_hh[l], 4 * (size_t)sh->hidden_size);
    }
    return LC_OK;
}

static size_t ref_peak_device_bytes(void *vs)
{
    (void)vs;
    return 0;
}

const runner_ops runner_ref_ops = {
    .name = "ref",
    .device = LC_DEVICE_CPU,
    .description = "the reference LSTM itself (double, plain loops), timed: the original's py",
    .caps = RUNNER_MULTILAYER | RUNNER_VARLEN | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = ref_available,
    .create = ref_create,
    .forward = ref_forward,
    .backward = ref_backward,
    .zero_grads = ref_zero_grads,
    .read_results = ref_read_results,
    .peak_device_bytes = ref_peak_device_bytes,
    .destroy = ref_destroy,
    .model = RUNNER_MODEL_OF(ref),
};
