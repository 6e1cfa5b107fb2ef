/* What `baseline update` records, decided in one place: the commit an
 * entry names, and when an entry the file refuses is the host's state
 * rather than the runner's failure. */
#ifndef LSTMCHECK_RECORD_H
#define LSTMCHECK_RECORD_H

#include "perf/baseline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The commit an update records. A baseline is only worth committing if
 * anyone can rebuild what it measured: a tree with uncommitted changes to
 * what is built (or no git checkout) is refused, LC_BAD_INPUT with err,
 * unless allow_dirty, which records "<commit>-dirty" (or "unknown"),
 * marked not reproducible. */
lc_status record_commit(const char *source_dir, int allow_dirty, char commit[48], int *reproducible,
                        lc_error *err);

/* 1 when the noise alone, beyond what a file holds, kept e out of it (why
 * says so): the machine's state while it measured (a busy host whose load
 * varies spreads the rounds), not the runner's failure. */
int record_refused_for_noise(const baseline_entry *e, lc_error *why);

#ifdef __cplusplus
}
#endif
#endif
