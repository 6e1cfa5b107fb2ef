/* lstmcheck check: the numerics gate alone. Each GPU runner is gated in a
 * process of its own (isolate.h): a fault in one fails that one only. */
#include "commands.h"
#include "gate.h"
#include "isolate.h"
#include "session.h"

#include <stdio.h>
#include <string.h>

/* Gate every runner of one group on one context; counts into the totals. */
static void check_group(const session *s, const char *group, numerics_context *ctx,
                        const char *dump_dir, int *failed, int *skipped, int *passed)
{
    for (int i = 0; i < s->nrunners; i++) {
        if (strcmp(s->runners[i].group, group))
            continue;
        const runner_ops *r = s->runners[i].runner;
        gate_report rep;
        char line[1024];
        isolate_gate_run(r, ctx, dump_dir, &rep);
        gate_format_summary(r, &rep, line, sizeof line);
        printf("%s\n", line);
        fflush(stdout);
        if (rep.status == GATE_PASS) (*passed)++;
        else if (rep.status == GATE_SKIP) (*skipped)++;
        else (*failed)++;
    }
}

int cmd_check(const cli_options *o)
{
    session s;
    lc_error err = {{0}};
    int rc = session_setup(o, &s, &err);
    if (rc) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return rc;
    }
    int failed = 0, skipped = 0, passed = 0;
    numerics_context ctx;
    if (numerics_context_init(&ctx, &o->shape, o->seed, o->nlengths ? o->lengths : NULL, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return EXIT_USAGE;
    }
    check_group(&s, o->nlengths ? "vl_lstm" : "lstm", &ctx, o->dump_dir, &failed, &skipped, &passed);
    numerics_context_free(&ctx);
    if (s.vl_lengths) {
        printf("variable-length group: lengths %d..%d drawn from seed %llu, seqLength ignored\n",
               VL_MIN_LENGTH, VL_MAX_LENGTH, (unsigned long long)o->seed);
        if (numerics_context_init(&ctx, &s.vl_shape, o->seed, s.vl_lengths, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            session_free(&s);
            return EXIT_USAGE;
        }
        char vl_dump[4096];
        if (o->dump_dir)
            snprintf(vl_dump, sizeof vl_dump, "%s/vl_lstm", o->dump_dir);
        check_group(&s, "vl_lstm", &ctx, o->dump_dir ? vl_dump : NULL, &failed, &skipped, &passed);
        numerics_context_free(&ctx);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    session_free(&s);
    return failed ? EXIT_FAILED : skipped ? EXIT_SKIPPED : EXIT_OK;
}
