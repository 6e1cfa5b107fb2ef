// The runner ABI from C++: the header compiles as C++ and a plugin written
// in it loads (lstmcheck's test plugin "cxx", the example's LSTM).
#include <lstmcheck/runner.h>

#include "cpu_lstm.h"

static const lstmcheck_runner *const runners[] = {&cpu_lstm_runner, nullptr};

LSTMCHECK_PLUGIN("cxx", runners);
