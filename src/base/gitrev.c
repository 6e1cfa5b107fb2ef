/* Git queries (see gitrev.h). */
#include "base/gitrev.h"

#include "base/proc.h"
#include "base/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *const git_built_paths[] = {"src", "kernels", "CMakeLists.txt", NULL};

/* git -C dir ARGS...; stdout into out. Returns git's exit status, -1 when
 * git could not run. */
static int git(const char *dir, const char *const *args, char *out, size_t n)
{
    char *argv[16];
    int k = 0;
    argv[k++] = "git";
    argv[k++] = "-C";
    argv[k++] = (char *)dir;
    for (int i = 0; args[i] && k < 15; i++)
        argv[k++] = (char *)args[i];
    argv[k] = NULL;
    proc_io io = {.out = out, .out_size = n};
    lc_error ignored;
    return proc_run(argv, &io, &ignored);
}

static void chomp(char *s)
{
    s[strcspn(s, "\r\n")] = '\0';
}

static int is_full_sha(const char *s)
{
    if (strlen(s) != GIT_SHA_LEN)
        return 0;
    for (int i = 0; i < GIT_SHA_LEN; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_checkout(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-inside-work-tree", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    return !strcmp(out, "true");
}

lc_status git_head(const char *dir, char sha[GIT_SHA_LEN + 1])
{
    char out[128];
    const char *args[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL};
    if (!is_checkout(dir) || git(dir, args, out, sizeof out) != 0)
        return LC_UNSUPPORTED;
    chomp(out);
    if (!is_full_sha(out))
        return LC_UNSUPPORTED;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return LC_OK;
}

/* "XY path" lines of git status into "path, path, ..." (four at most). */
static void list_paths(char *porcelain, char *what, size_t n)
{
    size_t used = 0;
    int listed = 0;
    for (char *line = strtok(porcelain, "\n"); line && used < n; line = strtok(NULL, "\n")) {
        if (listed == 4) {
            snprintf(what + used, n - used, ", ...");
            break;
        }
        used += (size_t)snprintf(what + used, n - used, "%s%s", listed++ ? ", " : "",
                                 strlen(line) > 3 ? line + 3 : line);
    }
}

lc_status git_built_tree_dirty(const char *dir, int *dirty, char *what, size_t n)
{
    char out[4096];
    const char *args[] = {"status", "--porcelain", "--untracked-files=all", "--",
                          git_built_paths[0], git_built_paths[1], git_built_paths[2], NULL};
    what[0] = '\0';
    *dirty = 0;
    if (!is_checkout(dir) || git(dir, args, out, sizeof out) != 0)
        return LC_UNSUPPORTED;
    *dirty = out[0] != '\0';
    list_paths(out, what, n);
    return LC_OK;
}

/* 1 with the full commit when rev names one in dir. */
static int resolve(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1])
{
    if (!rev[0] || rev[0] == '-')
        return 0; /* never let a name pass as an option */
    char spec[GIT_REV_MAX + sizeof "^{commit}"], out[128];
    if (strlen(rev) > GIT_REV_MAX)
        return 0; /* refused by the caller: cut, it could name another commit */
    snprintf(spec, sizeof spec, "%s^{commit}", rev);
    const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    if (!is_full_sha(out))
        return 0;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return 1;
}

int git_is_shallow(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-shallow-repository", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    return !strcmp(out, "true");
}

int git_commit_is_reproducible(const char *commit)
{
    size_t n = strlen(commit);
    if (n < 7 || n > GIT_SHA_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)commit[i]))
            return 0;
    return 1;
}

lc_status git_resolve_buildable(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1], lc_error *err)
{
    size_t len = strlen(rev);
    if (len > GIT_REV_MAX) {
        lc_error_set(err, "revision '%.40s...' is %zu characters long; at most %d", rev, len, GIT_REV_MAX);
        return LC_BAD_INPUT;
    }
    if (len >= 6 && !strcmp(rev + len - 6, "-dirty")) {
        lc_error_set(err, "'%s' names a tree with uncommitted changes (git describe's -dirty): nobody can "
                     "rebuild it", rev);
        return LC_BAD_INPUT;
    }
    if (!is_checkout(dir)) {
        lc_error_set(err, "cannot compare here: %s is not a git checkout", dir);
        return LC_UNSUPPORTED;
    }
    if (resolve(dir, rev, sha))
        return LC_OK;
    if (git_is_shallow(dir)) {
        lc_error_set(err, "cannot compare here: '%s' is not in the history of this shallow clone "
                     "(git fetch --unshallow)", rev);
        return LC_UNSUPPORTED;
    }
    lc_error_set(err, "unknown revision '%s' in %s", rev, dir);
    return LC_BAD_INPUT;
}

/* ---- a file's history ---- */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* file as a folder that exists (its own, or the nearest above it where a
 * commit removed it) and the rest of the path as "./..." there: a
 * pathspec and a <rev>:<path> relative to that folder, never taken for an
 * option. 0 on success. */
static int split_file(const char *file, char *dir, size_t ndir, char *rel, size_t nrel)
{
    const size_t len = strlen(file);
    if (!len || file[len - 1] == '/' || len >= ndir)
        return 1;
    memcpy(dir, file, len + 1);
    for (;;) {
        char *slash = strrchr(dir, '/');
        const char *rest = slash ? file + (slash - dir) + 1 : file;
        if (!slash)
            snprintf(dir, ndir, ".");
        else if (slash == dir)
            snprintf(dir, ndir, "/");
        else
            *slash = '\0';
        if (!slash || slash == dir || is_dir(dir))
            return (size_t)snprintf(rel, nrel, "./%s", rest) >= nrel;
    }
}

/* One "sha\tdate\tsubject" line of git log into c; 0 when it is one. */
static int parse_log_line(char *line, git_file_commit *c)
{
    char *date = strchr(line, '\t'), *subject = date ? strchr(date + 1, '\t') : NULL;
    if (!subject)
        return 1;
    *date++ = '\0';
    *subject++ = '\0';
    if (!is_full_sha(line) || strlen(date) >= sizeof c->date)
        return 1;
    size_t end = strlen(subject); /* git pads a cut subject with spaces */
    while (end && subject[end - 1] == ' ')
        subject[--end] = '\0';
    snprintf(c->sha, sizeof c->sha, "%s", line);
    snprintf(c->date, sizeof c->date, "%s", date);
    snprintf(c->subject, sizeof c->subject, "%.*s", (int)text_cut_length(subject, sizeof c->subject - 1), subject);
    return 0;
}

/* The log's lines, newest first, into commits oldest first. */
static int parse_log(char *out, git_file_commit *commits, int *n, int *cut)
{
    int lines = 0;
    for (char *p = out; *p; lines++)
        p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0');
    *cut = lines > GIT_LOG_MAX;
    *n = lines < GIT_LOG_MAX ? lines : GIT_LOG_MAX;
    char *line = strtok(out, "\n");
    for (int i = *n - 1; i >= 0; i--, line = strtok(NULL, "\n"))
        if (!line || parse_log_line(line, &commits[i]))
            return 1;
    return 0;
}

/* git log of rel in dir into *out (malloc'ed): the buffer grows until the
 * log fits (a subject cut to 72 columns may still take any number of
 * bytes). git's exit status, -1 when it could not run, -2 out of memory. */
static int read_log(const char *dir, const char *rel, char **out)
{
    char count[32];
    snprintf(count, sizeof count, "--max-count=%d", GIT_LOG_MAX + 1);
    /* HEAD's first-parent line: each version judged against the one before
     * it on that line, not against a side branch's; no --follow (a rename
     * starts another file), the path literal (no glob) */
    const char *args[] = {"-c", "log.follow=false", "--literal-pathspecs", "log", "--first-parent", count,
                          "--format=%H%x09%cI%x09%<(72,trunc)%s", "HEAD", "--", rel, NULL};
    for (size_t size = (size_t)(GIT_LOG_MAX + 1) * 128;; size *= 4) {
        free(*out);
        if (size > ((size_t)1 << 30) || !(*out = malloc(size)))
            return *out = NULL, -2;
        (*out)[0] = '\0';
        const int rc = git(dir, args, *out, size);
        if (rc != 0 || strlen(*out) < size - 1)
            return rc;
    }
}

lc_status git_file_log(const char *file, git_file_commit **commits, int *n, int *cut, int *shallow, lc_error *err)
{
    char dir[4096], rel[1024], sha[GIT_SHA_LEN + 1];
    *commits = NULL;
    *n = *cut = *shallow = 0;
    if (split_file(file, dir, sizeof dir, rel, sizeof rel)) {
        lc_error_set(err, "'%s' does not name a file", file);
        return LC_BAD_INPUT;
    }
    if (!is_checkout(dir)) {
        lc_error_set(err, "%s is not in a git checkout (or git is missing): its history is git's", file);
        return LC_UNSUPPORTED;
    }
    if (git_head(dir, sha) != LC_OK)
        return LC_OK; /* no commit yet */
    *shallow = git_is_shallow(dir);
    char *out = NULL;
    *commits = calloc(GIT_LOG_MAX, sizeof **commits);
    int rc = *commits ? read_log(dir, rel, &out) : -2;
    if (rc == 0 && parse_log(out, *commits, n, cut))
        rc = -3;
    free(out);
    if (rc != 0) {
        free(*commits);
        *commits = NULL;
        *n = 0;
        lc_error_set(err, rc == -2 ? "out of host memory" : "git log of %s failed", file);
        return LC_ERROR;
    }
    return LC_OK;
}

lc_status git_file_at(const char *file, const char *sha, size_t max, char **text, size_t *len, lc_error *err)
{
    char dir[4096], rel[1024], spec[GIT_SHA_LEN + 1 + 1024 + 2], out[64];
    *text = NULL;
    *len = 0;
    if (split_file(file, dir, sizeof dir, rel, sizeof rel) || !is_full_sha(sha)) {
        lc_error_set(err, "'%s' at '%s' names no file of a commit", file, sha);
        return LC_BAD_INPUT;
    }
    snprintf(spec, sizeof spec, "%s:%s", sha, rel);
    const char *size_args[] = {"cat-file", "-s", spec, NULL};
    if (git(dir, size_args, out, sizeof out) != 0) {
        /* deleted there, or an object git has lost */
        const char *tree_args[] = {"--literal-pathspecs", "ls-tree", "--name-only", sha, "--", rel, NULL};
        if (git(dir, tree_args, out, sizeof out) == 0 && !out[0])
            return LC_MISSING;
        lc_error_set(err, "git cannot read %s at %.12s", file, sha);
        return LC_BAD_INPUT;
    }
    chomp(out);
    char *end;
    const unsigned long long size = strtoull(out, &end, 10);
    if (end == out || size > max) {
        lc_error_set(err, "%s at %.12s: %s bytes, more than %zu", file, sha, end == out ? "?" : out, max);
        return LC_BAD_INPUT;
    }
    char *buf = malloc((size_t)size + 2); /* room for the end of the pipe to be read */
    if (!buf) {
        lc_error_set(err, "out of host memory for %s at %.12s", file, sha);
        return LC_ERROR;
    }
    const char *blob_args[] = {"cat-file", "blob", spec, NULL};
    buf[0] = '\0';
    const int read = git(dir, blob_args, buf, (size_t)size + 2) == 0;
    if (!read || strlen(buf) != size) {
        const int nul = read && strlen(buf) < size;
        free(buf);
        lc_error_set(err, nul ? "%s at %.12s holds a NUL byte" : "%s at %.12s is no file git can read", file, sha);
        return LC_BAD_INPUT; /* that version cannot be read; the others may */
    }
    *text = buf;
    *len = (size_t)size;
    return LC_OK;
}
