/* --dump: one gated case as files that anyone can read without this
 * program. Every tensor (inputs, the reference's and the runner's results)
 * is a .npy file (and, for a model that measures its sensitivity, the
 * reference on the moved inputs); index.json says what each file is and holds everything
 * else needed to recompute the case: the shape, seed and lengths, which
 * outputs were seeded and the loss they define, and the tolerance rule with
 * its parameters and the gate's verdict per tensor. */
#ifndef LSTMCHECK_DUMP_H
#define LSTMCHECK_DUMP_H

#include "check/gate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one dump holds: a runner's run on a context's inputs, judged. */
typedef struct dump_case {
    const runner_ops *runner;
    const numerics_context *context;
    const lstm_problem *problem;
    const gate_expected *expected; /* the reference, and its moved twin where the model has one */
    const lstm_results *result;
    unsigned views;          /* the tensors compared (LSTM_VIEWS_ mask) */
    const gate_report *report;
} dump_case;

/* The case under root/<runner>/ (made as needed). 0, or 1 with err. */
int dump_write(const char *root, const dump_case *dc, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
