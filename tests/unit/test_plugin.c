/* The runner ABI (include/lstmcheck/runner.h) and what a loaded runner
 * becomes (src/runners/plugin.h, registry.c). Plugins themselves are built
 * and loaded from outside in tests/plugin/. */
#include "unit.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check/isolate.h"
#include "runners/plugin.h"

/* The layout of ABI version 1 on LP64 Linux. A change of the header that
 * fails this moves something a built plugin relies on: raise
 * LSTMCHECK_RUNNER_ABI_VERSION, then record the new layout here. */
int test_runner_abi_layout(void)
{
    CHECK(LSTMCHECK_RUNNER_ABI_VERSION == 2, "the layout below is version 2's; the header says %d",
          LSTMCHECK_RUNNER_ABI_VERSION);
    const struct {
        const char *what;
        size_t got, want;
    } layout[] = {
        {"sizeof(lstmcheck_error)", sizeof(lstmcheck_error), 512},
        {"sizeof(lstmcheck_shape)", sizeof(lstmcheck_shape), 20},
        /* version 2 appended the model and its slots to version 1's structs */
        {"sizeof(lstmcheck_problem)", sizeof(lstmcheck_problem), 184},
        {"sizeof(lstmcheck_results)", sizeof(lstmcheck_results), 176},
        {"sizeof(lstmcheck_runner)", sizeof(lstmcheck_runner), 120},
        {"problem.model (version 1's size)", offsetof(lstmcheck_problem, model), 112},
        {"problem.model_inputs", offsetof(lstmcheck_problem, model_inputs), 120},
        {"results.model (version 1's size)", offsetof(lstmcheck_results, model), 104},
        {"results.model_grads", offsetof(lstmcheck_results, model_grads), 112},
        {"runner.model (version 1's size)", offsetof(lstmcheck_runner, model), 112},
        {"sizeof(lstmcheck_plugin)", sizeof(lstmcheck_plugin), 32},
        {"problem.lengths", offsetof(lstmcheck_problem, lengths), 24},
        {"problem.x", offsetof(lstmcheck_problem, x), 64},
        {"problem.dcy", offsetof(lstmcheck_problem, dcy), 104},
        {"results.y", offsetof(lstmcheck_results, y), 24},
        {"results.db_hh", offsetof(lstmcheck_results, db_hh), 96},
        {"runner.caps", offsetof(lstmcheck_runner, caps), 24},
        {"runner.precision", offsetof(lstmcheck_runner, precision), 28},
        {"runner.max_layers", offsetof(lstmcheck_runner, max_layers), 32},
        {"runner.available", offsetof(lstmcheck_runner, available), 40},
        {"runner.create", offsetof(lstmcheck_runner, create), 48},
        {"runner.read_results", offsetof(lstmcheck_runner, read_results), 80},
        {"runner.destroy", offsetof(lstmcheck_runner, destroy), 96},
        {"runner.impl", offsetof(lstmcheck_runner, impl), 104},
        {"plugin.name", offsetof(lstmcheck_plugin, name), 16},
        {"plugin.runners", offsetof(lstmcheck_plugin, runners), 24},
    };
    for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++)
        CHECK(layout[i].got == layout[i].want, "%s is %zu, version 2 has %zu: the ABI changed", layout[i].what,
              layout[i].got, layout[i].want);
    CHECK(LSTMCHECK_MULTILAYER == 1 && LSTMCHECK_VARLEN == 2 && LSTMCHECK_BACKWARD == 4 &&
              LSTMCHECK_STATE_ONLY == 8 && LSTMCHECK_STATE_GRADS == 16 && LSTMCHECK_TF32 == 1,
          "the caps and precision values of version 1");
    CHECK(LSTMCHECK_MODEL_LSTM == 0 && LSTMCHECK_MODEL_DROPOUT == 1 && LSTMCHECK_DROPOUT_MASK == 0 &&
              LSTMCHECK_MODEL_SLOTS == 8, "the model values of version 2");
    return 0;
}

/* A runner registered as a plugin's: found by name, in the default
 * selection, in every group it can take, run in a child process. */
int test_registry_plugin_runners(void)
{
    const runner_ops *cpu = registry_find("cpu");
    CHECK(cpu, "the cpu runner");
    CHECK(registry_default_runner(0) == lstm_runners[0] && !registry_origin(cpu),
          "without plugins the default selection is the built-in table");
    static runner_ops loaded;
    loaded = *cpu;
    loaded.name = "p:cpu_again";
    lc_error err = {{0}};
    CHECK(registry_add(&loaded, "libp.so", &err) == LC_OK, "%s", err.msg);
    CHECK(registry_find("p:cpu_again") == &loaded && !strcmp(registry_origin(&loaded), "libp.so"), "found");
    CHECK(registry_default_runner(0) == &loaded && !registry_default_runner(1),
          "with plugins the default selection is theirs");
    int n = 0;
    while (registry_runner(n))
        n++;
    CHECK(registry_runner(n - 1) == &loaded && registry_runner(0) == lstm_runners[0], "built-in first, then loaded");
    CHECK(runner_roles(&loaded) == (ROLE_LSTM_GROUP | ROLE_VL_GROUP | ROLE_PERF), "every group it can take");
    CHECK(registry_add(&loaded, "libq.so", &err) == LC_BAD_INPUT && strstr(err.msg, "p:cpu_again"),
          "a name is loaded once: %s", err.msg);
    CHECK(isolate_runner(&loaded) && !isolate_runner(cpu), "a plugin's CPU runner runs in a child, ours here");
    setenv("LSTMCHECK_ISOLATE", "0", 1);
    CHECK(!isolate_runner(&loaded), "LSTMCHECK_ISOLATE=0 runs it here");
    unsetenv("LSTMCHECK_ISOLATE");
    return 0;
}

/* What is not a plugin is refused with a line that names it. */
int test_plugin_refusals(void)
{
    lc_error err = {{0}};
    CHECK(isolate_plugin_load("/nonexistent-lstmcheck/libx.so", &err) == LC_BAD_INPUT &&
              strstr(err.msg, "plugin /nonexistent-lstmcheck/libx.so: No such file"), "%s", err.msg);
    CHECK(isolate_plugin_load("/tmp", &err) == LC_BAD_INPUT && strstr(err.msg, "not a file"), "%s", err.msg);
    CHECK(isolate_plugin_load("/proc/self/exe", &err) == LC_BAD_INPUT && strstr(err.msg, "cannot be loaded"),
          "an executable is no plugin: %s", err.msg);
    CHECK(!registry_runner(0) || !registry_origin(registry_runner(0)), "nothing was registered");
    return 0;
}
