/* Baseline measurement and comparison (see perf.h). */
#include "perf/perf.h"

#include "base/files.h"
#include "base/proc.h"

#include "device/timer.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LSTMCHECK_VERSION
#define LSTMCHECK_VERSION "unknown"
#endif

const perf_shape_set perf_shape_sets[] = {
#define PERF_SHAPE_SET(name, device, T, B, I, H, L)                                                 \
    {#name, LC_DEVICE_OF(device), {.seq_length = T, .batch = B, .input_size = I, .hidden_size = H, .num_layers = L}},
#include "perf/shape_sets.def"
#undef PERF_SHAPE_SET
    {NULL, LC_DEVICE_CPU, {0, 0, 0, 0, 0}},
};

const perf_shape_set *perf_find_shape_set(lc_device device, const char *name)
{
    for (int i = 0; perf_shape_sets[i].name; i++)
        if (perf_shape_sets[i].device == device && !strcmp(perf_shape_sets[i].name, name))
            return &perf_shape_sets[i];
    return NULL;
}

int perf_matrix_size(lc_device device)
{
    int runners = 0, sets = 0;
    for (int i = 0; lstm_runners[i]; i++)
        runners += lstm_runners[i]->device == (int)device && (runner_roles(lstm_runners[i]) & ROLE_PERF);
    for (int i = 0; perf_shape_sets[i].name; i++)
        sets += perf_shape_sets[i].device == device;
    return runners * sets;
}

void openblas_set_num_threads(int n);

void perf_prepare_device(lc_device device)
{
    /* A fixed mmap threshold: glibc otherwise raises it after the first
     * large free, so a runner's buffers came from fresh pages or from the
     * reused heap depending on what the process measured before; the
     * reference ran 11% slower measured after another shape than alone. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    if (device == LC_DEVICE_CPU)
        openblas_set_num_threads(PERF_CPU_BLAS_THREADS);
}

void perf_default_settings(lc_device device, perf_settings *s)
{
    memset(s, 0, sizeof *s);
    const int cuda = device == LC_DEVICE_CUDA;
    s->warmup = cuda ? PERF_CUDA_WARMUP : PERF_CPU_WARMUP;
    s->min_samples = cuda ? PERF_CUDA_MIN_SAMPLES : PERF_CPU_MIN_SAMPLES;
    s->max_samples = cuda ? PERF_CUDA_MAX_SAMPLES : PERF_CPU_MAX_SAMPLES;
    s->target_rel_error = 0.003;
    s->round_budget_s = cuda ? PERF_CUDA_ROUND_BUDGET_S : PERF_CPU_ROUND_BUDGET_S;
    s->baseline_rounds = 5;
    s->compare_budget_s = cuda ? 60 : 60;
    s->drift_rounds = PERF_DRIFT_ROUNDS;
}

static lc_status measure_round_here(const runner_ops *r, const lstm_problem *p, const gate_expected *expected,
                                    const perf_settings *s, harness_result *res, lc_error *err)
{
    harness_config cfg = {
        .warmup = s->warmup,
        .min_samples = s->min_samples,
        .max_samples = s->max_samples,
        .target_rel_error = s->target_rel_error,
        .time_budget_s = s->round_budget_s,
        .with_control = 1,
        .expected = expected,
    };
    return harness_run(r, p, &cfg, res, err);
}

typedef struct round_header {
    lc_status rc;
    int n, warmup_done, budget_hit, converged;
    double elapsed_s;
    char control_name[96];
    char msg[512];
} round_header;

/* One CPU round in a child (proc_fork): what it measures, and where. */
typedef struct round_job {
    const runner_ops *r;
    const lstm_problem *p;
    const gate_expected *expected;
    const perf_settings *s;
    harness_result *res;
    lc_status rc;
    lc_error *err;
} round_job;

static int round_child(void *arg, int fd)
{
    const round_job *j = arg;
    harness_result hr;
    round_header h;
    memset(&h, 0, sizeof h);
    lc_error e = {{0}};
    h.rc = measure_round_here(j->r, j->p, j->expected, j->s, &hr, &e);
    if (!h.rc) {
        h.n = hr.n;
        h.warmup_done = hr.warmup_done;
        h.budget_hit = hr.budget_hit;
        h.converged = hr.converged;
        h.elapsed_s = hr.elapsed_s;
        snprintf(h.control_name, sizeof h.control_name, "%s", hr.control_name);
    }
    snprintf(h.msg, sizeof h.msg, "%s", e.msg);
    int bad = fd_write_all(fd, &h, sizeof h);
    if (!h.rc && !bad)
        bad = fd_write_all(fd, hr.fwd_ms, (size_t)hr.n * sizeof(double)) ||
              fd_write_all(fd, hr.bwd_ms, (size_t)hr.n * sizeof(double)) ||
              fd_write_all(fd, hr.ctl_ms, (size_t)hr.n * sizeof(double));
    return bad;
}

/* The round's result, once its child has ended: j->rc and j->res, or j->err. */
static int round_parent(void *arg, int fd, lc_error *unused)
{
    (void)unused;
    round_job *j = arg;
    harness_result *res = j->res;
    round_header h;
    if (fd_read_all(fd, &h, sizeof h)) {
        lc_error_set(j->err, "the measuring child process ended without a result");
        return 1;
    }
    if (h.rc) {
        h.msg[sizeof h.msg - 1] = 0;
        lc_error_set(j->err, "%s", h.msg);
        j->rc = h.rc == LC_FAILED ? LC_FAILED : LC_ERROR; /* the timed results differed: wrong, not an error */
        return 0;
    }
    res->n = h.n;
    res->fwd_ms = malloc((size_t)(h.n ? h.n : 1) * sizeof(double));
    res->bwd_ms = malloc((size_t)(h.n ? h.n : 1) * sizeof(double));
    res->ctl_ms = malloc((size_t)(h.n ? h.n : 1) * sizeof(double));
    if (!res->fwd_ms || !res->bwd_ms || !res->ctl_ms ||
        fd_read_all(fd, res->fwd_ms, (size_t)h.n * sizeof(double)) ||
        fd_read_all(fd, res->bwd_ms, (size_t)h.n * sizeof(double)) ||
        fd_read_all(fd, res->ctl_ms, (size_t)h.n * sizeof(double))) {
        lc_error_set(j->err, "the measuring child process sent a truncated result");
        harness_result_free(res);
        return 1;
    }
    res->warmup_done = h.warmup_done;
    res->budget_hit = h.budget_hit;
    res->converged = h.converged;
    res->elapsed_s = h.elapsed_s;
    snprintf(res->control_name, sizeof res->control_name, "%s", h.control_name);
    harness_result_summarize(res);
    j->rc = LC_OK;
    return 0;
}

/* A CPU round runs in a forked child: its buffers get fresh pages, as in a
 * new process, so the spread between rounds includes what changes from one
 * process to the next (the physical placement of the runner's memory).
 * Measured in one process, the reference's rounds agreed within 0.3-1.3%
 * while fresh processes differed by up to 4.7%. CUDA rounds stay in
 * process: a CUDA context does not survive fork(). */
static lc_status measure_round(const runner_ops *r, const lstm_problem *p, const gate_expected *expected,
                               const perf_settings *s, harness_result *res, lc_error *err)
{
    if (r->device != LC_DEVICE_CPU)
        return measure_round_here(r, p, expected, s, res, err);
    memset(res, 0, sizeof *res);
    round_job j = {r, p, expected, s, res, LC_ERROR, err};
    proc_outcome out;
    lc_error why = {{0}};
    proc_fork(PROC_CHILD_WORK, round_child, round_parent, &j, &out, &why);
    if (j.rc == LC_ERROR && (out.timed_out || out.signal || !out.started)) {
        char how[256];
        if (out.started)
            lc_error_set(err, "the measuring child process %s", proc_outcome_text(&out, how, sizeof how));
        else
            lc_error_set(err, "%s", why.msg);
    }
    return j.rc;
}

static int append(baseline_series *dst, const double *src, int n, lc_error *err)
{
    return baseline_series_append(dst, src, n, err);
}

static int append_ratios(baseline_series *dst, const double *num, const double *den, int n, lc_error *err)
{
    double *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) {
        lc_error_set(err, "out of memory");
        return 1;
    }
    for (int i = 0; i < n; i++)
        tmp[i] = num[i] / den[i];
    int rc = append(dst, tmp, n, err);
    free(tmp);
    return rc;
}

static int append_round(baseline_entry *e, const harness_result *res, lc_error *err)
{
    for (int i = 0; i < res->n; i++) {
        if (!(res->ctl_ms[i] > 0) || !(res->fwd_ms[i] > 0) || !(res->bwd_ms[i] > 0)) {
            lc_error_set(err, "a timing sample is zero or negative: the timer resolution is too coarse");
            return 1;
        }
    }
    return append(&e->fwd, res->fwd_ms, res->n, err) || append(&e->bwd, res->bwd_ms, res->n, err) ||
           append(&e->ctl, res->ctl_ms, res->n, err) ||
           append_ratios(&e->fwd_ratio, res->fwd_ms, res->ctl_ms, res->n, err) ||
           append_ratios(&e->bwd_ratio, res->bwd_ms, res->ctl_ms, res->n, err);
}

/* relative sd of values around their mean */
static double rel_sd(const double *v, int n)
{
    if (n < 2)
        return 0;
    double m = 0, ss = 0;
    for (int i = 0; i < n; i++)
        m += v[i];
    m /= n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    return m > 0 ? sqrt(ss / (n - 1)) / m : 0;
}

/* a plugin runner's qualified name fits a baseline entry's (runners/plugin.h) */
_Static_assert(sizeof(((baseline_entry *)0)->runner) > LSTMCHECK_QUALIFIED_NAME_MAX,
               "baseline_entry.runner must hold <plugin>:<runner>");

lc_status perf_measure_entry(const runner_ops *r, const lstm_problem *p, const gate_expected *expected,
                             unsigned long long seed, const perf_settings *s, baseline_entry *e, lc_error *err)
{
    memset(e, 0, sizeof *e);
    snprintf(e->runner, sizeof e->runner, "%s", r->name);
    e->shape = p->shape;
    e->seed = seed;
    snprintf(e->lstmcheck_version, sizeof e->lstmcheck_version, "%s", LSTMCHECK_VERSION);
    snprintf(e->git_commit, sizeof e->git_commit, "unknown"); /* the caller knows the tree */
    time_t now = time(NULL);
    strftime(e->date, sizeof e->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    runner_timing_unchecked(r, &p->shape, e->unchecked, sizeof e->unchecked);
    int rounds = s->baseline_rounds > 0 ? s->baseline_rounds : 1;
    double *med_f = calloc((size_t)rounds, sizeof *med_f), *med_b = calloc((size_t)rounds, sizeof *med_b);
    if (!med_f || !med_b) {
        free(med_f); free(med_b);
        lc_error_set(err, "out of memory");
        return 1;
    }
    for (int k = 0; k < rounds; k++) {
        harness_result res;
        const lc_status st = measure_round(r, p, expected, s, &res, err);
        if (st != LC_OK) {
            free(med_f); free(med_b);
            baseline_entry_free(e);
            return st;
        }
        snprintf(e->control, sizeof e->control, "%s", res.control_name);
        med_f[k] = res.fwd_ratio.median;
        med_b[k] = res.bwd_ratio.median;
        int rc = append_round(e, &res, err);
        harness_result_free(&res);
        if (rc) {
            free(med_f); free(med_b);
            baseline_entry_free(e);
            return LC_ERROR;
        }
    }
    e->rounds = rounds;
    /* run-to-run noise: the spread of the rounds' medians, each round a
     * fresh runner instance with its own warm-up */
    e->noise_fwd = rel_sd(med_f, rounds);
    e->noise_bwd = rel_sd(med_b, rounds);
    free(med_f);
    free(med_b);
    return 0;
}

verdict_kind perf_overall(const perf_comparison *c)
{
    return verdict_worse(c->fwd.kind, c->bwd.kind);
}

double perf_undecided_drift(const perf_comparison *c)
{
    const double f = c->fwd.kind == VERDICT_INCONCLUSIVE ? c->fwd.control_drift : 0;
    const double b = c->bwd.kind == VERDICT_INCONCLUSIVE ? c->bwd.control_drift : 0;
    return fabs(b) > fabs(f) ? b : f;
}

void perf_decide_recorded(const baseline_entry *base, const baseline_entry *cur, int comparisons,
                          verdict_result *fwd, verdict_result *bwd)
{
    sample_summary cb, cc;
    stats_summarize(base->ctl.samples, base->ctl.n, &cb);
    stats_summarize(cur->ctl.samples, cur->ctl.n, &cc);
    const double drift = cb.median > 0 ? cc.median / cb.median - 1 : 0;
    verdict_decide(base->fwd_ratio.samples, base->fwd_ratio.n, cur->fwd_ratio.samples, cur->fwd_ratio.n,
                   base->noise_fwd, comparisons, drift, fwd);
    verdict_decide(base->bwd_ratio.samples, base->bwd_ratio.n, cur->bwd_ratio.samples, cur->bwd_ratio.n,
                   base->noise_bwd, comparisons, drift, bwd);
}

/* measure() said the host cannot be measured now (why): a phase not
 * decided so far stays INCONCLUSIVE, for that reason; one decided keeps
 * its verdict (a SLOWER still needs its confirmation). */
static void undecided_here(verdict_result *v, int here, const lc_error *why)
{
    if (here > 1 && v->kind != VERDICT_INCONCLUSIVE)
        return;
    if (here == 1)
        memset(v, 0, sizeof *v);
    v->kind = VERDICT_INCONCLUSIVE;
    snprintf(v->reason, sizeof v->reason, "%s", why->msg);
}

/* 1 when the round just measured (cur's control samples from index
 * `from` on) has its own control median past the drift guard against the
 * base's (base_median), the same way as the comparison's drift so far
 * (pooled): the host was in the other state through that round too. */
static int round_drifted(double base_median, const baseline_entry *cur, int from, double pooled)
{
    const int n = cur->ctl.n - from;
    if (n < 1 || !(base_median > 0) || !(fabs(pooled) > VERDICT_MAX_CONTROL_DRIFT))
        return 0;
    sample_summary r;
    stats_summarize(cur->ctl.samples + from, n, &r);
    const double d = r.median / base_median - 1;
    return fabs(d) > VERDICT_MAX_CONTROL_DRIFT && (d > 0) == (pooled > 0);
}

/* Measure more into (base, cur) and decide, again while inconclusive and
 * within the budget (counted from start), and at least src->min_rounds
 * times: a budget that ended a decision before significance was possible
 * would make every real change INCONCLUSIVE. Against a recorded entry,
 * s->drift_rounds rounds in a row past the drift guard end it sooner:
 * more rounds in that state cannot decide (the guard holds every verdict
 * INCONCLUSIVE), and the caller's A/B, both sides measured in the present
 * state, can. */
static int decide_rounds(const perf_source *src, const perf_settings *s, int comparisons, double start,
                         baseline_entry *base, baseline_entry *cur, verdict_result *fwd, verdict_result *bwd,
                         int *rounds, lc_error *err)
{
    int drifted = 0; /* rounds in a row past the guard */
    sample_summary fixed_ctl = {0}; /* a recorded base's control, whose median each round's is held to */
    if (src->fixed_base && s->drift_rounds > 0)
        stats_summarize(src->fixed_base->ctl.samples, src->fixed_base->ctl.n, &fixed_ctl);
    for (int here = 1;; here++) {
        const int from = cur->ctl.n;
        const int st = src->measure(src->ctx, base, cur, err);
        if (st == LC_UNSUPPORTED) { /* the host cannot be measured now: nothing more is decided */
            undecided_here(fwd, here, err);
            undecided_here(bwd, here, err);
            return 0;
        }
        if (st)
            return st; /* LC_FAILED: a runner whose timed results differ, as the source said */
        (*rounds)++;
        perf_decide_recorded(base, cur, comparisons, fwd, bwd);
        drifted = round_drifted(fixed_ctl.median, cur, from, fwd->control_drift) ? drifted + 1 : 0;
        if ((fwd->kind != VERDICT_INCONCLUSIVE && bwd->kind != VERDICT_INCONCLUSIVE) ||
            (wall_seconds() - start > s->compare_budget_s && here >= src->min_rounds) ||
            (s->drift_rounds > 0 && drifted >= s->drift_rounds))
            return 0;
    }
}

/* One decision from fresh measurements: a recorded base is copied (its
 * arrays borrowed, never grown), a measured one starts empty. */
static int decide_fresh(const perf_source *src, const perf_settings *s, int comparisons, baseline_entry *base,
                        baseline_entry *cur, verdict_result *fwd, verdict_result *bwd, int *rounds, lc_error *err)
{
    memset(base, 0, sizeof *base);
    memset(cur, 0, sizeof *cur);
    if (src->fixed_base)
        *base = *src->fixed_base;
    return decide_rounds(src, s, comparisons, wall_seconds(), base, cur, fwd, bwd, rounds, err);
}

static void free_measured(const perf_source *src, baseline_entry *base, baseline_entry *cur)
{
    if (!src->fixed_base)
        baseline_entry_free(base);
    baseline_entry_free(cur);
}

static void decided_on(const baseline_series *base, const baseline_series *cur, double noise,
                       perf_decided_on *on)
{
    stats_summarize(base->samples, base->n, &on->base);
    stats_summarize(cur->samples, cur->n, &on->cur);
    on->noise = noise;
}

/* An independent measurement decided on its own, for each phase called
 * SLOWER: the confirmation's verdict and distributions replace the first. */
static int confirm_slower(const perf_source *src, const perf_settings *s, int comparisons, perf_comparison *out,
                          lc_error *err)
{
    baseline_entry cb, cc;
    verdict_result vf, vb;
    int rc = decide_fresh(src, s, comparisons, &cb, &cc, &vf, &vb, &out->rounds, err);
    if (!rc && out->fwd.kind == VERDICT_SLOWER)
        decided_on(&cb.fwd_ratio, &cc.fwd_ratio, cb.noise_fwd, &out->on_fwd);
    if (!rc && out->bwd.kind == VERDICT_SLOWER)
        decided_on(&cb.bwd_ratio, &cc.bwd_ratio, cb.noise_bwd, &out->on_bwd);
    free_measured(src, &cb, &cc);
    if (rc)
        return rc;
    verdict_confirm(&out->fwd, &vf);
    verdict_confirm(&out->bwd, &vb);
    return 0;
}

int perf_compare_source(const perf_source *src, const perf_settings *s, int comparisons, perf_comparison *out,
                        lc_error *err)
{
    memset(out, 0, sizeof *out);
    baseline_entry base, cur;
    double start = wall_seconds();
    int rc = decide_fresh(src, s, comparisons, &base, &cur, &out->fwd, &out->bwd, &out->rounds, err);
    if (rc) {
        free_measured(src, &base, &cur);
        return rc;
    }
    decided_on(&base.fwd_ratio, &cur.fwd_ratio, base.noise_fwd, &out->on_fwd);
    decided_on(&base.bwd_ratio, &cur.bwd_ratio, base.noise_bwd, &out->on_bwd);
    /* a SLOWER is confirmed with independent measurements, decided on
     * their own (with a budget of their own) */
    if ((out->fwd.kind == VERDICT_SLOWER || out->bwd.kind == VERDICT_SLOWER) &&
        (rc = confirm_slower(src, s, comparisons, out, err))) {
        free_measured(src, &base, &cur);
        return rc;
    }
    out->samples = cur.fwd.n;
    stats_summarize(base.fwd.samples, base.fwd.n, &out->base_fwd);
    stats_summarize(base.bwd.samples, base.bwd.n, &out->base_bwd);
    stats_summarize(cur.fwd.samples, cur.fwd.n, &out->cur_fwd);
    stats_summarize(cur.bwd.samples, cur.bwd.n, &out->cur_bwd);
    out->raw_change_fwd = out->base_fwd.median > 0 ? out->cur_fwd.median / out->base_fwd.median - 1 : 0;
    out->raw_change_bwd = out->base_bwd.median > 0 ? out->cur_bwd.median / out->base_bwd.median - 1 : 0;
    out->elapsed_s = wall_seconds() - start;
    free_measured(src, &base, &cur);
    return 0;
}

/* The runner measured here, one round per step, against a recorded entry. */
typedef struct in_process {
    const runner_ops *r;
    const lstm_problem *p;
    const gate_expected *expected;
    const perf_settings *s;
} in_process;

static int measure_in_process(void *ctx, baseline_entry *base, baseline_entry *cur, lc_error *err)
{
    (void)base;
    const in_process *ip = ctx;
    harness_result res;
    const lc_status st = measure_round(ip->r, ip->p, ip->expected, ip->s, &res, err);
    if (st != LC_OK)
        return st;
    int rc = append_round(cur, &res, err);
    harness_result_free(&res);
    return rc;
}

lc_status perf_compare(const runner_ops *r, const lstm_problem *p, const gate_expected *expected, const baseline_entry *e,
                       const perf_settings *s, int comparisons, perf_comparison *out, lc_error *err)
{
    in_process ip = {r, p, expected, s};
    perf_source src = {.measure = measure_in_process, .ctx = &ip, .fixed_base = e};
    const int rc = perf_compare_source(&src, s, comparisons, out, err);
    runner_timing_unchecked(r, &p->shape, out->unchecked, sizeof out->unchecked);
    return rc;
}
