/* The timing harness (see harness.h). */
#include "perf/harness.h"

#include "device/control.h"
#include "device/timer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double harness_median_rel_error(const sample_summary *s)
{
    if (s->n < 2 || s->median <= 0)
        return INFINITY;
    return 1.2533 * stats_robust_rel_spread(s) / sqrt((double)s->n);
}

void harness_result_free(harness_result *res)
{
    free(res->fwd_ms);
    free(res->bwd_ms);
    free(res->ctl_ms);
    memset(res, 0, sizeof *res);
}

void harness_result_summarize(harness_result *res)
{
    stats_summarize(res->fwd_ms, res->n, &res->fwd);
    stats_summarize(res->bwd_ms, res->n, &res->bwd);
    if (res->ctl_ms) {
        stats_summarize(res->ctl_ms, res->n, &res->ctl);
        double *ratio = malloc((size_t)(res->n ? res->n : 1) * sizeof *ratio);
        if (ratio) {
            for (int i = 0; i < res->n; i++)
                ratio[i] = res->ctl_ms[i] > 0 ? res->fwd_ms[i] / res->ctl_ms[i] : 0;
            stats_summarize(ratio, res->n, &res->fwd_ratio);
            for (int i = 0; i < res->n; i++)
                ratio[i] = res->ctl_ms[i] > 0 ? res->bwd_ms[i] / res->ctl_ms[i] : 0;
            stats_summarize(ratio, res->n, &res->bwd_ratio);
            free(ratio);
        }
    }
}

/* One iteration as the original's bench.py does it: forward timed,
 * backward timed, gradients zeroed outside the timed regions. The backward
 * seed dy was uploaded at create(): drawing it is outside the timing. */
static void push(const harness_hooks *h, const char *name)
{
    if (h && h->range_push)
        h->range_push(h->ctx, name);
}

static void pop(const harness_hooks *h)
{
    if (h && h->range_pop)
        h->range_pop(h->ctx);
}

/* The gradients are zeroed before the timed forward, outside the timed
 * regions, so that after an iteration its results stay readable: the
 * last iteration's are checked once the stopping rule has ended sampling. */
static int one_iteration(const runner_ops *r, void *state, device_timer *timer,
                         const harness_hooks *hooks, const char *label, double *fwd, double *bwd,
                         lc_error *err)
{
    int rc = 0;
    push(hooks, label);
    if (r->caps & RUNNER_BACKWARD)
        rc = r->zero_grads(state, err) != LC_OK;
    push(hooks, "forward");
    rc = rc || device_timer_start(timer, err) || r->forward(state, err) != LC_OK ||
         device_timer_stop(timer, fwd, err);
    pop(hooks);
    *bwd = 0;
    if (!rc && (r->caps & RUNNER_BACKWARD)) {
        push(hooks, "backward");
        rc = device_timer_start(timer, err) || r->backward(state, err) != LC_OK ||
             device_timer_stop(timer, bwd, err);
        pop(hooks);
    }
    pop(hooks);
    return rc;
}

/* Which timed iterations are compared with the reference: two drawn from
 * the clock and the process, unknown to the runner, one among those every
 * run takes (the first min) and one among all it may take (max: a run that
 * stops before it has its last checked anyway), and the last. */
typedef struct timed_checker {
    const gate_expected *expected; /* NULL: none compared */
    lstm_results got;
    int drawn[2];
} timed_checker;

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int checker_open(timed_checker *c, const gate_expected *expected, int min, int max, lc_error *err)
{
    memset(c, 0, sizeof *c);
    c->expected = expected;
    if (!expected)
        return 0;
    uint64_t state = (uint64_t)(wall_seconds() * 1e9) ^ ((uint64_t)getpid() << 32);
    c->drawn[0] = (int)(splitmix64(&state) % (uint64_t)min);
    c->drawn[1] = (int)(splitmix64(&state) % (uint64_t)max);
    return lstm_results_alloc(&c->got, &expected->reference->shape, expected->reference->model, err);
}

static void checker_close(timed_checker *c)
{
    if (c->expected)
        lstm_results_free(&c->got);
}

/* Iteration i's results (of n so far) read back and compared: LC_OK,
 * LC_FAILED (res->timed_check says where) or LC_ERROR. */
static lc_status check_iteration(const runner_ops *r, void *state, timed_checker *c, int i, harness_result *res,
                                 lc_error *err)
{
    /* NaN until the runner writes it, as in the gate */
    lstm_results_fill(&c->got, NAN);
    if (r->read_results(state, &c->got, err) != LC_OK)
        return LC_ERROR;
    gate_compare(r, c->expected, &c->got, gate_views(r), &res->timed_check);
    res->checked++;
    snprintf(res->timed_check.reason, sizeof res->timed_check.reason, "timed iteration %d", i + 1);
    if (res->timed_check.status == LC_OK)
        return LC_OK;
    char line[1024];
    gate_format_summary(r, &res->timed_check, line, sizeof line);
    lc_error_set(err, "%s", line);
    return res->timed_check.status;
}

/* Warm-up: at most a quarter of the budget, but at least one iteration. */
static int warm_up(const runner_ops *r, void *state, device_timer *timer, control_workload *control,
                   const harness_config *cfg, double start, harness_result *res, lc_error *err)
{
    double fwd, bwd, ctl;
    for (int i = 0; i < cfg->warmup; i++) {
        if (i > 0 && cfg->time_budget_s > 0 && wall_seconds() - start > 0.25 * cfg->time_budget_s)
            break;
        char label[96];
        snprintf(label, sizeof label, "%s warmup %d", r->name, i);
        if (one_iteration(r, state, timer, cfg->hooks, label, &fwd, &bwd, err) ||
            (control && control_run(control, &ctl, err)))
            return 1;
        res->warmup_done++;
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, "warmup", i + 1, cfg->warmup);
    }
    return 0;
}

/* 1 when the stopping rule ends sampling after res->n samples. */
static int enough_samples(const runner_ops *r, const harness_config *cfg, int min, int max, double start,
                          harness_result *res)
{
    if (res->n >= max)
        return 1;
    if (res->n < min)
        return 0;
    if (cfg->time_budget_s > 0 && wall_seconds() - start > cfg->time_budget_s) {
        res->budget_hit = 1;
        return 1;
    }
    if (cfg->target_rel_error > 0) {
        harness_result_summarize(res);
        const int fwd_ok = harness_median_rel_error(&res->fwd) < cfg->target_rel_error;
        const int bwd_ok = !(r->caps & RUNNER_BACKWARD) || harness_median_rel_error(&res->bwd) < cfg->target_rel_error;
        res->converged = fwd_ok && bwd_ok;
    }
    return res->converged;
}

/* Samples until the stopping rule ends them, the drawn iterations and the
 * last compared with the reference. */
static lc_status sample(const runner_ops *r, void *state, device_timer *timer, control_workload *control,
                        const harness_config *cfg, int min, int max, double start, timed_checker *chk,
                        harness_result *res, lc_error *err)
{
    for (;;) {
        const int i = res->n;
        char label[96];
        snprintf(label, sizeof label, "%s iteration %d", r->name, i);
        if (one_iteration(r, state, timer, cfg->hooks, label, &res->fwd_ms[i], &res->bwd_ms[i], err) ||
            (control && control_run(control, &res->ctl_ms[i], err)))
            return LC_ERROR;
        res->n++;
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, "sample", res->n, max);
        const int last = enough_samples(r, cfg, min, max, start, res);
        lc_status st = LC_OK;
        if (chk->expected && (i == chk->drawn[0] || i == chk->drawn[1] || last))
            st = check_iteration(r, state, chk, i, res, err);
        if (st != LC_OK || last)
            return st;
    }
}

/* 1 when the runner changed the copy of the inputs it was given (used):
 * err says what, in the gate's words. */
static int inputs_changed(const runner_ops *r, const lstm_problem *given, const lstm_problem *used, lc_error *err)
{
    lc_error what = {{0}};
    if (!gate_inputs_changed(given, used, &what))
        return 0;
    lc_error_set(err, "%s " GATE_CHANGED_INPUTS ": %s", r->name, what.msg);
    return 1;
}

lc_status harness_run(const runner_ops *r, const lstm_problem *p, const harness_config *cfg,
                      harness_result *res, lc_error *err)
{
    memset(res, 0, sizeof *res);
    if (runner_timing_unchecked(r, &p->shape, res->unchecked, sizeof res->unchecked) && cfg->expected) {
        lc_error_set(err, "internal: %s's timed results cannot be compared with a reference (%s)", r->name,
                     res->unchecked);
        return LC_ERROR;
    }
    int max = cfg->max_samples > 0 ? cfg->max_samples : 1;
    int min = cfg->min_samples < 1 ? 1 : cfg->min_samples;
    if (min > max)
        min = max;
    res->fwd_ms = calloc((size_t)max, sizeof(double));
    res->bwd_ms = calloc((size_t)max, sizeof(double));
    if (cfg->with_control)
        res->ctl_ms = calloc((size_t)max, sizeof(double));
    if (!res->fwd_ms || !res->bwd_ms || (cfg->with_control && !res->ctl_ms)) {
        lc_error_set(err, "out of host memory for %d samples", max);
        harness_result_free(res);
        return LC_ERROR;
    }
    device_timer *timer = NULL;
    control_workload *control = NULL;
    void *state = NULL;
    timed_checker chk;
    /* the runner's own copy of the inputs, made before anything is timed:
     * one that writes them spoils only this copy, and fails (as in the gate) */
    lstm_problem own = {0};
    lc_status rc = LC_ERROR;
    double start = wall_seconds();
    if (checker_open(&chk, cfg->expected, min, max, err) || device_timer_create(r->device, &timer, err) ||
        lstm_problem_copy(&own, p, err))
        goto done;
    if (cfg->with_control) {
        if (control_create(r->device, &control, err))
            goto done;
        snprintf(res->control_name, sizeof res->control_name, "%s", control_describe(control));
    }
    if (r->create(r, &own, &state, err) != LC_OK) {
        state = NULL;
        goto done;
    }
    if (warm_up(r, state, timer, control, cfg, start, res, err))
        goto done;
    rc = sample(r, state, timer, control, cfg, min, max, start, &chk, res, err);
    if (rc != LC_ERROR && inputs_changed(r, p, &own, err))
        rc = LC_ERROR; /* what it computed came from inputs it changed */
    if (rc == LC_OK) {
        res->peak_device_bytes = r->peak_device_bytes(state);
        harness_result_summarize(res);
    }
done:
    if (state)
        r->destroy(state);
    lstm_problem_free(&own);
    checker_close(&chk);
    control_destroy(control);
    device_timer_destroy(timer);
    res->elapsed_s = wall_seconds() - start;
    if (rc != LC_OK) {
        /* keep the error and where the results differed; drop the samples */
        const double el = res->elapsed_s;
        const gate_report check = res->timed_check;
        const int checked = res->checked;
        char unchecked[sizeof res->unchecked];
        memcpy(unchecked, res->unchecked, sizeof unchecked);
        harness_result_free(res);
        res->elapsed_s = el;
        res->timed_check = check;
        res->checked = checked;
        memcpy(res->unchecked, unchecked, sizeof unchecked);
    }
    return rc;
}
