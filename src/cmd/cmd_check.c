/* lstmcheck check: the numerics gate alone. Each GPU runner is gated in a
 * process of its own (isolate.h): a fault in one fails that one only. */
#include "cmd/commands.h"
#include "check/gate.h"
#include "check/isolate.h"
#include "cmd/session.h"

#include <stdio.h>

typedef struct check_counts {
    int passed, failed, skipped, errors;
    lc_status status; /* the worst so far (lc_status_worse) */
} check_counts;

/* Gate every runner of one group on one context; counts into c. */
static void check_group(const session *s, runner_group group, numerics_context *ctx, const char *dump_dir,
                        check_counts *c)
{
    for (int i = 0; i < s->nrunners; i++) {
        if (s->runners[i].group != group)
            continue;
        const runner_ops *r = s->runners[i].runner;
        gate_report rep;
        char line[1024];
        isolate_gate_run(r, ctx, dump_dir, &rep);
        gate_format_summary(r, &rep, line, sizeof line);
        printf("%s\n", line);
        const lstm_model *m = lstm_model_get(runner_checked_model(r));
        char unchecked[160];
        if (rep.status == LC_OK && m && m->dropout > 0 && ctx->shape.num_layers < 2)
            printf("note: %s computes the %s model, whose masks sit between layers: at one layer it is nn.LSTM "
                   "(--numLayers 2 or more checks the masks)\n", r->name, m->name);
        if (rep.status == LC_OK && runner_timing_unchecked(r, &ctx->shape, unchecked, sizeof unchecked))
            printf("note: %s was checked as nn.LSTM, at dropout p = 0; its timing is labelled: %s\n", r->name,
                   unchecked);
        fflush(stdout);
        if (rep.status == LC_OK) c->passed++;
        else if (rep.status == LC_UNSUPPORTED) c->skipped++;
        else if (rep.status == LC_FAILED) c->failed++;
        else c->errors++;
        c->status = lc_status_worse(c->status, rep.status);
    }
}

lc_status cmd_check(const cli_options *o)
{
    session s;
    lc_error err = {{0}};
    const session_request rq = session_request_from(o);
    lc_status rc = session_setup(&rq, &s, &err);
    if (rc) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return rc;
    }
    check_counts c = {0, 0, 0, 0, LC_OK};
    numerics_context ctx;
    if (numerics_context_init(&ctx, &o->shape, o->seed, o->nlengths ? o->lengths : NULL, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return LC_BAD_INPUT;
    }
    check_group(&s, o->nlengths ? RUNNER_GROUP_VL_LSTM : RUNNER_GROUP_LSTM, &ctx, o->dump_dir, &c);
    numerics_context_free(&ctx);
    if (s.vl_lengths) {
        printf("variable-length group: lengths %d..%d drawn from seed %llu, seqLength ignored\n",
               VL_MIN_LENGTH, VL_MAX_LENGTH, (unsigned long long)o->seed);
        if (numerics_context_init(&ctx, &s.vl_shape, o->seed, s.vl_lengths, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            session_free(&s);
            return LC_BAD_INPUT;
        }
        char vl_dump[4096];
        if (o->dump_dir)
            snprintf(vl_dump, sizeof vl_dump, "%s/vl_lstm", o->dump_dir);
        check_group(&s, RUNNER_GROUP_VL_LSTM, &ctx, o->dump_dir ? vl_dump : NULL, &c);
        numerics_context_free(&ctx);
    }
    printf("%d passed, %d failed, %d skipped, %d with an error\n", c.passed, c.failed, c.skipped, c.errors);
    session_free(&s);
    return c.status;
}
