/* lstmcheck list: the runner table, and whether each can run here. */
#include "cmd/commands.h"
#include "device/device.h"
#include "runners/runner.h"

#include <stdio.h>

/* The name column: every built-in name fits (the longest, jit_layernorm_decom,
 * has 19 characters); a longer plugin name pushes its line's columns right. */
#define LIST_NAME_WIDTH 20

lc_status cmd_list(const cli_options *o)
{
    lc_error err = {{0}};
    if (registry_validate(lstm_runners, &err)) {
        fprintf(stderr, "lstmcheck: runner table is broken: %s\n", err.msg);
        return LC_ERROR;
    }
    if (!o->names_only)
        printf("%-*s %-5s %-12s %-7s %-7s %-8s %-7s %-9s %s\n", LIST_NAME_WIDTH, "name", "dev", "model", "layers", "varlen",
               "backward", "outputs", "precision", "runs here");
    lc_error cuda_why = {{0}};
    const device_cuda_state cuda = o->names_only ? DEVICE_CUDA_NONE : device_cuda_probe(&cuda_why);
    const runner_ops *r;
    for (int i = 0; (r = registry_runner(i)); i++) {
        if (o->device != CLI_DEVICE_AUTO && o->device != r->device)
            continue;
        if (o->names_only) {
            printf("%s\n", r->name);
            continue;
        }
        lc_error why = {{0}};
        const int no_cuda = r->device == LC_DEVICE_CUDA && cuda != DEVICE_CUDA_READY; /* said once, below */
        if (no_cuda)
            lc_error_set(&why, "%s", cuda == DEVICE_CUDA_NONE ? "no CUDA device (below)" : "CUDA does not work (below)");
        const int ok = !no_cuda && r->available(&why) == LC_OK;
        char layers[16];
        if (!(r->caps & RUNNER_MULTILAYER))
            snprintf(layers, sizeof layers, "1");
        else if (r->max_layers)
            snprintf(layers, sizeof layers, "1-%d", r->max_layers);
        else
            snprintf(layers, sizeof layers, "any");
        printf("%-*s %-5s %-12s %-7s %-7s %-8s %-7s %-9s %s%s\n", LIST_NAME_WIDTH, r->name, lc_device_name(r->device),
               lstm_model_name(r->model), layers,
               (r->caps & RUNNER_VARLEN) ? "yes" : "no", (r->caps & RUNNER_BACKWARD) ? "yes" : "no",
               (r->caps & RUNNER_STATE_ONLY) ? "hy,cy" : "y,hy,cy",
               r->precision == PRECISION_TF32 ? "tf32" : "fp32", ok ? "yes" : "no: ",
               ok ? "" : why.msg);
        if (registry_origin(r))
            printf("%-*s   %s (plugin %s)\n", LIST_NAME_WIDTH, "", r->description, registry_origin(r));
        else
            printf("%-*s   %s\n", LIST_NAME_WIDTH, "", r->description);
    }
    char dev[256];
    device_cuda_describe(dev, sizeof dev);
    for (int m = 0; !o->names_only && m < MODEL_COUNT; m++)
        printf("%s%-12s %s\n", m ? "" : "\nmodels:\n", lstm_model_name(m),
               lstm_model_get(m) ? lstm_model_get(m)->summary : "(no descriptor)");
    if (o->names_only)
        return LC_OK;
    if (cuda == DEVICE_CUDA_READY)
        printf("\nCUDA in this build: %s; device: %s\n", device_cuda_built() ? "yes" : "no", dev);
    else /* the probe's reason: "no CUDA device: ..." or what is broken */
        printf("\nCUDA in this build: %s; %s\n", device_cuda_built() ? "yes" : "no", cuda_why.msg);
    return LC_OK;
}
