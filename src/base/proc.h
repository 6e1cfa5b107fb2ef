/* Child processes, the one way this program makes them (proc_fork): a
 * runner's gate and timing, a measuring round, loading a plugin first, the
 * CUDA probe, and the programs it runs (git, the build of an old commit,
 * the A/B sides, a profiler; proc_run, with an argument vector: no shell,
 * so paths need no quoting). Every child dies with this process. Library
 * code: errors come back in lc_error. */
#ifndef LSTMCHECK_PROC_H
#define LSTMCHECK_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- forked children ---- */

/* In the child: do the work and write its result to fd; 0 on success. */
typedef int (*proc_child_fn)(void *arg, int fd);
/* Here, once the child has ended: read its result from fd; 0 on success. */
typedef int (*proc_parent_fn)(void *arg, int fd, lc_error *err);

typedef enum proc_child_kind {
    /* lstmcheck's own work, which may call code that is not lstmcheck's (a
     * plugin, the CUDA driver). The child leads a process group of its own
     * (what it starts is killed with it), its stdout goes to stderr (this
     * process's stdout may be a document: bench --print-json, --json;
     * stderr, not /dev/null, so that what it prints still reaches a human),
     * and it is killed when it stays in one phase it announced
     * (proc_foreign_begin) longer than the child timeout. */
    PROC_CHILD_WORK,
    /* A child that execs a program: this process's group and output, which
     * the child function redirects as the program needs; no phases. */
    PROC_CHILD_EXEC,
} proc_child_kind;

#define PROC_PHASE_MAX 64

/* How a child ended. */
typedef struct proc_outcome {
    int started;         /* 0: there was no child (err says why) */
    int exit_status;     /* 0..255 when it exited, else -1 */
    int signal;          /* the signal that ended it, else 0 */
    int timed_out;       /* killed here: it stayed in phase longer than timeout_s */
    double timeout_s;
    char phase[PROC_PHASE_MAX];
} proc_outcome;

/* Fork a child of that kind which runs child(arg, fd) and exits 0 when it
 * returned 0. It gets SIGKILL when this process dies (also when this
 * process died before the child could ask for that). What it writes to fd
 * is kept here while this process waits for it to end (killing it past the
 * child timeout); then parent(arg, fd, err) reads it (parent may be NULL).
 * 0 when the child exited 0 and parent returned 0; else 1, out saying how
 * the child ended and err what parent said, or why there was no child. */
int proc_fork(proc_child_kind kind, proc_child_fn child, proc_parent_fn parent, void *arg, proc_outcome *out,
              lc_error *err);
/* proc_fork with a timeout of the child's own (seconds; 0: none) in place
 * of the child timeout: for lstmcheck's own work that must not wait on a
 * library without end, whatever --child-timeout says. */
int proc_fork_within(proc_child_kind kind, proc_child_fn child, proc_parent_fn parent, void *arg, double timeout_s,
                     proc_outcome *out, lc_error *err);

/* How a child ended, as words that follow a subject: "ended with status
 * 1", "was killed by signal 11 (Segmentation fault)", "timed out after 2 s
 * in forward() and was killed". Returns buf. */
const char *proc_outcome_text(const proc_outcome *o, char *buf, size_t n);

/* The longest a child may stay in one announced phase, in seconds; 0 (the
 * default) for no limit. The command line sets it (cmd/session.h);
 * children inherit it. */
void proc_set_child_timeout(double seconds);
double proc_child_timeout(void);

/* Around each call into code that is not lstmcheck's (a plugin's function
 * or initialization, the CUDA driver), phase naming it ("forward()"): in a
 * PROC_CHILD_WORK child the phase is announced to the parent, which kills
 * the child when the call outlasts the child timeout and names the phase;
 * in a process whose stdout is its own (not a child's), stdout is flushed
 * and fd 1 goes to stderr until the call returns, so that what the call
 * prints cannot corrupt a document on stdout. Calls nest: the outermost
 * names the phase. */
void proc_foreign_begin(const char *phase);
void proc_foreign_end(void);

/* Called first: a standard descriptor the process was started without
 * (`>&-`) is opened again, stdin on /dev/null and stdout and stderr on
 * /dev/full, so that no file this process opens takes its number and
 * receives what is printed (the writes fail instead, and are seen:
 * proc_own_output_done). */
void proc_keep_standard_fds(void);

/* This process's own output is complete (the command layer calls it last):
 * stdout is flushed and fd 1 goes to stderr from here on, so that what a
 * plugin's atexit handlers and destructors print as the process exits
 * cannot reach a document on stdout. 0, or -1 when some of what was printed
 * on stdout could not be written (a full disk, a closed descriptor). */
int proc_own_output_done(void);

/* In a forked child, first thing (proc_fork does it): be killed (SIGKILL)
 * when parent, this child's parent as recorded before the fork, dies; when
 * it is dead already, _exit at once. (getppid() read in the child would be
 * the reaper's pid by then, and the check would pass.) */
void proc_die_with_parent(pid_t parent);

/* ---- programs ---- */

typedef struct proc_io {
    const char *extra_env; /* "NAME=VALUE" added to the child's environment, or NULL */
    const char *log_path;  /* stdout and stderr appended here; NULL: /dev/null */
    char *out;             /* when set, stdout is captured here instead (NUL-terminated) */
    size_t out_size;
    int inherit_output;    /* 1: stdin, stdout and stderr are this process's (log_path, out ignored) */
} proc_io;

/* Run argv (argv[0] searched on PATH) in a PROC_CHILD_EXEC child and wait.
 * Returns its exit status (0..255), or -1 with err when it could not be
 * started or was killed. */
int proc_run(char *const argv[], const proc_io *io, lc_error *err);

/* The last non-empty line of a log file (for one-line errors). */
void proc_log_last_line(const char *log_path, char *buf, size_t n);

/* Remove a directory and the plain files directly inside it. */
void proc_remove_dir(const char *dir);

#ifdef __cplusplus
}
#endif
#endif
