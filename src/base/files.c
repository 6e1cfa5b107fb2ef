/* Files written so that no reader ever sees half of one (see files.h). */
#include "base/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory holding path, opened read-only (-1 with err). */
static int open_parent(const char *path, lc_error *err)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        lc_error_set(err, "cannot open the folder %s: %s", dir, strerror(errno));
    return fd;
}

/* The rename is durable only once the directory entry is on disk too. */
static void sync_parent(const char *path)
{
    lc_error ignored;
    int fd = open_parent(path, &ignored);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

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
    sync_parent(path);
    return 0;
}

int file_write_atomic(const char *path, const char *text, size_t len, lc_error *err)
{
    return file_write_atomic_parts(path, text, len, NULL, 0, err);
}

lc_status file_read_regular(const char *path, long max_bytes, char **text, size_t *len, lc_error *err)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int why = errno;
        lc_error_set(err, "%s: %s", path, strerror(why));
        return why == ENOENT ? LC_MISSING : LC_BAD_INPUT;
    }
    struct stat st;
    lc_status rc = LC_BAD_INPUT;
    if (fstat(fd, &st) != 0)
        lc_error_set(err, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        lc_error_set(err, "%s: not a regular file", path);
    else if (st.st_size > max_bytes)
        lc_error_set(err, "%s: %lld bytes; at most %ld are read", path, (long long)st.st_size, max_bytes);
    else if (!(*text = malloc((size_t)st.st_size + 1)))
        lc_error_set(err, "%s: out of memory", path);
    else if (read(fd, *text, (size_t)st.st_size) != (ssize_t)st.st_size)
        lc_error_set(err, "%s: cannot read", path);
    else
        rc = LC_OK;
    close(fd);
    if (rc != LC_OK) {
        free(*text);
        *text = NULL;
        return rc;
    }
    (*text)[st.st_size] = '\0';
    *len = (size_t)st.st_size;
    return LC_OK;
}

int file_lock_parent(const char *path, int *fd, lc_error *err)
{
    *fd = open_parent(path, err);
    if (*fd < 0)
        return 1;
    if (flock(*fd, LOCK_EX) != 0) {
        lc_error_set(err, "cannot lock the folder of %s: %s", path, strerror(errno));
        close(*fd);
        *fd = -1;
        return 1;
    }
    return 0;
}

void file_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}

/* The writer's pid of "<base>.tmp.<pid>", or 0 when name is not one. */
static long temp_writer(const char *name, const char *base)
{
    const size_t n = strlen(base);
    if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5))
        return 0;
    char *end;
    long pid = strtol(name + n + 5, &end, 10);
    return *end || pid <= 0 ? 0 : pid;
}

int file_remove_stale_temps(const char *path)
{
    char copy[4096], dcopy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(dcopy, sizeof dcopy, "%s", path);
    const char *base = basename(copy), *dir = dirname(dcopy);
    DIR *d = opendir(dir);
    int removed = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const long pid = temp_writer(de->d_name, base);
        if (!pid || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* not a temporary file of path's, or its writer may live */
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", dir, de->d_name);
        removed += unlink(full) == 0;
    }
    if (d)
        closedir(d);
    return removed;
}

int fd_write_all(int fd, const void *buf, size_t n)
{
    const char *c = buf;
    while (n) {
        const ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

int fd_read_all(int fd, void *buf, size_t n)
{
    char *c = buf;
    while (n) {
        const ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}
