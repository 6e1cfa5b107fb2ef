/* .npy writer and reader (see npy.h). */
#include "check/npy.h"

#include "base/files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *descr_of(npy_dtype d)
{
    return d == NPY_F32 ? "<f4" : d == NPY_F64 ? "<f8" : "<i4";
}

static size_t size_of(npy_dtype d)
{
    return d == NPY_F64 ? 8 : 4;
}

static int is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

int npy_write(const char *path, npy_dtype dtype, const void *data, int ndim, const size_t *dims,
              lc_error *err)
{
    if (!is_little_endian()) {
        lc_error_set(err, "npy writer supports little-endian hosts only");
        return 1;
    }
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr_of(dtype));
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%zu,%s", dims[i],
                      (i + 1 < ndim) ? " " : "");
        count *= dims[i];
    }
    /* NumPy writes (N,) for one dimension and (N, M) for more */
    if (ndim > 1 && dict[n - 1] == ',')
        dict[--n] = '\0';
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* magic(6) + version(2) + header length(2) + dict + padding + '\n' is a multiple of 64 */
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    unsigned char *header = malloc(10 + hlen);
    if (!header) {
        lc_error_set(err, "out of memory writing %s", path);
        return 1;
    }
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    header[8] = (unsigned char)(hlen & 0xff);
    header[9] = (unsigned char)(hlen >> 8);
    memcpy(header + 10, dict, (size_t)n);
    memset(header + 10 + n, ' ', pad);
    header[10 + hlen - 1] = '\n';
    int rc = file_write_atomic_parts(path, header, 10 + hlen, data, count * size_of(dtype), err);
    free(header);
    return rc;
}

/* path opened for reading when it is a regular file (a FIFO planted there
 * is refused at once, not waited on); NULL with err else. */
static FILE *open_regular(const char *path, lc_error *err)
{
    int fd;
    long long size;
    if (file_open_regular(path, &fd, &size, err) != LC_OK)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        lc_error_set(err, "cannot open %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int npy_read(const char *path, npy_dtype *dtype, void **data, int *ndim, size_t dims[8],
             lc_error *err)
{
    *data = NULL;
    FILE *f = open_regular(path, err);
    if (!f)
        return 1;
    unsigned char pre[10];
    char dict[4096];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01\x00", 8) != 0) {
        lc_error_set(err, "%s: not a version 1.0 .npy file", path);
        fclose(f);
        return 1;
    }
    size_t hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
    if (hlen >= sizeof dict || fread(dict, 1, hlen, f) != hlen) {
        lc_error_set(err, "%s: truncated header", path);
        fclose(f);
        return 1;
    }
    dict[hlen] = '\0';
    if (strstr(dict, "'<f4'")) *dtype = NPY_F32;
    else if (strstr(dict, "'<f8'")) *dtype = NPY_F64;
    else if (strstr(dict, "'<i4'")) *dtype = NPY_I32;
    else {
        lc_error_set(err, "%s: unsupported dtype", path);
        fclose(f);
        return 1;
    }
    if (!strstr(dict, "'fortran_order': False")) {
        lc_error_set(err, "%s: Fortran order is not supported", path);
        fclose(f);
        return 1;
    }
    const char *sh = strstr(dict, "'shape': (");
    if (!sh) {
        lc_error_set(err, "%s: header has no shape", path);
        fclose(f);
        return 1;
    }
    sh += strlen("'shape': (");
    *ndim = 0;
    size_t count = 1;
    while (*sh && *sh != ')') {
        char *end;
        unsigned long long v = strtoull(sh, &end, 10);
        if (end == sh)
            break;
        if (*ndim == 8) {
            lc_error_set(err, "%s: more than 8 dimensions", path);
            fclose(f);
            return 1;
        }
        dims[(*ndim)++] = (size_t)v;
        count *= (size_t)v;
        sh = end;
        while (*sh == ',' || *sh == ' ')
            sh++;
    }
    size_t bytes = count * size_of(*dtype);
    *data = malloc(bytes ? bytes : 1);
    if (!*data || fread(*data, 1, bytes, f) != bytes) {
        lc_error_set(err, "%s: truncated data (%zu bytes expected)", path, bytes);
        free(*data);
        *data = NULL;
        fclose(f);
        return 1;
    }
    fclose(f);
    return 0;
}
