/* Command setup (see session.h). */
#include "session.h"

#include "device.h"
#include "inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cpu_defaults[] = {"cpu", "ref", NULL};
/* the original's default list (py is the GPU eager cell of runner_cublas.cu) */
static const char *const cuda_defaults[] = {"cudnn", "aten", "jit", "jit_premul", "jit_premul_bias",
                                            "jit_simple", "jit_multilayer", "py", NULL};
static const char *const cpu_vl_defaults[] = {"cpu", "ref", NULL};
static const char *const cuda_vl_defaults[] = {"vl_cudnn", "vl_jit", "ref", NULL};

const char *const *session_default_runners(const char *device)
{
    return strcmp(device, "cuda") == 0 ? cuda_defaults : cpu_defaults;
}

const char *const *session_default_vl_runners(const char *device)
{
    return strcmp(device, "cuda") == 0 ? cuda_vl_defaults : cpu_vl_defaults;
}

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
        return CLI_EXIT_USAGE;
    }
    s->runners[s->nrunners].runner = r;
    s->runners[s->nrunners].group = group;
    s->nrunners++;
    return 0;
}

int session_setup(const cli_options *o, session *s, lc_error *err)
{
    memset(s, 0, sizeof *s);
    session_resolve_device(o->device, s->device, sizeof s->device);
    if (lstm_shape_validate(&o->shape, err) || session_check_memory(&o->shape, err))
        return CLI_EXIT_USAGE;
    if (o->nrnns) {
        for (int i = 0; i < o->nrnns; i++) {
            const runner_ops *r = registry_find(o->rnns[i]);
            if (!r) {
                lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", o->rnns[i]);
                return CLI_EXIT_USAGE;
            }
            if (strcmp(o->device, "auto") && strcmp(r->device, s->device)) {
                lc_error_set(err, "runner '%s' runs on %s, but --device is %s", r->name, r->device,
                             s->device);
                return CLI_EXIT_USAGE;
            }
            /* explicit lengths make every chosen runner a variable-length one */
            if (add_runner(s, r, o->nlengths ? "vl_lstm" : "lstm", err))
                return CLI_EXIT_USAGE;
        }
    } else {
        const char *const *names = session_default_runners(s->device);
        for (int i = 0; names[i]; i++) {
            const runner_ops *r = registry_find(names[i]);
            if (r && add_runner(s, r, o->nlengths ? "vl_lstm" : "lstm", err))
                return CLI_EXIT_USAGE;
        }
    }
    if (o->variable_lstms) {
        /* seqLength is ignored for this group, as in the original */
        s->vl_shape = o->shape;
        s->vl_shape.seq_length = VL_MAX_LENGTH;
        if (lstm_shape_validate(&s->vl_shape, err) || session_check_memory(&s->vl_shape, err))
            return CLI_EXIT_USAGE;
        s->vl_lengths = malloc((size_t)o->shape.batch * sizeof *s->vl_lengths);
        if (!s->vl_lengths) {
            lc_error_set(err, "out of host memory");
            return 1;
        }
        lc_rng rng;
        lc_rng_init(&rng, o->seed, INPUT_LENGTHS, -1);
        for (int b = 0; b < o->shape.batch; b++)
            s->vl_lengths[b] = lc_rng_int(&rng, VL_MIN_LENGTH, VL_MAX_LENGTH);
        const char *const *names = session_default_vl_runners(s->device);
        for (int i = 0; names[i]; i++) {
            const runner_ops *r = registry_find(names[i]);
            if (r && add_runner(s, r, "vl_lstm", err))
                return CLI_EXIT_USAGE;
        }
    } else if (o->nlengths) {
        for (int b = 0; b < o->nlengths; b++) {
            if (o->lengths[b] > o->shape.seq_length) {
                lc_error_set(err, "length %d of sequence %d exceeds --seqLength %d", o->lengths[b], b,
                             o->shape.seq_length);
                return CLI_EXIT_USAGE;
            }
        }
    }
    return 0;
}

void session_free(session *s)
{
    free(s->vl_lengths);
    memset(s, 0, sizeof *s);
}
