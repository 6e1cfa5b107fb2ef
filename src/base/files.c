/* Files written so that no reader ever sees half of one (see files.h). */
#include "base/files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int file_write_atomic_parts(const char *path, const void *a, size_t alen, const void *b,
                              size_t blen, lc_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        lc_error_set(err, "path too long: %s", path);
        return 1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        lc_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
        return 1;
    }
    int ok = fwrite(a, 1, alen, f) == alen && (blen == 0 || fwrite(b, 1, blen, f) == blen);
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0 || errno == EINVAL) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        lc_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
        remove(tmp);
        return 1;
    }
    if (rename(tmp, path) != 0) {
        lc_error_set(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

int file_write_atomic(const char *path, const char *text, size_t len, lc_error *err)
{
    return file_write_atomic_parts(path, text, len, NULL, 0, err);
}
