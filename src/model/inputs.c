/* Seeded, machine-independent input generation (see inputs.h). */
#include "model/inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void lc_rng_init(lc_rng *r, uint64_t seed, int kind, int layer)
{
    /* distinct odd multipliers keep the streams of (kind, layer) apart */
    r->state = seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)kind << 48) ^
               ((uint64_t)(uint32_t)layer * 0xD1B54A32D192ED03ull);
    lc_rng_next(r);
}

uint64_t lc_rng_next(lc_rng *r)
{
    return lc_hash64(r->state += 0x9E3779B97F4A7C15ull);
}

uint64_t lc_hash64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double lc_rng_uniform(lc_rng *r)
{
    return (double)(lc_rng_next(r) >> 40) * (1.0 / 16777216.0);
}

double lc_rng_normal(lc_rng *r)
{
    /* the integer sum is exact; one scaling by a power of two is exact too */
    uint64_t sum = 0;
    for (int i = 0; i < 12; i++)
        sum += lc_rng_next(r) >> 40;
    return (double)sum * (1.0 / 16777216.0) - 6.0;
}

int lc_rng_int(lc_rng *r, int lo, int hi)
{
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return lo + (int)(lc_rng_next(r) % span);
}

/* uniform(center - half, center + half) */
static void fill_uniform_around(float *dst, size_t n, double center, double half, uint64_t seed, int kind,
                                int layer)
{
    lc_rng r;
    lc_rng_init(&r, seed, kind, layer);
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)(center + (2.0 * lc_rng_uniform(&r) - 1.0) * half);
}

static void fill_normal(float *dst, size_t n, uint64_t seed, int kind, int layer)
{
    lc_rng r;
    lc_rng_init(&r, seed, kind, layer);
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)lc_rng_normal(&r);
}

static float *normal_tensor(size_t n, uint64_t seed, int kind, lc_error *err)
{
    float *t = malloc(n * sizeof *t);
    if (!t) {
        lc_error_set(err, "out of host memory for a backward seed (%zu floats)", n);
        return NULL;
    }
    fill_normal(t, n, seed, kind, -1);
    return t;
}

/* 0 where the element's uniform draw is below p (probability
 * ceil(p 2^24) / 2^24), else 1/(1-p) rounded to float once: the kept
 * elements' scale, as PyTorch's dropout multiplies by */
static void fill_dropout_mask(float *dst, size_t n, double p, uint64_t seed, int kind, int layer)
{
    lc_rng r;
    lc_rng_init(&r, seed, kind, layer);
    const float kept = (float)(1.0 / (1.0 - p));
    for (size_t i = 0; i < n; i++)
        dst[i] = lc_rng_uniform(&r) < p ? 0.0f : kept;
}

int lstm_inputs_generate(lstm_problem *p, uint64_t seed, unsigned seeds, lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const lstm_model *m = lstm_model_get(p->model);
    double bound = 1.0 / sqrt((double)s->hidden_size);
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        for (int l = 0; l < model_tensor_layers(t, s); l++) {
            float *dst = model_tensor_inputs(t, p)[l];
            const size_t n = model_tensor_elems(t, s, l);
            if (t->draw == DRAW_DROPOUT_MASK)
                fill_dropout_mask(dst, n, m->dropout, seed, t->stream, l);
            else if (t->draw == DRAW_LN_WEIGHT)
                fill_uniform_around(dst, n, 1.0, 0.5, seed, t->stream, l);
            else if (t->draw == DRAW_LN_BIAS)
                fill_uniform_around(dst, n, 0.0, 0.5, seed, t->stream, l);
            else
                fill_uniform_around(dst, n, 0.0, bound, seed, t->stream, l);
        }
    }
    fill_normal(p->x, lstm_seq_elems(s, s->input_size), seed, INPUT_X, -1);
    fill_normal(p->h0, lstm_state_elems(s), seed, INPUT_H0, -1);
    fill_normal(p->c0, lstm_state_elems(s), seed, INPUT_C0, -1);
    free(p->dy); free(p->dhy); free(p->dcy);
    p->dy = p->dhy = p->dcy = NULL;
    if ((seeds & SEED_DY) &&
        !(p->dy = normal_tensor(lstm_seq_elems(s, s->hidden_size), seed, INPUT_DY, err)))
        return 1;
    if ((seeds & SEED_DHY) && !(p->dhy = normal_tensor(lstm_state_elems(s), seed, INPUT_DHY, err)))
        return 1;
    if ((seeds & SEED_DCY) && !(p->dcy = normal_tensor(lstm_state_elems(s), seed, INPUT_DCY, err)))
        return 1;
    return 0;
}

/* each element one ulp toward +inf or -inf, one draw's low bit each */
static void move_by_ulp(float *dst, size_t n, uint64_t seed, int which)
{
    lc_rng r;
    lc_rng_init(&r, seed, INPUT_MOVE_SIGNS, which);
    for (size_t i = 0; i < n; i++)
        dst[i] = nextafterf(dst[i], (lc_rng_next(&r) & 1) ? INFINITY : -INFINITY);
}

uint64_t lstm_moved_seed(uint64_t seed, int draw)
{
    return draw ? lc_hash64(seed + (uint64_t)draw * 0x9E3779B97F4A7C15ull) : seed;
}

void lstm_inputs_move(lstm_problem *p, uint64_t seed)
{
    const lstm_shape *s = &p->shape;
    const lstm_model *m = lstm_model_get(p->model);
    int which = 0;
    move_by_ulp(p->x, lstm_seq_elems(s, s->input_size), seed, which++);
    move_by_ulp(p->h0, lstm_state_elems(s), seed, which++);
    move_by_ulp(p->c0, lstm_state_elems(s), seed, which++);
    const struct { float *data; size_t n; } seeds[] = {
        {p->dy, lstm_seq_elems(s, s->hidden_size)}, {p->dhy, lstm_state_elems(s)}, {p->dcy, lstm_state_elems(s)}};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++, which++)
        if (seeds[k].data)
            move_by_ulp(seeds[k].data, seeds[k].n, seed, which);
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        for (int l = 0; t->has_grad && l < model_tensor_layers(t, s); l++)
            move_by_ulp(model_tensor_inputs(t, p)[l], model_tensor_elems(t, s, l), seed, which++);
    }
}

int lstm_inputs_set_lengths(lstm_problem *p, const int *lengths, int count, lc_error *err)
{
    if (count != p->shape.batch) {
        lc_error_set(err, "%d lengths given for a batch of %d", count, p->shape.batch);
        return 1;
    }
    int longest = 0;
    for (int b = 0; b < count; b++) {
        if (lengths[b] < 1 || lengths[b] > p->shape.seq_length) {
            lc_error_set(err, "length %d of sequence %d is outside 1..%d", lengths[b], b,
                         p->shape.seq_length);
            return 1;
        }
        if (lengths[b] > longest)
            longest = lengths[b];
    }
    int *copy = malloc((size_t)count * sizeof *copy);
    if (!copy) {
        lc_error_set(err, "out of host memory for lengths");
        return 1;
    }
    memcpy(copy, lengths, (size_t)count * sizeof *copy);
    free(p->lengths);
    p->lengths = copy;
    (void)longest; /* tensors stay sized by seq_length: padding past the longest is zero */
    return 0;
}

int lstm_inputs_lengths(lstm_problem *p, uint64_t seed, int lo, int hi, lc_error *err)
{
    if (lo < 1 || hi < lo || hi > p->shape.seq_length) {
        lc_error_set(err, "length range %d..%d does not fit in 1..%d", lo, hi, p->shape.seq_length);
        return 1;
    }
    int *len = malloc((size_t)p->shape.batch * sizeof *len);
    if (!len) {
        lc_error_set(err, "out of host memory for lengths");
        return 1;
    }
    lc_rng r;
    lc_rng_init(&r, seed, INPUT_LENGTHS, -1);
    for (int b = 0; b < p->shape.batch; b++)
        len[b] = lc_rng_int(&r, lo, hi);
    int rc = lstm_inputs_set_lengths(p, len, p->shape.batch, err);
    free(len);
    return rc;
}
