/* Writing a file without ever leaving half of it: the bytes go to
 * <path>.tmp.<pid>, are flushed to disk, and the temporary file is renamed
 * over path. A reader sees the old file or the new one, never a mix. */
#ifndef LSTMCHECK_FILES_H
#define LSTMCHECK_FILES_H

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write a then b (blen may be 0) to path atomically. 0 on success. */
int file_write_atomic_parts(const char *path, const void *a, size_t alen, const void *b, size_t blen,
                            lc_error *err);
/* Write text to path atomically. 0 on success. */
int file_write_atomic(const char *path, const char *text, size_t len, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
