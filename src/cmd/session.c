/* Command setup (see session.h). */
#include "cmd/session.h"

#include "device/device.h"
#include "model/inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Add the device's runners that have role (runners/runners.def). */
static int add_group(const session_request *rq, session *s, unsigned role, const char *group, lc_error *err);

int session_check_memory(const lstm_shape *s, lc_error *err)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t need = lstm_host_bytes_estimate(s);
    if (pages <= 0 || page <= 0)
        return 0;
    double have = (double)pages * (double)page;
    if (need == 0 || (double)need > 0.8 * have) {
        lc_error_set(err,
                     "shape T=%d B=%d I=%d H=%d L=%d needs about %.1f GiB of host memory; this "
                     "machine has %.1f GiB",
                     s->seq_length, s->batch, s->input_size, s->hidden_size, s->num_layers,
                     (double)need / 1073741824.0, have / 1073741824.0);
        return 1;
    }
    return 0;
}

void session_resolve_device(const char *requested, char *device, size_t n)
{
    lc_error why;
    /* a GPU whose CUDA setup is broken is still a GPU: its runners then
     * report the breakage as errors instead of the run quietly going to the CPU */
    if (!strcmp(requested, "auto"))
        snprintf(device, n, "%s", device_cuda_probe(&why) != DEVICE_CUDA_NONE ? "cuda" : "cpu");
    else
        snprintf(device, n, "%s", requested);
}

static int add_runner(session *s, const runner_ops *r, const char *group, lc_error *err)
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
    return !strcmp(r->device, s->device) || (registry_origin(r) && !strcmp(rq->device, "auto"));
}

static int add_group(const session_request *rq, session *s, unsigned role, const char *group, lc_error *err)
{
    const runner_ops *r;
    for (int i = 0; (r = registry_default_runner(i)); i++)
        if (on_device(rq, s, r) && (runner_roles(r) & role) && add_runner(s, r, group, err))
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
    const char *group = rq->nlengths ? "vl_lstm" : "lstm";
    if (!rq->nrnns)
        return add_group(rq, s, ROLE_LSTM_GROUP, group, err) ? LC_BAD_INPUT : LC_OK;
    for (int i = 0; i < rq->nrnns; i++) {
        const runner_ops *r = registry_find(rq->rnns[i]);
        if (!r) {
            lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", rq->rnns[i]);
            return LC_BAD_INPUT;
        }
        if (strcmp(rq->device, "auto") && strcmp(r->device, s->device)) {
            lc_error_set(err, "runner '%s' runs on %s, but --device is %s", r->name, r->device, s->device);
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
    if (lstm_shape_validate(&s->vl_shape, err) || session_check_memory(&s->vl_shape, err))
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
    return add_group(rq, s, ROLE_VL_GROUP, "vl_lstm", err) ? LC_BAD_INPUT : LC_OK;
}

lc_status session_setup(const session_request *rq, session *s, lc_error *err)
{
    memset(s, 0, sizeof *s);
    session_resolve_device(rq->device, s->device, sizeof s->device);
    if (lstm_shape_validate(&rq->shape, err) || session_check_memory(&rq->shape, err))
        return LC_BAD_INPUT;
    lc_status rc = add_named_or_default(rq, s, err);
    if (rc)
        return rc;
    if (rq->variable_lstms)
        return add_variable_group(rq, s, err);
    for (int b = 0; b < rq->nlengths; b++) {
        if (rq->lengths[b] > rq->shape.seq_length) {
            lc_error_set(err, "length %d of sequence %d exceeds --seqLength %d", rq->lengths[b], b,
                         rq->shape.seq_length);
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
