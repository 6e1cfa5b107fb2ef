/* NumPy .npy files (format version 1.0, little-endian, C order): written
 * to a temporary name and renamed, so a crash never leaves half a file. */
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
 * *data is malloc'ed; dims holds up to 8 entries. */
int npy_read(const char *path, npy_dtype *dtype, void **data, int *ndim, size_t dims[8],
             lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
