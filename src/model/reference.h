/* The CPU reference LSTM: the oracle every runner is compared with.
 * Double accumulation, written for obviousness rather than speed; its
 * loops over sequences and weight rows are split over threads. */
#ifndef LSTMCHECK_REFERENCE_H
#define LSTMCHECK_REFERENCE_H

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Saved activations of a forward pass, consumed by the backward pass. */
typedef struct lstm_reference_tape lstm_reference_tape;

/* Forward: fills r->y, r->hy, r->cy. With tape != NULL the activations are
 * kept for lstm_reference_backward (free with lstm_reference_tape_free). */
int lstm_reference_forward(const lstm_problem *p, lstm_results *r,
                           lstm_reference_tape **tape, lc_error *err);

/* Backward through time for loss sum(y*dy) + sum(hy*dhy) + sum(cy*dcy)
 * (NULL seeds are zero): fills dx, dh0, dc0 and every parameter gradient
 * (overwritten, not accumulated). */
int lstm_reference_backward(const lstm_problem *p, const lstm_reference_tape *tape,
                            lstm_results *r, lc_error *err);

void lstm_reference_tape_free(lstm_reference_tape *tape);

/* How many threads the reference uses: exactly n, or with 0 (the default)
 * as many as a layer's work pays for, up to every processor it may use
 * (lstm_reference_threads() says how many that is). Its results are the
 * same bit for bit at any count (unit.reference_threads_bit_identical). */
void lstm_reference_set_threads(int n);
int lstm_reference_threads(void);

/* Forward and backward in one call (the common case). */
int lstm_reference_run(const lstm_problem *p, lstm_results *r, lc_error *err);

/* The same with a sample of FP32's roundings inside the recurrence, each
 * a factor 1 +- 2^-24 whose sign a hash of seed and the value's place
 * draws: the values a step carries forward (the gates' pre-activations
 * before LN_i and LN_h and their sum, the activations, the cell's two
 * products, the cell before LN_c, c, tanh(c) and h) and backward (dh and
 * dc, the cell's gradient before LN_c, the gates' gradients before and
 * after LN_i and LN_h), each LayerNorm's own values (mean, deviations,
 * variance, 1/sqrt(var + eps), normalized vector and output; backward d w
 * and its two means), and every sum of the GEMMs and the LayerNorms (four
 * partial sums, as a vectorized FP32 loop keeps, each rounded after every
 * term) and of the parameter gradients after each term. Not rounded: the
 * backward cell's own products (dgates is rounded as a whole). Its
 * distance from the exact run is what such roundings do to each result
 * (check/tolerance.h); the same seed gives the same sample at any thread
 * count. */
int lstm_reference_run_rounded(const lstm_problem *p, uint64_t seed, lstm_results *r, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
