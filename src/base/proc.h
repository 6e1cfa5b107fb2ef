/* Running another program: the git queries, the build of an old commit and
 * the A/B sides all go through here, with an argument vector (no shell, so
 * paths need no quoting). Library code: errors come back in lc_error. */
#ifndef LSTMCHECK_PROC_H
#define LSTMCHECK_PROC_H

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct proc_io {
    const char *extra_env; /* "NAME=VALUE" added to the child's environment, or NULL */
    const char *log_path;  /* stdout and stderr appended here; NULL: /dev/null */
    char *out;             /* when set, stdout is captured here instead (NUL-terminated) */
    size_t out_size;
} proc_io;

/* Run argv (argv[0] searched on PATH) and wait. Returns its exit status
 * (0..255), or -1 with err when it could not be started or was killed. */
int proc_run(char *const argv[], const proc_io *io, lc_error *err);

/* The last non-empty line of a log file (for one-line errors). */
void proc_log_last_line(const char *log_path, char *buf, size_t n);

/* In a forked child: be killed when the parent dies (a killed lstmcheck
 * must not leave children measuring beside whatever runs next). */
void proc_die_with_parent(void);

/* Remove a directory and the plain files directly inside it. */
void proc_remove_dir(const char *dir);

#ifdef __cplusplus
}
#endif
#endif
