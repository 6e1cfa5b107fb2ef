/* The commands of lstmcheck; each returns the process exit code and
 * prints its own one-line errors. */
#ifndef LSTMCHECK_COMMANDS_H
#define LSTMCHECK_COMMANDS_H

#include "cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* exit codes shared by the commands */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,  /* a runner failed numerics, errored, or a perf verdict is SLOWER */
    EXIT_USAGE = CLI_EXIT_USAGE,
    EXIT_SKIPPED = 3, /* nothing failed, but something could not run here */
};

int cmd_list(const cli_options *o);
int cmd_check(const cli_options *o);
int cmd_bench(const cli_options *o);
int cmd_baseline(const cli_options *o);
int cmd_profile(const cli_options *o);

#ifdef __cplusplus
}
#endif
#endif
