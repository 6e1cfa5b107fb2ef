/* lc_status: the outcome every library function reports (the list is
 * base/status.def), and the process exit code of each. */
#ifndef LSTMCHECK_STATUS_H
#define LSTMCHECK_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lc_status {
#define LC_STATUS(NAME, name, exit_code, rank, meaning) LC_##NAME,
#include "base/status.def"
#undef LC_STATUS
} lc_status;

/* "ok", "error", "failed", ... */
const char *lc_status_name(lc_status s);

/* The exit code of a command that ended so: 0 ok, 1 failed, 2 bad input,
 * 3 could not run or decide here, 4 error. */
int lc_status_exit_code(lc_status s);

/* What a child lstmcheck's exit code says (an A/B side, a profiled run):
 * the first status with that code; LC_ERROR for a code that is none of
 * ours (a crash, a profiler's own failure). */
lc_status lc_status_from_exit_code(int code);

/* The one of a and b that a run reports when both happened to it: bad
 * input, then an error, then a failure, then "not here", then ok. */
lc_status lc_status_worse(lc_status a, lc_status b);

/* Every exit code with its meaning, one line each ("  1  a finding: ..."),
 * after a heading that says which wins when several apply; into buf. */
void lc_status_exit_codes_text(char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
