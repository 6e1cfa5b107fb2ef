/* Fault names, and the switches themselves in the test build. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS: the noisy fault's counter shared with forked rounds */
#include "device/machine.h"
#include "runners/faults.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef LSTMCHECK_FAULTS
lstm_fault lstm_active_fault = FAULT_NONE;
double lstm_extra_work_percent = 0.0;

/* FAULT_NOISY_ROUNDS' counter of processes, shared with forked children
 * (a measuring round runs in one): made before the first fork. */
static unsigned *noisy_tickets;

static void noisy_tickets_map(void)
{
    void *m = mmap(NULL, sizeof *noisy_tickets, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    noisy_tickets = m == MAP_FAILED ? NULL : m;
}

double lstm_extra_work_now(void)
{
    static pid_t taken_by;
    static double noisy;
    if (lstm_active_fault != FAULT_NOISY_ROUNDS)
        return lstm_extra_work_percent;
    if (taken_by != getpid()) { /* this process's first run: its ticket */
        taken_by = getpid();
        if (!noisy_tickets)
            noisy_tickets_map();
        const unsigned t = noisy_tickets ? __atomic_fetch_add(noisy_tickets, 1, __ATOMIC_SEQ_CST) : 1;
        noisy = t % NOISY_ROUNDS_EVERY == 1 ? NOISY_ROUNDS_PERCENT : 0;
    }
    return lstm_extra_work_percent + noisy;
}
#endif

const char *lstm_fault_name(lstm_fault f)
{
    static const char *const names[FAULT_COUNT] = {
#define LSTM_FAULT(ENUM, name, kind, model, shapes) [FAULT_##ENUM] = #name,
#include "runners/faults.def"
#undef LSTM_FAULT
    };
    return (f >= 0 && f < FAULT_COUNT) ? names[f] : "unknown";
}

lstm_model_id lstm_fault_model(lstm_fault f)
{
    static const lstm_model_id models[FAULT_COUNT] = {
#define LSTM_FAULT(ENUM, name, kind, model, shapes) [FAULT_##ENUM] = (lstm_model_id)MODEL_NAMED_##model,
#include "runners/faults.def"
#undef LSTM_FAULT
    };
    return (f >= 0 && f < FAULT_COUNT) ? models[f] : MODEL_LSTM;
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
        if (f == FAULT_NOISY_ROUNDS)
            noisy_tickets_map();
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
    const char *memory = getenv("LSTMCHECK_TEST_HOST_MEMORY_MIB");
    if (memory && *memory) {
        char *end;
        const double mib = strtod(memory, &end);
        if (*end || end == memory || isspace((unsigned char)*memory) || !(mib >= 1 && mib < 1e12)) {
            snprintf(why, n, "LSTMCHECK_TEST_HOST_MEMORY_MIB: expected MiB from 1 to 1e12, got '%s'", memory);
            return 1;
        }
        machine_host_memory_for_tests = mib * 1048576.0;
    }
    return 0;
}
#endif
