/* The timing harness (see harness.h). */
#include "perf/harness.h"

#include "device/control.h"
#include "device/timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int one_iteration(const runner_ops *r, void *state, device_timer *timer,
                         const harness_hooks *hooks, const char *label, double *fwd, double *bwd,
                         lc_error *err)
{
    int rc = 0;
    push(hooks, label);
    push(hooks, "forward");
    rc = device_timer_start(timer, err) || r->forward(state, err) != LC_OK ||
         device_timer_stop(timer, fwd, err);
    pop(hooks);
    *bwd = 0;
    if (!rc && (r->caps & RUNNER_BACKWARD)) {
        push(hooks, "backward");
        rc = device_timer_start(timer, err) || r->backward(state, err) != LC_OK ||
             device_timer_stop(timer, bwd, err);
        pop(hooks);
        rc = rc || r->zero_grads(state, err) != LC_OK;
    }
    pop(hooks);
    return rc;
}

int harness_run(const runner_ops *r, const lstm_problem *p, const harness_config *cfg,
                harness_result *res, lc_error *err)
{
    memset(res, 0, sizeof *res);
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
        return 1;
    }
    device_timer *timer = NULL;
    control_workload *control = NULL;
    void *state = NULL;
    int rc = 1;
    double start = wall_seconds();
    if (device_timer_create(r->device, &timer, err))
        goto done;
    if (cfg->with_control) {
        if (control_create(r->device, &control, err))
            goto done;
        snprintf(res->control_name, sizeof res->control_name, "%s", control_describe(control));
    }
    if (r->create(r, p, &state, err) != LC_OK) {
        state = NULL;
        goto done;
    }
    double fwd, bwd, ctl;
    /* warm-up: at most a quarter of the budget, but at least one iteration */
    for (int i = 0; i < cfg->warmup; i++) {
        if (i > 0 && cfg->time_budget_s > 0 && wall_seconds() - start > 0.25 * cfg->time_budget_s)
            break;
        char label[96];
        snprintf(label, sizeof label, "%s warmup %d", r->name, i);
        if (one_iteration(r, state, timer, cfg->hooks, label, &fwd, &bwd, err) ||
            (control && control_run(control, &ctl, err)))
            goto done;
        res->warmup_done++;
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, "warmup", i + 1, cfg->warmup);
    }
    while (res->n < max) {
        int i = res->n;
        char label[96];
        snprintf(label, sizeof label, "%s iteration %d", r->name, i);
        if (one_iteration(r, state, timer, cfg->hooks, label, &res->fwd_ms[i], &res->bwd_ms[i], err))
            goto done;
        if (control && control_run(control, &res->ctl_ms[i], err))
            goto done;
        res->n++;
        if (cfg->progress)
            cfg->progress(cfg->progress_ctx, "sample", res->n, max);
        if (res->n < min)
            continue;
        if (cfg->time_budget_s > 0 && wall_seconds() - start > cfg->time_budget_s) {
            res->budget_hit = res->n < max;
            break;
        }
        if (cfg->target_rel_error > 0) {
            harness_result_summarize(res);
            int fwd_ok = harness_median_rel_error(&res->fwd) < cfg->target_rel_error;
            int bwd_ok = !(r->caps & RUNNER_BACKWARD) ||
                         harness_median_rel_error(&res->bwd) < cfg->target_rel_error;
            if (fwd_ok && bwd_ok) {
                res->converged = 1;
                break;
            }
        }
    }
    res->peak_device_bytes = r->peak_device_bytes(state);
    harness_result_summarize(res);
    rc = 0;
done:
    if (state)
        r->destroy(state);
    control_destroy(control);
    device_timer_destroy(timer);
    res->elapsed_s = wall_seconds() - start;
    if (rc) {
        /* keep the error; drop the partial samples */
        double el = res->elapsed_s;
        harness_result_free(res);
        res->elapsed_s = el;
    }
    return rc;
}
