/* Runner "onednn": oneDNN's LSTM primitive (Intel's deep-learning
 * primitives, the library PyTorch's CPU LSTM calls through mkldnn where it
 * is enabled), FP32, forward_training and backward. The CPU twin of the
 * cudnn runner: a vendor LSTM through the whole checker on every machine.
 *
 * What oneDNN's documentation (dev_guide_rnn, v2.6) fixes, and what this
 * file does about it:
 * - gate order i, f, c~, o: PyTorch's i, f, g, o, so no gate is moved;
 * - one bias per gate (ldgo): b_ih + b_hh, summed at create; its gradient
 *   is both db_ih and db_hh;
 * - weights given as ldgoi (PyTorch's W_ih 4H x I and W_hh 4H x H as they
 *   are) and reordered once at create, outside the timed region, into the
 *   layout each primitive asks for (format any);
 * - several layers in one primitive only where a layer's input is as wide
 *   as its output: layer 0 alone when I != H, the others stacked;
 * - the backward accumulates the weight gradients (as PyTorch's .grad):
 *   zero_grads clears them; they are reordered back to ldgoi on read;
 * - x, y (tnc) and the states (ldnc) are PyTorch's layouts: no copy.
 * Threads: oneDNN runs on OpenMP; each call sets OpenMP's count to
 * OpenBLAS's, so every CPU runner of a process uses as many (docs/perf.md).
 * Built when CMake finds oneDNN 2.x (LSTMCHECK_WITH_ONEDNN); otherwise the
 * table stays in the roster and available() says why it is absent. */
#include "runners/runner.h"
#include "device/machine.h"
#include "device/openmp.h"
#include "device/trace.h"

#ifdef LSTMCHECK_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most two stacks of layers (layer 0 alone, then the others) */
#define MAX_STACKS 2
/* Memories one stack holds (23 at most: weights in two layouts, 17 other
 * arguments, 2 to read gradients through); arguments of a primitive (19
 * at most, the backward's) */
#define MAX_MEMS 32
#define MAX_ARGS 20

/* One primitive's execution: the primitive and its arguments */
typedef struct onednn_pass {
    dnnl_primitive_t prim;
    dnnl_exec_arg_t args[MAX_ARGS];
    int nargs;
} onednn_pass;

/* Layers [first, first + count) in one forward and one backward primitive */
typedef struct onednn_stack {
    int first, count, in; /* in: the width of its input */
    dnnl_primitive_desc_t fwd_pd, bwd_pd;
    onednn_pass fwd, bwd;
    dnnl_memory_t mems[MAX_MEMS]; /* every memory of the stack, to release */
    int nmems;
    dnnl_memory_t diff_w_layer, diff_w_iter; /* in the backward's layout */
    dnnl_memory_t dw_layer_given, dw_iter_given; /* on dw_layer, dw_iter */
    float *bias;                             /* b_ih + b_hh, ldgo */
    float *dw_layer, *dw_iter, *dbias;       /* gradients read back: ldgoi, ldgo */
} onednn_stack;

typedef struct onednn_state {
    const lstm_problem *p;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    onednn_stack stacks[MAX_STACKS];
    int nstacks;
    float *y, *between, *d_between; /* (T,B,H): top output; stack 0's output and its gradient */
    float *hy, *cy, *dx, *dh0, *dc0;
    float *zeros;                   /* a seed the problem leaves NULL */
    int backward_done;
} onednn_state;

/* Sets err from a oneDNN status. An error, even oneDNN's unimplemented:
 * the runner's caps promise every fixed-length FP32 shape. */
static int dnnl_failed(dnnl_status_t st, const char *what, lc_error *err)
{
    lc_error_set(err, "onednn: %s: dnnl_%s", what, dnnl_status2str(st));
    return LC_ERROR;
}
#define DNNL_TRY(call, what)                                                                                      \
    do {                                                                                                          \
        const dnnl_status_t st_ = (call);                                                                         \
        if (st_ != dnnl_success)                                                                                  \
            return dnnl_failed(st_, what, err);                                                                   \
    } while (0)

void onednn_describe_version(char *buf, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, n, "%d.%d.%d (built with %d.%d.%d)", v->major, v->minor, v->patch, DNNL_VERSION_MAJOR,
             DNNL_VERSION_MINOR, DNNL_VERSION_PATCH);
}

static int onednn_available(lc_error *why)
{
    if (dnnl_engine_get_count(dnnl_cpu) < 1) {
        lc_error_set(why, "oneDNN has no CPU engine here");
        return LC_UNSUPPORTED;
    }
    return LC_OK;
}

static void stack_release(onednn_stack *k)
{
    if (k->fwd.prim) dnnl_primitive_destroy(k->fwd.prim);
    if (k->bwd.prim) dnnl_primitive_destroy(k->bwd.prim);
    if (k->fwd_pd) dnnl_primitive_desc_destroy(k->fwd_pd);
    if (k->bwd_pd) dnnl_primitive_desc_destroy(k->bwd_pd);
    for (int i = 0; i < k->nmems; i++)
        dnnl_memory_destroy(k->mems[i]);
    free(k->bias); free(k->dw_layer); free(k->dw_iter); free(k->dbias);
}

static void onednn_destroy(void *vs)
{
    onednn_state *s = vs;
    if (!s)
        return;
    for (int i = 0; i < s->nstacks; i++)
        stack_release(&s->stacks[i]);
    if (s->stream) dnnl_stream_destroy(s->stream);
    if (s->engine) dnnl_engine_destroy(s->engine);
    free(s->y); free(s->between); free(s->d_between); free(s->hy); free(s->cy);
    free(s->dx); free(s->dh0); free(s->dc0); free(s->zeros);
    free(s);
}

/* A memory of md on handle (DNNL_MEMORY_ALLOCATE: oneDNN allocates it),
 * kept with the stack for release. */
static int stack_memory(onednn_state *s, onednn_stack *k, const dnnl_memory_desc_t *md, void *handle,
                        dnnl_memory_t *out, lc_error *err)
{
    if (k->nmems == MAX_MEMS) {
        lc_error_set(err, "onednn: internal: more than %d memories in a stack", MAX_MEMS);
        return LC_ERROR;
    }
    DNNL_TRY(dnnl_memory_create(out, md, s->engine, handle), "memory");
    k->mems[k->nmems++] = *out;
    return LC_OK;
}

static int bind(onednn_pass *pass, int arg, dnnl_memory_t m, lc_error *err)
{
    if (pass->nargs == MAX_ARGS) {
        lc_error_set(err, "onednn: internal: more than %d arguments to a primitive", MAX_ARGS);
        return LC_ERROR;
    }
    pass->args[pass->nargs++] = (dnnl_exec_arg_t){arg, m};
    return LC_OK;
}

/* from's contents into to, in to's layout (outside the timed region) */
static int reorder(onednn_state *s, dnnl_memory_t from, dnnl_memory_t to, lc_error *err)
{
    const dnnl_memory_desc_t *from_md, *to_md;
    DNNL_TRY(dnnl_memory_get_memory_desc(from, &from_md), "reorder");
    DNNL_TRY(dnnl_memory_get_memory_desc(to, &to_md), "reorder");
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&pd, from_md, s->engine, to_md, s->engine, NULL), "reorder");
    dnnl_status_t st = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    DNNL_TRY(st, "reorder");
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(prim, s->stream, 2, args);
    if (st == dnnl_success)
        st = dnnl_stream_wait(s->stream);
    dnnl_primitive_destroy(prim);
    DNNL_TRY(st, "reorder");
    return LC_OK;
}

/* A stack's descriptors: data and states in PyTorch's layouts (tnc, ldnc),
 * weights as given (ldgoi) and as the primitive likes them (any). */
typedef struct stack_mds {
    dnnl_memory_desc_t src_layer, dst_layer, iter, bias, w_layer, w_iter, w_layer_given, w_iter_given;
} stack_mds;

static int stack_mds_init(const lstm_shape *sh, const onednn_stack *k, stack_mds *m, lc_error *err)
{
    const dnnl_dim_t T = sh->seq_length, B = sh->batch, H = sh->hidden_size, n = k->count, in = k->in;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->src_layer, 3, (dnnl_dims_t){T, B, in}, dnnl_f32, dnnl_tnc), "x");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->dst_layer, 3, (dnnl_dims_t){T, B, H}, dnnl_f32, dnnl_tnc), "y");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->iter, 4, (dnnl_dims_t){n, 1, B, H}, dnnl_f32, dnnl_ldnc), "state");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->bias, 4, (dnnl_dims_t){n, 1, 4, H}, dnnl_f32, dnnl_ldgo), "bias");
    const dnnl_dims_t wl = {n, 1, in, 4, H}, wi = {n, 1, H, 4, H};
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->w_layer, 5, wl, dnnl_f32, dnnl_format_tag_any), "W_ih");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->w_iter, 5, wi, dnnl_f32, dnnl_format_tag_any), "W_hh");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->w_layer_given, 5, wl, dnnl_f32, dnnl_ldgoi), "W_ih");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&m->w_iter_given, 5, wi, dnnl_f32, dnnl_ldgoi), "W_hh");
    return LC_OK;
}

/* The descriptors of the forward (training) and backward primitives of a
 * stack: what they will allocate is known from them */
static int stack_descriptors(onednn_state *s, onednn_stack *k, const stack_mds *m, lc_error *err)
{
    const dnnl_memory_desc_t *x = &m->src_layer, *y = &m->dst_layer, *st = &m->iter, *b = &m->bias;
    const dnnl_memory_desc_t *wl = &m->w_layer, *wi = &m->w_iter;
    const dnnl_rnn_direction_t dir = dnnl_unidirectional_left2right;
    dnnl_rnn_desc_t fwd, bwd;
    DNNL_TRY(dnnl_lstm_forward_desc_init(&fwd, dnnl_forward_training, dir, x, st, st, wl, wi, b, y, st, st, 0),
             "LSTM forward");
    DNNL_TRY(dnnl_primitive_desc_create(&k->fwd_pd, &fwd, NULL, s->engine, NULL), "LSTM forward");
    DNNL_TRY(dnnl_lstm_backward_desc_init(&bwd, dnnl_backward, dir, x, st, st, wl, wi, b, y, st, st, x, st, st, wl,
                                          wi, b, y, st, st, 0),
             "LSTM backward");
    DNNL_TRY(dnnl_primitive_desc_create(&k->bwd_pd, &bwd, NULL, s->engine, k->fwd_pd), "LSTM backward");
    return LC_OK;
}

/* The primitives themselves: oneDNN allocates their scratch memory here,
 * so only after the count (onednn_build). */
static int stack_create_primitives(onednn_stack *k, lc_error *err)
{
    DNNL_TRY(dnnl_primitive_create(&k->fwd.prim, k->fwd_pd), "LSTM forward");
    DNNL_TRY(dnnl_primitive_create(&k->bwd.prim, k->bwd_pd), "LSTM backward");
    return LC_OK;
}

static const dnnl_memory_desc_t *arg_md(const_dnnl_primitive_desc_t pd, int arg)
{
    return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
}

/* Weights arg of the stack's layers (per_layer[l], elems each: ldgoi, as
 * PyTorch has them) side by side in a scratch copy, reordered into the
 * layout each pass asks for: one memory when both ask for the same. */
static int stack_weights_arg(onednn_state *s, onednn_stack *k, int arg, const dnnl_memory_desc_t *given_md,
                             float *const *per_layer, size_t elems, lc_error *err)
{
    float *given = malloc((size_t)k->count * elems * sizeof(float));
    if (!given) {
        lc_error_set(err, "onednn: out of host memory");
        return LC_ERROR;
    }
    for (int j = 0; j < k->count; j++)
        memcpy(given + (size_t)j * elems, per_layer[k->first + j], elems * sizeof(float));
    const dnnl_memory_desc_t *fwd_md = arg_md(k->fwd_pd, arg), *bwd_md = arg_md(k->bwd_pd, arg);
    dnnl_memory_t given_mem = NULL, fwd = NULL, bwd = NULL;
    const dnnl_status_t st = dnnl_memory_create(&given_mem, given_md, s->engine, given);
    int rc = st == dnnl_success ? LC_OK : dnnl_failed(st, "weights", err);
    if (rc == LC_OK) rc = stack_memory(s, k, fwd_md, DNNL_MEMORY_ALLOCATE, &fwd, err);
    if (rc == LC_OK) rc = reorder(s, given_mem, fwd, err);
    bwd = fwd;
    if (rc == LC_OK && !dnnl_memory_desc_equal(fwd_md, bwd_md)) {
        rc = stack_memory(s, k, bwd_md, DNNL_MEMORY_ALLOCATE, &bwd, err);
        if (rc == LC_OK) rc = reorder(s, given_mem, bwd, err);
    }
    if (given_mem)
        dnnl_memory_destroy(given_mem);
    free(given);
    if (rc == LC_OK) rc = bind(&k->fwd, arg, fwd, err);
    if (rc == LC_OK) rc = bind(&k->bwd, arg, bwd, err);
    return rc;
}

/* b_ih + b_hh of the stack's layers (ldgo); W_ih and W_hh in each pass's
 * layout; the memories their gradients are read back through. */
static int stack_weights(onednn_state *s, onednn_stack *k, const stack_mds *m, lc_error *err)
{
    const lstm_problem *p = s->p;
    const size_t H = (size_t)p->shape.hidden_size, H4 = 4 * H;
    for (int j = 0; j < k->count; j++)
        for (size_t g = 0; g < H4; g++)
            k->bias[j * H4 + g] = p->b_ih[k->first + j][g] + p->b_hh[k->first + j][g];
    int rc = stack_weights_arg(s, k, DNNL_ARG_WEIGHTS_LAYER, &m->w_layer_given, p->w_ih, H4 * (size_t)k->in, err);
    if (rc == LC_OK) rc = stack_weights_arg(s, k, DNNL_ARG_WEIGHTS_ITER, &m->w_iter_given, p->w_hh, H4 * H, err);
    if (rc == LC_OK) rc = stack_memory(s, k, &m->w_layer_given, k->dw_layer, &k->dw_layer_given, err);
    if (rc == LC_OK) rc = stack_memory(s, k, &m->w_iter_given, k->dw_iter, &k->dw_iter_given, err);
    return rc;
}

/* A seed of the problem at offset at, or zeros where it has none */
static void *seed_at(const onednn_state *s, const float *seed, size_t at)
{
    return seed ? (void *)(seed + at) : s->zeros;
}

/* Every other argument of the stack's passes: where each tensor lives.
 * The problem's inputs are given to oneDNN as they are: it only reads a
 * primitive's sources. */
static int stack_data(onednn_state *s, onednn_stack *k, const stack_mds *m, lc_error *err)
{
    const lstm_problem *p = s->p;
    const size_t at = (size_t)k->first * p->shape.batch * p->shape.hidden_size;
    const int bottom = k->first == 0, top = k == &s->stacks[s->nstacks - 1];
    enum { FWD = 1, BWD = 2 };
    const struct {
        int arg, passes;
        const dnnl_memory_desc_t *md;
        void *data;
    } args[] = {
        {DNNL_ARG_SRC_LAYER, FWD | BWD, &m->src_layer, bottom ? (void *)p->x : s->between},
        {DNNL_ARG_SRC_ITER, FWD | BWD, &m->iter, (void *)(p->h0 + at)},
        {DNNL_ARG_SRC_ITER_C, FWD | BWD, &m->iter, (void *)(p->c0 + at)},
        {DNNL_ARG_BIAS, FWD | BWD, &m->bias, k->bias},
        {DNNL_ARG_DST_LAYER, FWD | BWD, &m->dst_layer, top ? s->y : s->between},
        {DNNL_ARG_DST_ITER, FWD | BWD, &m->iter, s->hy + at},
        {DNNL_ARG_DST_ITER_C, FWD | BWD, &m->iter, s->cy + at},
        {DNNL_ARG_WORKSPACE, FWD | BWD, arg_md(k->fwd_pd, DNNL_ARG_WORKSPACE), DNNL_MEMORY_ALLOCATE},
        {DNNL_ARG_DIFF_SRC_LAYER, BWD, &m->src_layer, bottom ? s->dx : s->d_between},
        {DNNL_ARG_DIFF_SRC_ITER, BWD, &m->iter, s->dh0 + at},
        {DNNL_ARG_DIFF_SRC_ITER_C, BWD, &m->iter, s->dc0 + at},
        {DNNL_ARG_DIFF_BIAS, BWD, &m->bias, k->dbias},
        {DNNL_ARG_DIFF_DST_LAYER, BWD, &m->dst_layer, top ? seed_at(s, p->dy, 0) : s->d_between},
        {DNNL_ARG_DIFF_DST_ITER, BWD, &m->iter, seed_at(s, p->dhy, at)},
        {DNNL_ARG_DIFF_DST_ITER_C, BWD, &m->iter, seed_at(s, p->dcy, at)},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER, BWD, arg_md(k->bwd_pd, DNNL_ARG_DIFF_WEIGHTS_LAYER), DNNL_MEMORY_ALLOCATE},
        {DNNL_ARG_DIFF_WEIGHTS_ITER, BWD, arg_md(k->bwd_pd, DNNL_ARG_DIFF_WEIGHTS_ITER), DNNL_MEMORY_ALLOCATE},
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        dnnl_memory_t mem;
        const int rc = stack_memory(s, k, args[i].md, args[i].data, &mem, err);
        if (rc != LC_OK)
            return rc;
        if ((args[i].passes & FWD) && bind(&k->fwd, args[i].arg, mem, err) != LC_OK)
            return LC_ERROR;
        if ((args[i].passes & BWD) && bind(&k->bwd, args[i].arg, mem, err) != LC_OK)
            return LC_ERROR;
        if (args[i].arg == DNNL_ARG_DIFF_WEIGHTS_LAYER)
            k->diff_w_layer = mem;
        if (args[i].arg == DNNL_ARG_DIFF_WEIGHTS_ITER)
            k->diff_w_iter = mem;
    }
    return LC_OK;
}

/* Layer 0 alone when its input is not H wide and layers follow, then the
 * others in one stack; else all layers in one. */
static void plan_stacks(onednn_state *s)
{
    const lstm_shape *sh = &s->p->shape;
    const int apart = sh->input_size != sh->hidden_size && sh->num_layers > 1;
    s->nstacks = apart ? 2 : 1;
    s->stacks[0] = (onednn_stack){.first = 0, .count = apart ? 1 : sh->num_layers, .in = sh->input_size};
    if (apart)
        s->stacks[1] = (onednn_stack){.first = 1, .count = sh->num_layers - 1, .in = sh->hidden_size};
}

/* The stacks' host buffers (lstm_host_buffers: counted, or made). */
static void stack_buffers(onednn_state *s, lstm_host_buffers *hb)
{
    const lstm_shape *sh = &s->p->shape;
    const size_t T = (size_t)sh->seq_length, B = (size_t)sh->batch, H = (size_t)sh->hidden_size;
    const size_t state = lstm_state_elems(sh), seq = T * B * H;
    for (int i = 0; i < s->nstacks; i++) {
        onednn_stack *k = &s->stacks[i];
        const size_t n = (size_t)k->count;
        k->bias = lstm_host_floats(hb, n * 4 * H);
        k->dbias = lstm_host_floats(hb, n * 4 * H);
        k->dw_layer = lstm_host_floats(hb, n * 4 * H * (size_t)k->in);
        k->dw_iter = lstm_host_floats(hb, n * 4 * H * H);
    }
    s->y = lstm_host_floats(hb, seq);
    if (s->nstacks > 1) {
        s->between = lstm_host_floats(hb, seq);
        s->d_between = lstm_host_floats(hb, seq);
    }
    s->hy = lstm_host_floats(hb, state);
    s->cy = lstm_host_floats(hb, state);
    s->dh0 = lstm_host_floats(hb, state);
    s->dc0 = lstm_host_floats(hb, state);
    s->dx = lstm_host_floats(hb, lstm_seq_elems(sh, sh->input_size));
    s->zeros = lstm_host_floats(hb, seq > state ? seq : state);
}

/* What oneDNN will allocate for a stack once its primitives exist, into hb: the
 * workspace, the weights in each pass's layout and the copy they are
 * reordered from (stack_weights_arg), and the weight gradients in the
 * backward's layout. */
static void count_stack_library(const onednn_stack *k, size_t hidden, lstm_host_buffers *hb)
{
    lstm_host_count(hb, dnnl_memory_desc_get_size(arg_md(k->fwd_pd, DNNL_ARG_WORKSPACE)));
    const int weights[] = {DNNL_ARG_WEIGHTS_LAYER, DNNL_ARG_WEIGHTS_ITER};
    const int grads[] = {DNNL_ARG_DIFF_WEIGHTS_LAYER, DNNL_ARG_DIFF_WEIGHTS_ITER};
    for (int w = 0; w < 2; w++) {
        const dnnl_memory_desc_t *fwd_md = arg_md(k->fwd_pd, weights[w]), *bwd_md = arg_md(k->bwd_pd, weights[w]);
        lstm_host_count(hb, dnnl_memory_desc_get_size(fwd_md));
        if (!dnnl_memory_desc_equal(fwd_md, bwd_md))
            lstm_host_count(hb, dnnl_memory_desc_get_size(bwd_md));
        lstm_host_count(hb, dnnl_memory_desc_get_size(arg_md(k->bwd_pd, grads[w])));
    }
    const size_t widest = (size_t)k->in > hidden ? (size_t)k->in : hidden;
    lstm_host_count(hb, (size_t)k->count * 4 * hidden * widest * sizeof(float));
}

/* The largest scratch memory a pass of the stack asks for: oneDNN keeps
 * one scratch buffer for all primitives, as large as the largest one's. */
static size_t stack_scratch_bytes(const onednn_stack *k)
{
    const const_dnnl_primitive_desc_t pds[] = {k->fwd_pd, k->bwd_pd};
    size_t largest = 0;
    for (int i = 0; i < 2; i++) {
        int64_t scratch = 0;
        if (dnnl_primitive_desc_query(pds[i], dnnl_query_memory_consumption_s64, 0, &scratch) == dnnl_success &&
            scratch > 0 && (size_t)scratch > largest)
            largest = (size_t)scratch;
    }
    return largest;
}

static int onednn_zero_grads(void *vs, lc_error *err)
{
    onednn_state *s = vs;
    for (int i = 0; i < s->nstacks; i++) {
        onednn_stack *k = &s->stacks[i];
        const dnnl_memory_t grads[] = {k->diff_w_layer, k->diff_w_iter};
        for (int g = 0; g < 2; g++) {
            const dnnl_memory_desc_t *md;
            void *data;
            DNNL_TRY(dnnl_memory_get_memory_desc(grads[g], &md), "zero_grads");
            DNNL_TRY(dnnl_memory_get_data_handle(grads[g], &data), "zero_grads");
            memset(data, 0, dnnl_memory_desc_get_size(md));
        }
        memset(k->dbias, 0, (size_t)k->count * 4 * s->p->shape.hidden_size * sizeof(float));
    }
    return LC_OK;
}

static int onednn_build(onednn_state *s, lc_error *err)
{
    DNNL_TRY(dnnl_engine_create(&s->engine, dnnl_cpu, 0), "CPU engine");
    DNNL_TRY(dnnl_stream_create(&s->stream, s->engine, dnnl_stream_default_flags), "stream");
    plan_stacks(s);
    openmp_match_blas_threads();
    for (int i = 0; i < s->nstacks; i++) {
        stack_mds m;
        int rc = stack_mds_init(&s->p->shape, &s->stacks[i], &m, err);
        if (rc == LC_OK) rc = stack_descriptors(s, &s->stacks[i], &m, err);
        if (rc != LC_OK)
            return rc;
    }
    /* everything counted before anything large is allocated (the
     * primitives' scratch included: they are made after it): the
     * workspace and the padded layouts can outgrow what the session
     * checked for a runner */
    lstm_host_buffers count = {.counting = 1, .ok = 1};
    stack_buffers(s, &count);
    size_t scratch = 0;
    for (int i = 0; i < s->nstacks; i++) {
        count_stack_library(&s->stacks[i], (size_t)s->p->shape.hidden_size, &count);
        const size_t of_stack = stack_scratch_bytes(&s->stacks[i]);
        scratch = of_stack > scratch ? of_stack : scratch;
    }
    lstm_host_count(&count, scratch);
    const int fits = lstm_host_room(&s->p->shape, s->p->model, count.bytes, machine_host_memory_bytes(),
                                    "oneDNN's workspace, weights in its layouts and gradients", err);
    if (fits != LC_OK)
        return fits;
    lstm_host_buffers made = {.counting = 0, .ok = 1};
    stack_buffers(s, &made);
    if (!made.ok) {
        lc_error_set(err, "onednn: out of host memory");
        return LC_ERROR;
    }
    for (int i = 0; i < s->nstacks; i++) {
        onednn_stack *k = &s->stacks[i];
        stack_mds m;
        int rc = stack_mds_init(&s->p->shape, k, &m, err);
        if (rc == LC_OK) rc = stack_create_primitives(k, err);
        if (rc == LC_OK) rc = stack_weights(s, k, &m, err);
        if (rc == LC_OK) rc = stack_data(s, k, &m, err);
        if (rc != LC_OK)
            return rc;
    }
    return onednn_zero_grads(s, err);
}

static int onednn_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    (void)self;
    onednn_state *s = calloc(1, sizeof *s);
    if (!s) {
        lc_error_set(err, "onednn: out of host memory");
        return LC_ERROR;
    }
    s->p = p;
    const int rc = onednn_build(s, err);
    if (rc != LC_OK) {
        onednn_destroy(s);
        return rc;
    }
    *out = s;
    return LC_OK;
}

static int onednn_forward(void *vs, lc_error *err)
{
    onednn_state *s = vs;
    openmp_match_blas_threads();
    for (int i = 0; i < s->nstacks; i++) {
        const onednn_pass *f = &s->stacks[i].fwd;
        const uint64_t op_start = trace_op_begin();
        DNNL_TRY(dnnl_primitive_execute(f->prim, s->stream, f->nargs, f->args), "forward");
        trace_op_end("onednn.lstm_forward", op_start);
    }
    const uint64_t wait_start = trace_op_begin();
    DNNL_TRY(dnnl_stream_wait(s->stream), "forward");
    trace_op_end("onednn.stream_wait", wait_start);
    return LC_OK;
}

static int onednn_backward(void *vs, lc_error *err)
{
    onednn_state *s = vs;
    openmp_match_blas_threads();
    for (int i = s->nstacks - 1; i >= 0; i--) {
        const onednn_pass *b = &s->stacks[i].bwd;
        const uint64_t op_start = trace_op_begin();
        DNNL_TRY(dnnl_primitive_execute(b->prim, s->stream, b->nargs, b->args), "backward");
        trace_op_end("onednn.lstm_backward", op_start);
    }
    const uint64_t wait_start = trace_op_begin();
    DNNL_TRY(dnnl_stream_wait(s->stream), "backward");
    trace_op_end("onednn.stream_wait", wait_start);
    s->backward_done = 1;
    return LC_OK;
}

/* A stack's weight gradients, back in ldgoi and ldgo, into r per layer */
static int read_stack_grads(onednn_state *s, onednn_stack *k, lstm_results *r, lc_error *err)
{
    const size_t H = (size_t)s->p->shape.hidden_size, wl = 4 * H * (size_t)k->in, wi = 4 * H * H;
    int rc = reorder(s, k->diff_w_layer, k->dw_layer_given, err);
    if (rc == LC_OK)
        rc = reorder(s, k->diff_w_iter, k->dw_iter_given, err);
    if (rc != LC_OK)
        return rc;
    for (int j = 0; j < k->count; j++) {
        const int l = k->first + j;
        lstm_copy_to_double(r->dw_ih[l], k->dw_layer + j * wl, wl);
        lstm_copy_to_double(r->dw_hh[l], k->dw_iter + j * wi, wi);
        lstm_copy_to_double(r->db_ih[l], k->dbias + j * 4 * H, 4 * H);
        lstm_copy_to_double(r->db_hh[l], k->dbias + j * 4 * H, 4 * H);
    }
    return LC_OK;
}

static int onednn_read_results(void *vs, lstm_results *r, lc_error *err)
{
    onednn_state *s = vs;
    const lstm_shape *sh = &s->p->shape;
    lstm_copy_to_double(r->y, s->y, lstm_seq_elems(sh, sh->hidden_size));
    lstm_copy_to_double(r->hy, s->hy, lstm_state_elems(sh));
    lstm_copy_to_double(r->cy, s->cy, lstm_state_elems(sh));
    if (!s->backward_done)
        return LC_OK;
    lstm_copy_to_double(r->dx, s->dx, lstm_seq_elems(sh, sh->input_size));
    lstm_copy_to_double(r->dh0, s->dh0, lstm_state_elems(sh));
    lstm_copy_to_double(r->dc0, s->dc0, lstm_state_elems(sh));
    for (int i = 0; i < s->nstacks; i++) {
        const int rc = read_stack_grads(s, &s->stacks[i], r, err);
        if (rc != LC_OK)
            return rc;
    }
    return LC_OK;
}

static size_t onednn_peak_device_bytes(void *vs)
{
    (void)vs;
    return 0;
}

const runner_ops runner_onednn_ops = {
    .name = "onednn",
    .device = LC_DEVICE_CPU,
    .description = "oneDNN's LSTM primitive, FP32, forward_training + backward (weights reordered once at create)",
    .caps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = onednn_available,
    .create = onednn_create,
    .forward = onednn_forward,
    .backward = onednn_backward,
    .zero_grads = onednn_zero_grads,
    .read_results = onednn_read_results,
    .peak_device_bytes = onednn_peak_device_bytes,
    .destroy = onednn_destroy,
    .model = RUNNER_MODEL_OF(onednn),
};

#else /* not built: the roster keeps the runner, and says why it cannot run */

static int onednn_absent(lc_error *why)
{
    lc_error_set(why, "not built: %s", LSTMCHECK_ONEDNN_ABSENT);
    return LC_UNSUPPORTED;
}

void onednn_describe_version(char *buf, size_t n)
{
    snprintf(buf, n, "not built: %s", LSTMCHECK_ONEDNN_ABSENT);
}

/* never called: available() says no */
static int onednn_absent_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    (void)self, (void)p, (void)out;
    return onednn_absent(err);
}
static int onednn_absent_call(void *vs, lc_error *err)
{
    (void)vs;
    return onednn_absent(err);
}
static int onednn_absent_read(void *vs, lstm_results *r, lc_error *err)
{
    (void)vs, (void)r;
    return onednn_absent(err);
}
static size_t onednn_absent_bytes(void *vs)
{
    (void)vs;
    return 0;
}
static void onednn_absent_destroy(void *vs)
{
    (void)vs;
}

const runner_ops runner_onednn_ops = {
    .name = "onednn",
    .device = LC_DEVICE_CPU,
    .description = "oneDNN's LSTM primitive, FP32 (not in this build)",
    .caps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .available = onednn_absent,
    .create = onednn_absent_create,
    .forward = onednn_absent_call,
    .backward = onednn_absent_call,
    .zero_grads = onednn_absent_call,
    .read_results = onednn_absent_read,
    .peak_device_bytes = onednn_absent_bytes,
    .destroy = onednn_absent_destroy,
    .model = RUNNER_MODEL_OF(onednn),
};
#endif
