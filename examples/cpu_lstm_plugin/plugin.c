/* The plugin: its name and its runners. lstmcheck shows the runner as
 * example:cpu_lstm and keys its baselines by that name. */
#include "cpu_lstm.h"

static const lstmcheck_runner *const runners[] = {&cpu_lstm_runner, NULL};

LSTMCHECK_PLUGIN("example", runners);
