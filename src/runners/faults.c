/* Fault names, and the switches themselves in the test build. */
#include "runners/faults.h"

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
#define LSTM_FAULT(ENUM, name, kind, shapes) [FAULT_##ENUM] = #name,
#include "runners/faults.def"
#undef LSTM_FAULT
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
