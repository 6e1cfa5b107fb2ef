/* The groups bench and profile run, as the original names them: its list
 * of LSTMs, and the variable-length ones (--variable-lstms). One list,
 * X(ID, token, role): the enum, the names, and the roster role
 * (runners.def) that puts a runner in the device's group. */
#ifndef LSTMCHECK_GROUP_H
#define LSTMCHECK_GROUP_H

#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* in the original's order: its JSON lists lstm before vl_lstm */
#define RUNNER_GROUP_LIST(X)              \
    X(LSTM, lstm, ROLE_LSTM_GROUP)        \
    X(VL_LSTM, vl_lstm, ROLE_VL_GROUP)

typedef enum runner_group {
#define RUNNER_GROUP_ENUM(id, token, role) RUNNER_GROUP_##id,
    RUNNER_GROUP_LIST(RUNNER_GROUP_ENUM)
#undef RUNNER_GROUP_ENUM
    RUNNER_GROUP_COUNT
} runner_group;

/* "lstm", "vl_lstm" */
static inline const char *runner_group_name(runner_group g)
{
    static const char *const names[] = {
#define RUNNER_GROUP_NAME(id, token, role) #token,
        RUNNER_GROUP_LIST(RUNNER_GROUP_NAME)
#undef RUNNER_GROUP_NAME
    };
    return (unsigned)g < RUNNER_GROUP_COUNT ? names[g] : "?";
}

/* The roster role of the group's members (ROLE_LSTM_GROUP, ...). */
static inline unsigned runner_group_role(runner_group g)
{
    static const unsigned roles[] = {
#define RUNNER_GROUP_ROLE(id, token, role) role,
        RUNNER_GROUP_LIST(RUNNER_GROUP_ROLE)
#undef RUNNER_GROUP_ROLE
    };
    return (unsigned)g < RUNNER_GROUP_COUNT ? roles[g] : 0;
}

#ifdef __cplusplus
}
#endif
#endif
