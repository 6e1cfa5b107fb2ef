/* Fault names, and the switches themselves in the test build. */
#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LSTMCHECK_FAULTS
lstm_fault lstm_active_fault = FAULT_NONE;
double lstm_extra_work_percent = 0.0;
#endif

const char *lstm_fault_name(lstm_fault f)
{
    static const char *const names[FAULT_COUNT] = {
        [FAULT_NONE] = "none",
        [FAULT_GATE_ORDER] = "gate_order",
        [FAULT_MISSING_BIAS] = "missing_bias",
        [FAULT_BWD_TIME_OFFSET] = "bwd_time_offset",
        [FAULT_WRONG_ACTIVATION] = "wrong_activation",
        [FAULT_WGRAD_LAST_STEP] = "wgrad_last_step",
        [FAULT_TRANSPOSED_WEIGHT] = "transposed_weight",
        [FAULT_STATE_GRAD_ONE_LAYER] = "state_grad_one_layer",
        [FAULT_DCY_IGNORED] = "dcy_ignored",
        [FAULT_STATE_GRAD_NOT_CARRIED] = "state_grad_not_carried",
        [FAULT_SEQ_END_OFF_BY_ONE] = "seq_end_off_by_one",
        [FAULT_SMALL_GATE_GRAD] = "small_gate_grad",
        [FAULT_GPU_OOB_WRITE] = "gpu_oob_write",
    };
    return (f >= 0 && f < FAULT_COUNT) ? names[f] : "unknown";
}

#ifdef LSTMCHECK_FAULTS
int lstm_faults_from_env(char *why, unsigned long n)
{
    const char *name = getenv("LSTMCHECK_TEST_FAULT"), *extra = getenv("LSTMCHECK_TEST_EXTRA_WORK");
    if (name && *name) {
        int f = FAULT_COUNT;
        for (int i = 0; i < FAULT_COUNT; i++)
            if (!strcmp(lstm_fault_name((lstm_fault)i), name))
                f = i;
        if (f == FAULT_COUNT) {
            snprintf(why, n, "LSTMCHECK_TEST_FAULT: no fault named '%s'", name);
            return 1;
        }
        lstm_active_fault = (lstm_fault)f;
    }
    if (extra && *extra) {
        char *end;
        double pct = strtod(extra, &end);
        if (*end || !(pct >= 0 && pct <= 1000)) {
            snprintf(why, n, "LSTMCHECK_TEST_EXTRA_WORK: expected a percentage, got '%s'", extra);
            return 1;
        }
        lstm_extra_work_percent = pct;
    }
    return 0;
}
#endif
