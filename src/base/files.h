/* Writing a file without ever leaving half of it: the bytes go to a
 * temporary file beside path, <path>.tmp.<pid>.<random>, are flushed to
 * disk, and the temporary file is renamed over path. A reader sees the old
 * file or the new one, never a mix.
 *
 * The temporary file is created new (O_CREAT | O_EXCL | O_NOFOLLOW), never
 * opened: a link or file someone planted at a name this writer might use is
 * never followed or written, and the random part makes the name
 * unpredictable, so planting at it cannot even make the write fail. (Issue
 * 19: the name used to be <path>.tmp.<pid>, opened with fopen "wb"; a link
 * planted there made `baseline update` overwrite the link's target and
 * leave the baseline a link to it.) The rename replaces whatever is at path
 * itself, a link included: its target is never written. On any failure the
 * temporary file is removed. The pid in the name tells whose it is, so that
 * file_remove_stale_temps removes only those of writers that no longer run. */
#ifndef LSTMCHECK_FILES_H
#define LSTMCHECK_FILES_H

#include <stddef.h>

#include "base/error.h"

/* <path> FILE_TEMP_MARK <pid> "." <FILE_TEMP_RANDOM_CHARS letters and digits> */
#define FILE_TEMP_MARK ".tmp."
#define FILE_TEMP_RANDOM_CHARS 12 /* 62^12, about 2^71 names per pid */
#define FILE_TEMP_TRIES 64        /* names tried before giving up (each taken: EEXIST) */
/* The mode a new file is created with; the umask takes from it, as for
 * any file a program writes (0644 under the usual umask 022). */
#define FILE_CREATE_MODE 0666

#ifdef __cplusplus
extern "C" {
#endif

/* Write a then b (blen may be 0) to path atomically. 0 on success. */
int file_write_atomic_parts(const char *path, const void *a, size_t alen, const void *b, size_t blen,
                            lc_error *err);
/* All n bytes to / from a file descriptor (a pipe to a child), retrying
 * after signals. 0 on success, 1 on an error or an early end. */
int fd_write_all(int fd, const void *buf, size_t n);
int fd_read_all(int fd, void *buf, size_t n);

/* Write text to path atomically. 0 on success. */
int file_write_atomic(const char *path, const char *text, size_t len, lc_error *err);

/* path opened read-only when it is a regular file (*fd, and its *size in
 * bytes): LC_OK; LC_MISSING when there is none; LC_BAD_INPUT when it is
 * not a regular file (a FIFO or a device is refused at once, never waited
 * on) or cannot be opened. The caller closes *fd. */
lc_status file_open_regular(const char *path, int *fd, long long *size, lc_error *err);

/* The whole regular file at path, NUL-terminated (*len without the NUL):
 * LC_OK; LC_MISSING when there is none; LC_BAD_INPUT when it is not a
 * regular file (a FIFO or a device is refused at once, never waited on),
 * holds more than max_bytes, or cannot be read. */
lc_status file_read_regular(const char *path, long max_bytes, char **text, size_t *len, lc_error *err);

/* An exclusive lock on the folder holding path, so that two writers of
 * files in it take turns (released by file_unlock). 0, or 1 with err. */
int file_lock_parent(const char *path, int *fd, lc_error *err);
void file_unlock(int fd);

/* Remove the temporary files of path, <path>.tmp.<pid>.<random> (and the
 * <path>.tmp.<pid> of earlier versions), left by writers that no longer run
 * (a kill -9 between write and rename); how many were removed. A running
 * writer's are kept. */
int file_remove_stale_temps(const char *path);

#ifdef __cplusplus
}
#endif
#endif
