/* Files written so that no reader ever sees half of one (see files.h). */
#include "base/files.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* Knuth's MMIX linear congruential step, for the fallback below */
#define LCG_MULTIPLIER 6364136223846793005ull
#define LCG_INCREMENT 1442695040888963407ull

/* FILE_TEMP_RANDOM_CHARS letters and digits from the kernel's random
 * source; should it fail (getrandom refused), from the clock, the pid and
 * a counter, which still differ between calls and processes. */
static void random_name_part(char out[FILE_TEMP_RANDOM_CHARS + 1])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned counter;
    unsigned char bytes[FILE_TEMP_RANDOM_CHARS];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t x = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^ ((uint64_t)getpid() << 17) ^ ++counter;
        for (size_t i = 0; i < sizeof bytes; i++) {
            x = x * LCG_MULTIPLIER + LCG_INCREMENT;
            bytes[i] = (unsigned char)(x >> 56);
        }
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        out[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
    out[FILE_TEMP_RANDOM_CHARS] = '\0';
}

/* A new temporary file for path, its name in tmp: an open descriptor, or
 * -1 with err. O_EXCL and O_NOFOLLOW: whatever is at the name already (a
 * planted link) is neither followed nor written; another name is tried. */
static int create_temp(const char *path, char *tmp, size_t n, lc_error *err)
{
    for (int attempt = 0; attempt < FILE_TEMP_TRIES; attempt++) {
        char part[FILE_TEMP_RANDOM_CHARS + 1];
        random_name_part(part);
        if (snprintf(tmp, n, "%s" FILE_TEMP_MARK "%ld.%s", path, (long)getpid(), part) >= (int)n) {
            lc_error_set(err, "path too long: %s", path);
            return -1;
        }
        const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_CREATE_MODE);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            lc_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
            return -1;
        }
    }
    lc_error_set(err, "cannot write beside %s: %d temporary names in a row were taken", path, FILE_TEMP_TRIES);
    return -1;
}

int file_write_atomic_parts(const char *path, const void *a, size_t alen, const void *b,
                              size_t blen, lc_error *err)
{
    char tmp[4096];
    const int fd = create_temp(path, tmp, sizeof tmp, err);
    if (fd < 0)
        return 1;
    errno = 0;
    int failed = fd_write_all(fd, a, alen) || fd_write_all(fd, b, blen) || (fsync(fd) != 0 && errno != EINVAL);
    int why = errno;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        why = errno;
    }
    if (failed) {
        lc_error_set(err, "cannot write %s: %s", tmp, why ? strerror(why) : "the write ended early");
        unlink(tmp);
        return 1;
    }
    if (rename(tmp, path) != 0) {
        lc_error_set(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return 1;
    }
    sync_parent(path);
    return 0;
}

int file_write_atomic(const char *path, const char *text, size_t len, lc_error *err)
{
    return file_write_atomic_parts(path, text, len, NULL, 0, err);
}

lc_status file_open_regular(const char *path, int *fd, long long *size, lc_error *err)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0) {
        const int why = errno;
        lc_error_set(err, "%s: %s", path, strerror(why));
        return why == ENOENT ? LC_MISSING : LC_BAD_INPUT;
    }
    struct stat st;
    if (fstat(*fd, &st) != 0)
        lc_error_set(err, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        lc_error_set(err, "%s: not a regular file", path);
    else {
        *size = (long long)st.st_size;
        return LC_OK;
    }
    close(*fd);
    *fd = -1;
    return LC_BAD_INPUT;
}

lc_status file_read_regular(const char *path, long max_bytes, char **text, size_t *len, lc_error *err)
{
    *text = NULL;
    *len = 0;
    int fd;
    long long size;
    lc_status rc = file_open_regular(path, &fd, &size, err);
    if (rc != LC_OK)
        return rc;
    rc = LC_BAD_INPUT;
    if (size > max_bytes)
        lc_error_set(err, "%s: %lld bytes; at most %ld are read", path, size, max_bytes);
    else if (!(*text = malloc((size_t)size + 1)))
        lc_error_set(err, "%s: out of memory", path);
    else if (read(fd, *text, (size_t)size) != (ssize_t)size)
        lc_error_set(err, "%s: cannot read", path);
    else
        rc = LC_OK;
    close(fd);
    if (rc != LC_OK) {
        free(*text);
        *text = NULL;
        return rc;
    }
    (*text)[size] = '\0';
    *len = (size_t)size;
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

/* The writer's pid of a temporary file of base, "<base>.tmp.<pid>.<random>"
 * or an earlier version's "<base>.tmp.<pid>"; 0 when name is neither. */
static long temp_writer(const char *name, const char *base)
{
    const size_t n = strlen(base), mark = strlen(FILE_TEMP_MARK);
    if (strncmp(name, base, n) || strncmp(name + n, FILE_TEMP_MARK, mark))
        return 0;
    const char *digits = name + n + mark;
    if (*digits < '0' || *digits > '9')
        return 0;
    char *end;
    const long pid = strtol(digits, &end, 10);
    if (pid <= 0)
        return 0;
    if (!*end)
        return pid;
    if (*end != '.' || strlen(end + 1) != FILE_TEMP_RANDOM_CHARS)
        return 0;
    for (const char *c = end + 1; *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    return pid;
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
