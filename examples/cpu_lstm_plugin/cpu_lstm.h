/* A plain CPU LSTM as an lstmcheck runner (cpu_lstm.c). plugin.c makes a
 * plugin of it; lstmcheck's own tests build their test plugins around it. */
#ifndef CPU_LSTM_H
#define CPU_LSTM_H

#include <lstmcheck/runner.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const lstmcheck_runner cpu_lstm_runner;

#ifdef __cplusplus
}
#endif

#endif
