/* lstmcheck list: the runner table, each runner's sizes at the shape, and
 * whether each can run here. */
#include "cmd/commands.h"
#include "base/text.h"
#include "cmd/session.h"
#include "device/device.h"
#include "runners/runner.h"

#include <stdio.h>

/* The name column: every built-in name fits (the longest, jit_layernorm_decom,
 * has 19 characters); a longer plugin name pushes its line's columns right. */
#define LIST_NAME_WIDTH 20

/* Its layers column: "1", "1-4" or "any" */
static const char *layers_text(const runner_ops *r, char *buf, size_t n)
{
    if (!(r->caps & RUNNER_MULTILAYER))
        snprintf(buf, n, "1");
    else if (r->max_layers)
        snprintf(buf, n, "1-%d", r->max_layers);
    else
        snprintf(buf, n, "any");
    return buf;
}

static void list_header(void)
{
    printf("%-*s %-5s %-12s %-7s %-7s %-8s %-7s %-9s %10s %10s %10s %s\n", LIST_NAME_WIDTH, "name", "dev", "model",
           "layers", "varlen", "backward", "outputs", "precision", "params", "param_mem", "act_mem", "runs here");
}

/* One runner's lines: what it supports, its model's sizes at the shape,
 * whether it runs here (available, takes the shape, and the shape fits
 * this machine's memory: too_big says why not), its description. */
static void list_runner(const runner_ops *r, const cli_options *o, device_cuda_state cuda, const lc_error *too_big)
{
    const int *lengths = o->nlengths ? o->lengths : NULL;
    lc_error why = {{0}};
    const int no_cuda = r->device == LC_DEVICE_CUDA && cuda != DEVICE_CUDA_READY; /* said once, below */
    if (no_cuda)
        lc_error_set(&why, "%s", cuda == DEVICE_CUDA_NONE ? "no CUDA device (below)" : "CUDA does not work (below)");
    else if (too_big->msg[0])
        why = *too_big;
    const int ok = !no_cuda && !too_big->msg[0] && r->available(&why) == LC_OK &&
                   runner_supports_shape(r, &o->shape, lengths, &why) == LC_OK;
    lstm_sizes z;
    lc_error size_err = {{0}};
    char layers[16], params[24] = "-", param_mem[24] = "-", act_mem[24] = "-";
    if (!lstm_model_sizes(&o->shape, lengths, r->model, &z, &size_err)) { /* else (overflow) "-" */
        snprintf(params, sizeof params, "%zu", z.parameters);
        text_bytes(z.parameter_bytes, param_mem, sizeof param_mem);
        text_bytes(z.activation_bytes, act_mem, sizeof act_mem);
    }
    printf("%-*s %-5s %-12s %-7s %-7s %-8s %-7s %-9s %10s %10s %10s %s%s\n", LIST_NAME_WIDTH, r->name,
           lc_device_name(r->device), lstm_model_name(r->model), layers_text(r, layers, sizeof layers),
           (r->caps & RUNNER_VARLEN) ? "yes" : "no", (r->caps & RUNNER_BACKWARD) ? "yes" : "no",
           (r->caps & RUNNER_STATE_ONLY) ? "hy,cy" : "y,hy,cy", r->precision == PRECISION_TF32 ? "tf32" : "fp32",
           params, param_mem, act_mem, ok ? "yes" : "no: ", ok ? "" : why.msg);
    if (registry_origin(r))
        printf("%-*s   %s (plugin %s)\n", LIST_NAME_WIDTH, "", r->description, registry_origin(r));
    else
        printf("%-*s   %s\n", LIST_NAME_WIDTH, "", r->description);
}

/* The models, each with its exact sizes at the shape. */
static void list_models(const cli_options *o)
{
    char tag[96];
    printf("\nmodels, with their sizes in FP32 at %s%s (docs/profiling.md, Sizes):\n",
           lstm_shape_format(&o->shape, LSTM_SHAPE_TAG, tag, sizeof tag), o->nlengths ? " with --lengths" : "");
    for (int m = 0; m < MODEL_COUNT; m++) {
        const lstm_model *d = lstm_model_get(m);
        printf("%-12s %s\n", lstm_model_name(m), d ? d->summary : "(no descriptor)");
        lstm_sizes z;
        lc_error err = {{0}};
        if (lstm_model_sizes(&o->shape, o->nlengths ? o->lengths : NULL, m, &z, &err))
            printf("%-12s sizes: %s\n", "", err.msg);
        else
            printf("%-12s %zu parameters (%zu bytes), inputs %zu bytes, activations %zu bytes\n", "", z.parameters,
                   z.parameter_bytes, z.input_bytes, z.activation_bytes);
    }
}

lc_status cmd_list(const cli_options *o)
{
    lc_error err = {{0}};
    if (registry_validate(lstm_runners, &err)) {
        fprintf(stderr, "lstmcheck: runner table is broken: %s\n", err.msg);
        return LC_ERROR;
    }
    if (session_check_shape(&o->shape, o->lengths, o->nlengths, &err))
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    if (!o->names_only)
        list_header();
    lc_error cuda_why = {{0}};
    const device_cuda_state cuda = o->names_only ? DEVICE_CUDA_NONE : device_cuda_probe(&cuda_why);
    const runner_ops *r;
    for (int i = 0; (r = registry_runner(i)); i++) {
        if (o->device != CLI_DEVICE_AUTO && o->device != r->device)
            continue;
        if (o->names_only)
            printf("%s\n", r->name);
        else {
            lc_error too_big = {{0}}; /* the shape is listed, but no command would run it here */
            session_check_memory(&o->shape, r->model, &too_big);
            list_runner(r, o, cuda, &too_big);
        }
    }
    if (o->names_only)
        return LC_OK;
    list_models(o);
    char dev[256];
    device_cuda_describe(dev, sizeof dev);
    if (cuda == DEVICE_CUDA_READY)
        printf("\nCUDA in this build: %s; device: %s\n", device_cuda_built() ? "yes" : "no", dev);
    else /* the probe's reason: "no CUDA device: ..." or what is broken */
        printf("\nCUDA in this build: %s; %s\n", device_cuda_built() ? "yes" : "no", cuda_why.msg);
    return LC_OK;
}
