/* fault_test FAULT: the gate's power. Plants one fault in the cpu runner
 * (test build, src/faults.h) and passes only if the gate calls it FAIL on
 * every shape; "none" must pass. */
#include <stdio.h>
#include <string.h>

#include "faults.h"
#include "gate.h"
#include "runner.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fault_test FAULT\n");
        return 2;
    }
    lstm_fault fault = FAULT_COUNT;
    for (int f = 0; f < FAULT_COUNT; f++)
        if (!strcmp(argv[1], lstm_fault_name((lstm_fault)f)))
            fault = (lstm_fault)f;
    if (fault == FAULT_COUNT) {
        fprintf(stderr, "fault_test: unknown fault '%s'\n", argv[1]);
        return 2;
    }
    const lstm_shape shapes[] = {
        {.seq_length = 6, .batch = 3, .input_size = 5, .hidden_size = 7, .num_layers = 1},
        {.seq_length = 4, .batch = 2, .input_size = 8, .hidden_size = 8, .num_layers = 2},
        {.seq_length = 20, .batch = 8, .input_size = 64, .hidden_size = 48, .num_layers = 1},
    };
    const runner_ops *cpu = registry_find("cpu");
    lstm_active_fault = fault;
    int wrong = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        numerics_context ctx;
        lc_error err;
        if (numerics_context_init(&ctx, &shapes[i], 17, NULL, &err)) {
            printf("ERROR: %s\n", err.msg);
            return 1;
        }
        gate_report rep;
        char line[1024];
        gate_run(cpu, &ctx, NULL, &rep);
        gate_format_summary(cpu, &rep, line, sizeof line);
        const int expect_pass = fault == FAULT_NONE;
        const int caught = rep.status == GATE_FAIL;
        printf("fault %s, shape T=%d B=%d I=%d H=%d L=%d: %s\n", argv[1], shapes[i].seq_length,
               shapes[i].batch, shapes[i].input_size, shapes[i].hidden_size, shapes[i].num_layers, line);
        if (expect_pass ? rep.status != GATE_PASS : !caught) {
            printf("  -> %s\n", expect_pass ? "the correct runner did not pass" : "NOT CAUGHT");
            wrong++;
        }
        numerics_context_free(&ctx);
    }
    return wrong ? 1 : 0;
}
