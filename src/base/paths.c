/* Output paths (see paths.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "base/paths.h"
#include "base/files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path's parent into buf: "a/b" -> "a", "b" -> ".", "/b" -> "/". */
static void parent_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, n, ".");
    else if (slash == path)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

/* Can dir take a new entry? Asked by making one and removing it: access()
 * says yes to root everywhere, also where mkdir then fails (/proc, a
 * read-only bind mount). */
static lc_status probe(const char *dir, lc_error *err)
{
    char tmp[PATH_LIMIT + 32];
    snprintf(tmp, sizeof tmp, "%s/.lstmcheck-probe-XXXXXX", dir);
    if (!mkdtemp(tmp)) {
        lc_error_set(err, "cannot create anything in '%s': %s", dir, strerror(errno));
        return LC_BAD_INPUT;
    }
    if (rmdir(tmp) != 0) { /* an append-only folder: what is written there cannot be renamed over either */
        lc_error_set(err, "'%s' takes new entries but lets none be removed (%s left there): %s", dir, tmp,
                     strerror(errno));
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* A copy of path without trailing slashes ("/" stays), or LC_BAD_INPUT. */
static lc_status copy_path(const char *path, char *buf, lc_error *err)
{
    if (!path || !*path) {
        lc_error_set(err, "an empty path");
        return LC_BAD_INPUT;
    }
    size_t len = strlen(path);
    if (len >= PATH_LIMIT) {
        lc_error_set(err, "a path longer than %d bytes", PATH_LIMIT - 1);
        return LC_BAD_INPUT;
    }
    memcpy(buf, path, len + 1);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    return LC_OK;
}

lc_status path_check_writable_dir(const char *path, int may_create, lc_error *err)
{
    char dir[PATH_LIMIT], asked[PATH_LIMIT];
    lc_status rc = copy_path(path, dir, err);
    if (rc)
        return rc;
    memcpy(asked, dir, sizeof asked);
    struct stat st;
    /* up to the nearest ancestor that exists: the one mkdir -p starts in */
    while (stat(dir, &st) != 0) {
        if (errno != ENOENT || !may_create) {
            lc_error_set(err, "%s", errno == ENOTDIR ? "a part of the path is a file, not a directory"
                                                     : strerror(errno));
            return LC_BAD_INPUT;
        }
        char up[PATH_LIMIT];
        parent_of(dir, up, sizeof up);
        if (!strcmp(up, dir)) { /* "." gone: the working directory was removed */
            lc_error_set(err, "'%s': %s", dir, strerror(ENOENT));
            return LC_BAD_INPUT;
        }
        memcpy(dir, up, sizeof dir);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (strcmp(dir, asked))
            lc_error_set(err, "'%s' is not a directory", dir);
        else
            lc_error_set(err, "not a directory");
        return LC_BAD_INPUT;
    }
    return probe(dir, err);
}

lc_status path_check_file_name(const char *path, lc_error *err)
{
    char file[PATH_LIMIT];
    lc_status rc = copy_path(path, file, err);
    if (rc)
        return rc;
    struct stat st;
    if (path[strlen(path) - 1] == '/' || (stat(file, &st) == 0 && S_ISDIR(st.st_mode))) {
        lc_error_set(err, "a directory, not a file name");
        return LC_BAD_INPUT;
    }
    /* the writer renames a new file over what is there: a device, FIFO or
     * socket (as root, /dev/null itself) would be replaced, not written to */
    if (lstat(file, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        lc_error_set(err, "exists and is not a regular file (a device, FIFO or socket is never replaced; "
                          "'-' writes to stdout where the flag takes it)");
        return LC_BAD_INPUT;
    }
    /* nor a link to one (as root, /dev/stdout): the link would go, not the
     * file it names get the output; a link to a file, or to nothing, is
     * replaced itself */
    if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode) && stat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
        lc_error_set(err, "a link to something that is not a regular file (a device, FIFO or socket): the link "
                          "would be replaced, nothing written there");
        return LC_BAD_INPUT;
    }
    /* the writer's temporary name beside it must fit a folder's entry too */
    const char *slash = strrchr(file, '/');
    const size_t name = strlen(slash ? slash + 1 : file), suffix = strlen(FILE_TEMP_MARK) + 10 + 1 + FILE_TEMP_RANDOM_CHARS;
    if (name + suffix > NAME_MAX) {
        lc_error_set(err, "a file name of %zu bytes: at most %zu, for the temporary name it is written to first",
                     name, (size_t)NAME_MAX - suffix);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

lc_status path_check_writable_file(const char *path, lc_error *err)
{
    char file[PATH_LIMIT], dir[PATH_LIMIT];
    lc_status rc = path_check_file_name(path, err);
    if (rc || (rc = copy_path(path, file, err)))
        return rc;
    struct stat st;
    parent_of(file, dir, sizeof dir);
    if (stat(dir, &st) != 0) {
        lc_error_set(err, "output directory '%s': %s", dir, strerror(errno));
        return LC_BAD_INPUT;
    }
    if (!S_ISDIR(st.st_mode)) {
        lc_error_set(err, "output directory '%s' is not a directory", dir);
        return LC_BAD_INPUT;
    }
    return probe(dir, err);
}

int path_mkdir_p(const char *path, lc_error *err)
{
    char buf[PATH_LIMIT];
    if (copy_path(path, buf, err))
        return 1;
    for (char *p = buf + 1;; p++) {
        const char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            lc_error_set(err, "cannot create directory %s: %s", buf, strerror(errno));
            return 1;
        }
        *p = c;
        if (!c)
            return 0;
    }
}

/* Where path is, as an absolute path: the folders that exist resolved
 * (links, "." and ".."), the rest as written without "." and empty parts
 * ("out/", "out/." and "./out" are one place), the last part itself (a
 * link there is replaced, not written through). 0 on success. */
static int place_of(const char *path, char place[PATH_MAX])
{
    if (!*path || strlen(path) >= PATH_MAX)
        return 1;
    if (path[0] == '/')
        snprintf(place, PATH_MAX, "/");
    else if (!getcwd(place, PATH_MAX))
        return 1;
    int exists = 1; /* so far every part named an existing folder */
    for (const char *p = path + strspn(path, "/"); *p; p += strspn(p, "/")) {
        const size_t n = strcspn(p, "/");
        char part[PATH_MAX], next[PATH_MAX], real[PATH_MAX];
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        p += n;
        const int last = !p[strspn(p, "/")];
        if (!strcmp(part, "."))
            continue;
        const size_t len = strlen(place);
        if (snprintf(next, sizeof next, "%s%s%s", place, place[len - 1] == '/' ? "" : "/", part) >= (int)sizeof next)
            return 1;
        struct stat st;
        if (exists && (!last || !strcmp(part, "..")) && !stat(next, &st) && S_ISDIR(st.st_mode) &&
            realpath(next, real)) {
            snprintf(place, PATH_MAX, "%s", real);
            continue;
        }
        exists = 0;
        if (strcmp(part, "..")) {
            snprintf(place, PATH_MAX, "%s", next);
        } else { /* past what exists: as written */
            char *slash = strrchr(place, '/');
            slash[slash == place] = '\0';
        }
    }
    return 0;
}

int path_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return 1;
    if (!lstat(a, &sa) && !lstat(b, &sb)) /* a link is replaced, not written through: itself counts */
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char pa[PATH_MAX], pb[PATH_MAX]; /* not made yet: one place */
    return !place_of(a, pa) && !place_of(b, pb) && !strcmp(pa, pb);
}

int path_within(const char *dir, const char *path)
{
    char pd[PATH_MAX], pp[PATH_MAX];
    struct stat st;
    /* a folder is written through a link to it: where the link leads */
    const int folder = !stat(dir, &st) && S_ISDIR(st.st_mode) && realpath(dir, pd);
    if ((!folder && place_of(dir, pd)) || place_of(path, pp))
        return 0;
    const size_t n = strlen(pd);
    return !strncmp(pd, pp, n) && (pp[n] == '/' || (n == 1 && pp[1])); /* n == 1: dir is the root */
}

int path_link_target(const char *path, char *out, size_t n)
{
    struct stat st;
    char target[PATH_MAX];
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode) || !realpath(path, target) || strlen(target) >= n)
        return 0;
    snprintf(out, n, "%s", target);
    return 1;
}
