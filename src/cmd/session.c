/* Command setup (see session.h). */
#include "cmd/session.h"

#include "base/paths.h"
#include "base/text.h"
#include "device/device.h"
#include "device/machine.h"
#include "perf/baseline.h"
#include "model/inputs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int session_check_memory(const lstm_shape *s, int model, lc_error *err)
{
    const double have = machine_host_memory_bytes();
    size_t need = 1; /* the largest of the models asked for; 0 once one overflows */
    for (int m = 0; m < MODEL_COUNT && need != 0; m++) {
        const size_t of_m = model < 0 || m == model ? lstm_host_bytes_estimate(s, m) : 1;
        need = of_m == 0 || of_m > need ? of_m : need;
    }
    if (!(have > 0))
        return 0;
    if (need == 0 || (double)need > LSTM_HOST_MEMORY_SHARE * have) {
        char dims[96], needed[32], had[32];
        /* need 0: beyond what size_t counts */
        lc_error_set(err, "shape %s needs about %s of host memory; this machine has %s",
                     lstm_shape_format(s, LSTM_SHAPE_DIMS, dims, sizeof dims),
                     text_bytes(need ? (double)need : (double)SIZE_MAX, needed, sizeof needed),
                     text_bytes(have, had, sizeof had));
        return 1;
    }
    return 0;
}

static const char *built_from = "unknown";

void session_set_built_from(const char *commit)
{
    built_from = commit;
}

const char *session_built_from(void)
{
    return built_from;
}

double session_child_timeout(const cli_options *o)
{
    if (o->child_timeout_s >= 0)
        return o->child_timeout_s;
    double s = CLI_CHILD_TIMEOUT_S;
    if (o->time_budget_s > s)
        s = o->time_budget_s;
    if (o->max_seconds > s)
        s = o->max_seconds;
    return s;
}

lc_device session_resolve_device(int requested)
{
    lc_error why;
    if (requested != CLI_DEVICE_AUTO)
        return (lc_device)requested;
    /* a GPU whose CUDA setup is broken is still a GPU: its runners then
     * report the breakage as errors instead of the run quietly going to the CPU */
    return device_cuda_probe(&why) != DEVICE_CUDA_NONE ? LC_DEVICE_CUDA : LC_DEVICE_CPU;
}

lc_status session_check_device(int requested, lc_error *err)
{
    /* without CUDA code every CUDA runner would only ever skip: a run that
     * asked for the GPU must not end as a pass */
    if (requested == LC_DEVICE_CUDA && !device_cuda_built()) {
        lc_error_set(err, "--device cuda: CUDA runners are not built into this binary (configured with "
                          "LSTMCHECK_CUDA=OFF or without nvcc); use --device cpu or a CUDA build");
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* 1 when output i is a file directly in a folder output that is made
 * before anything is written and may hold others (profile's --out-dir),
 * and that folder does not exist yet. */
static int in_folder_made_first(const cli_output *out, const char *const *path, int n, int i)
{
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path[i]);
    char *slash = strrchr(parent, '/');
    if (out[i].is_dir || !slash)
        return 0;
    slash[slash == parent] = '\0';
    struct stat st;
    for (int j = 0; j < n; j++)
        if (out[j].is_dir && out[j].holds_others && path_same_file(parent, path[j]) && stat(path[j], &st) != 0)
            return 1;
    return 0;
}

/* One output path: LC_OK, or LC_BAD_INPUT with err naming the flag and
 * the path. made_first: a file in a folder output that is made before it
 * is written (its name alone is checked here; the folder is checked
 * itself). */
static lc_status check_output(const cli_output *out, const char *path, int made_first, lc_error *err)
{
    lc_error why = {{0}};
    if (!strcmp(path, "-")) {
        if (out->stdout_ok)
            return LC_OK;
        lc_error_set(err, "--%s '-': needs a %s name (it does not write to stdout)", out->flag,
                     out->is_dir ? "folder" : "file");
        return LC_BAD_INPUT;
    }
    if ((out->is_dir      ? path_check_writable_dir(path, 1, &why)
         : made_first ? path_check_file_name(path, &why)
                      : path_check_writable_file(path, &why)) == LC_OK)
        return LC_OK;
    /* a default place names its flag as the way to choose another */
    lc_error_set(err, "--%s%s '%s': %s", out->flag, out->path ? "" : "'s default", path, why.msg);
    return LC_BAD_INPUT;
}

lc_status session_check_outputs(const cli_options *o, lc_error *err)
{
    cli_output out[CLI_MAX_OUTPUTS];
    const char *path[CLI_MAX_OUTPUTS];
    const int n = cli_outputs(o, out, CLI_MAX_OUTPUTS);
    for (int i = 0; i < n; i++)
        path[i] = out[i].path ? out[i].path : baseline_default_dir(); /* MARK_OUT_DEFAULT: --baseline-dir's */
    /* first two outputs in one place, or one in the other's folder (one
     * would overwrite, or stand in the way of, the other), whatever is
     * there now */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || !strcmp(path[i], "-") || !strcmp(path[j], "-"))
                continue;
            if (i < j && path_same_file(path[i], path[j])) {
                lc_error_set(err, "--%s and --%s name one place, '%s': one would overwrite the other", out[i].flag,
                             out[j].flag, path[j]);
                return LC_BAD_INPUT;
            }
            if (out[i].is_dir && !out[i].holds_others && path_within(path[i], path[j])) {
                lc_error_set(err, "--%s '%s' is inside --%s's folder '%s': one could overwrite the other",
                             out[j].flag, path[j], out[i].flag, path[i]);
                return LC_BAD_INPUT;
            }
        }
    for (int i = 0; i < n; i++)
        if (check_output(&out[i], path[i], in_folder_made_first(out, path, n, i), err))
            return LC_BAD_INPUT;
    return LC_OK;
}

static int add_runner(session *s, const runner_ops *r, runner_group group, lc_error *err)
{
    if (s->nrunners == (int)(sizeof s->runners / sizeof s->runners[0])) {
        lc_error_set(err, "too many runners");
        return 1;
    }
    s->runners[s->nrunners].runner = r;
    s->runners[s->nrunners].group = group;
    s->nrunners++;
    return 0;
}

/* A runner of the default selection goes with this session's device; a
 * plugin's runner goes with any device unless --device named one: where
 * its device is missing it is then reported as skipped, not left out
 * unseen. */
static int on_device(const session_request *rq, const session *s, const runner_ops *r)
{
    return r->device == (int)s->device || (registry_origin(r) && rq->device == CLI_DEVICE_AUTO);
}

/* The runners of group `of` (their roles in runners/runners.def) that go
 * with this session, run in group `as`. */
static int add_group(const session_request *rq, session *s, runner_group of, runner_group as, lc_error *err)
{
    const runner_ops *r;
    for (int i = 0; (r = registry_default_runner(i)); i++)
        if (on_device(rq, s, r) && (runner_roles(r) & runner_group_role(of)) && add_runner(s, r, as, err))
            return 1;
    return 0;
}

session_request session_request_from(const cli_options *o)
{
    return (session_request){.device = o->device, .shape = o->shape, .rnns = o->rnns, .nrnns = o->nrnns,
                             .variable_lstms = o->variable_lstms, .lengths = o->lengths,
                             .nlengths = o->nlengths, .seed = o->seed};
}

/* The runners named, or the device's default group. */
static lc_status add_named_or_default(const session_request *rq, session *s, lc_error *err)
{
    /* explicit lengths make every chosen runner a variable-length one */
    const runner_group group = rq->nlengths ? RUNNER_GROUP_VL_LSTM : RUNNER_GROUP_LSTM;
    if (!rq->nrnns)
        return add_group(rq, s, RUNNER_GROUP_LSTM, group, err) ? LC_BAD_INPUT : LC_OK;
    for (int i = 0; i < rq->nrnns; i++) {
        const runner_ops *r = registry_find(rq->rnns[i]);
        if (!r) {
            lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", rq->rnns[i]);
            return LC_BAD_INPUT;
        }
        if (rq->device != CLI_DEVICE_AUTO && r->device != (int)s->device) {
            lc_error_set(err, "runner '%s' runs on %s, but --device is %s", r->name, lc_device_name(r->device),
                         lc_device_name(s->device));
            return LC_BAD_INPUT;
        }
        if (add_runner(s, r, group, err))
            return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* --variable-lstms: the original's vl group, with lengths drawn from the seed */
static lc_status add_variable_group(const session_request *rq, session *s, lc_error *err)
{
    /* seqLength is ignored for this group, as in the original */
    s->vl_shape = rq->shape;
    s->vl_shape.seq_length = VL_MAX_LENGTH;
    if (lstm_shape_validate(&s->vl_shape, err) || session_check_memory(&s->vl_shape, MODEL_LSTM, err))
        return LC_BAD_INPUT;
    s->vl_lengths = malloc((size_t)rq->shape.batch * sizeof *s->vl_lengths);
    if (!s->vl_lengths) {
        lc_error_set(err, "out of host memory");
        return LC_ERROR;
    }
    lc_rng rng;
    lc_rng_init(&rng, rq->seed, INPUT_LENGTHS, -1);
    for (int b = 0; b < rq->shape.batch; b++)
        s->vl_lengths[b] = lc_rng_int(&rng, VL_MIN_LENGTH, VL_MAX_LENGTH);
    return add_group(rq, s, RUNNER_GROUP_VL_LSTM, RUNNER_GROUP_VL_LSTM, err) ? LC_BAD_INPUT : LC_OK;
}

lc_status session_setup(const session_request *rq, session *s, lc_error *err)
{
    memset(s, 0, sizeof *s);
    s->device = session_resolve_device(rq->device);
    if (session_check_shape(&rq->shape, rq->lengths, rq->nlengths, err))
        return LC_BAD_INPUT;
    lc_status rc = add_named_or_default(rq, s, err);
    if (rc || (rc = session_check_device(rq->device, err)))
        return rc;
    /* each model of the runners taken: a LayerNorm reference keeps more */
    for (int i = 0; i < s->nrunners; i++)
        if (session_check_memory(&rq->shape, s->runners[i].runner->model, err))
            return LC_BAD_INPUT;
    return rq->variable_lstms ? add_variable_group(rq, s, err) : LC_OK;
}

lc_status session_check_shape(const lstm_shape *shape, const int *lengths, int nlengths, lc_error *err)
{
    if (lstm_shape_validate(shape, err))
        return LC_BAD_INPUT;
    for (int b = 0; b < nlengths; b++) {
        if (lengths[b] > shape->seq_length) {
            lc_error_set(err, "length %d of sequence %d exceeds --seqLength %d", lengths[b], b, shape->seq_length);
            return LC_BAD_INPUT;
        }
    }
    return LC_OK;
}

void session_free(session *s)
{
    free(s->vl_lengths);
    memset(s, 0, sizeof *s);
}
