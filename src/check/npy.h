/* NumPy .npy files (format version 1.0, little-endian, C order): written
 * atomically by base/files.h (a new temporary file of an unpredictable
 * name, renamed over the path), so a crash never leaves half a file and a
 * link planted beside it is never followed. */
#ifndef LSTMCHECK_NPY_H
#define LSTMCHECK_NPY_H

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npy_dtype { NPY_F32, NPY_F64, NPY_I32 } npy_dtype;

int npy_write(const char *path, npy_dtype dtype, const void *data, int ndim, const size_t *dims,
              lc_error *err);

/* Reads a file this writer produced (used by the tests and by tools):
 * *data is malloc'ed; dims holds up to 8 entries. Anything but a regular
 * file (a FIFO, a device) is refused at once, never waited on. */
int npy_read(const char *path, npy_dtype *dtype, void **data, int *ndim, size_t dims[8],
             lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
