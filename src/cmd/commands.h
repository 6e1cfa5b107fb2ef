/* The commands of lstmcheck; each prints its own one-line errors and returns
 * how it ended, which main() turns into the process's exit code
 * (base/status.h: lc_status_exit_code). */
#ifndef LSTMCHECK_COMMANDS_H
#define LSTMCHECK_COMMANDS_H

#include "cmd/cli.h"

#ifdef __cplusplus
extern "C" {
#endif

lc_status cmd_list(const cli_options *o);
lc_status cmd_check(const cli_options *o);
lc_status cmd_bench(const cli_options *o);
lc_status cmd_baseline(const cli_options *o);
lc_status cmd_profile(const cli_options *o);
/* lstmcheck --version: the build's commit (session_built_from(), which main.c
 * sets: only main.c is rebuilt when the commit changes), build and libraries. */
lc_status cmd_version(void);

/* Say why a command stops and return status: one line on stderr and,
 * under --json or --print-json (cli_wants_json), also
 * {"error": "...", "status": "<lc_status name>"} on
 * stdout (through the one JSON writer), so that stdout is JSON whatever
 * happened. o may be NULL (no --json known yet). */
lc_status cmd_fail(const cli_options *o, lc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
