/* The seeded input generator. Algorithm (docs/inputs.md):
 * every tensor has its own SplitMix64 stream, started from
 * (seed, tensor kind, layer); a uniform draw is the top 24 bits of one output
 * as k * 2^-24; a normal draw is the Irwin-Hall sum of 12 uniforms minus 6.
 * Only integer arithmetic, exact double arithmetic and one correctly rounded
 * sqrt are used, so a seed gives bit-identical inputs on every machine. */
#ifndef LSTMCHECK_INPUTS_H
#define LSTMCHECK_INPUTS_H

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lc_rng {
    uint64_t state;
} lc_rng;

/* Tensor kinds: part of each stream's identity, fixed forever. */
enum {
    INPUT_W_IH = 1, INPUT_W_HH = 2, INPUT_B_IH = 3, INPUT_B_HH = 4,
    INPUT_X = 5, INPUT_H0 = 6, INPUT_C0 = 7, INPUT_DY = 8, INPUT_DHY = 9,
    INPUT_DCY = 10, INPUT_LENGTHS = 11, INPUT_DROPOUT_MASK = 12,
    INPUT_LN_I_WEIGHT = 13, INPUT_LN_I_BIAS = 14, INPUT_LN_H_WEIGHT = 15,
    INPUT_LN_H_BIAS = 16, INPUT_LN_C_WEIGHT = 17, INPUT_LN_C_BIAS = 18,
    INPUT_MOVE_SIGNS = 19,
};

void lc_rng_init(lc_rng *r, uint64_t seed, int kind, int layer);
uint64_t lc_rng_next(lc_rng *r);
/* SplitMix64's output function alone: a well-mixed hash of x (a draw
 * addressed by place rather than by order, the same on any thread). */
uint64_t lc_hash64(uint64_t x);
double lc_rng_uniform(lc_rng *r);          /* [0, 1), multiples of 2^-24 */
double lc_rng_normal(lc_rng *r);           /* mean 0, variance 1, in [-6, 6] */
int lc_rng_int(lc_rng *r, int lo, int hi); /* uniform in lo..hi inclusive */

/* Which backward seeds to draw. */
enum { SEED_DY = 1, SEED_DHY = 2, SEED_DCY = 4 };

/* Fill an allocated problem: its model's per-layer tensors as the model
 * says (weights uniform(-1/sqrt(H), 1/sqrt(H)), LayerNorm weights
 * uniform(1/2, 3/2) and biases uniform(-1/2, 1/2), dropout masks 0 with
 * the model's probability p, else (float)(1/(1-p))), x, h0, c0 and the
 * selected backward seeds N(0, 1). Seeds not selected stay NULL (zero). */
int lstm_inputs_generate(lstm_problem *p, uint64_t seed, unsigned seeds, lc_error *err);

/* Move every input the runner computes from (x, h0, c0, the backward
 * seeds drawn and every parameter; not masks) by one FP32 ulp, up or down
 * as the INPUT_MOVE_SIGNS stream of seed draws: the reference on the
 * moved inputs measures how far one rounding of each input moves the
 * exact answer (docs/tolerance.md). The seeds move too: a gradient that
 * is what cancellation leaves of its terms moves with each term. */
void lstm_inputs_move(lstm_problem *p, uint64_t seed);
/* The seed of draw k of the moved inputs and their rounding sample: seed
 * itself for draw 0, else lc_hash64(seed + k * 0x9E3779B97F4A7C15). */
uint64_t lstm_moved_seed(uint64_t seed, int draw);

/* Lengths uniform in lo..hi (the original's variable-length group uses
 * 30..99); sets p->lengths. hi must not exceed seq_length, which stays:
 * tensors remain (T, B, ...) and steps past a sequence's length are padding. */
int lstm_inputs_lengths(lstm_problem *p, uint64_t seed, int lo, int hi, lc_error *err);
/* Explicit lengths (copied), each in 1..seq_length. */
int lstm_inputs_set_lengths(lstm_problem *p, const int *lengths, int count, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
