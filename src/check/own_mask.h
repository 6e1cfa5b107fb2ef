/* A runner with a dropout mask of its own (RUNNER_OWN_MASK: cuDNN's, in
 * cudnn_dropout) in the configuration its timing runs, at its model's
 * p > 0. On one layer nothing sits between layers: every result must be
 * the reference's at p = 0, by the gate's rule. On more, no reference has
 * its mask, and what can still be said is this: every result is finite;
 * layer 0's own recurrence meets no mask, so its final state (hy, cy of
 * layer 0) must be the reference's at p = 0; and y, which the masks
 * between layers feed, must move from the reference at p = 0, or the timed
 * configuration drops nothing and its time is of p = 0. None of that makes
 * its results checked at p > 0: every output still labels that timing
 * unchecked (runner_timing_unchecked). */
#ifndef LSTMCHECK_OWN_MASK_H
#define LSTMCHECK_OWN_MASK_H

#include "check/gate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements of layer 0's output (within their sequences) a mask must meet
 * for y's move to be judged: below, every element of a correct mask may be
 * kept (at p = 0.4, 0.6^64 ~ 6e-15). */
#define OWN_MASK_MIN_ELEMS 64
/* The share of y's elements a mask at p = 0.4 must move: each depends on H
 * or more of the mask's elements, so a correct one moves nearly all; fewer
 * than this says it drops nothing, or next to nothing. */
#define OWN_MASK_MIN_MOVED 0.5

typedef struct own_mask_effect {
    /* LC_OK: both hold; LC_FAILED: one does not; LC_UNSUPPORTED: not
     * judged here; LC_ERROR: the runner failed. reason says why. */
    lc_status status;
    double dropout;     /* the p it ran at */
    int layers;
    /* worst error / allowed against the reference at p = 0: of every
     * result on one layer, of layer 0's hy and cy on more */
    double ratio;
    double y_moved;     /* on more: the share of y's elements (within their sequences) beyond the allowance */
    char reason[512];
} own_mask_effect;

/* Run r once on the problem its timing runs (numerics_context_timed) and
 * judge both against the reference at p = 0 (numerics_context_get). */
void own_mask_effect_run(const runner_ops *r, numerics_context *c, own_mask_effect *out);
/* One line: "PASS <runner> at p=0.4 with its own mask: layer 0's state
 * within tolerance (ratio 0.03), y moved at 97% of its elements: dropout
 * took effect (its results stay unchecked at p > 0)", on one layer "...:
 * one layer, nothing to drop: every result within tolerance of nn.LSTM
 * (ratio 0.03)", or the failure or skip. */
void own_mask_effect_format(const runner_ops *r, const own_mask_effect *e, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
