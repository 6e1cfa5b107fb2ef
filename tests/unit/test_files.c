/* Atomic writes and what is planted beside them (issue 19): links and FIFOs
 * at the temporary name the writer used to take, <path>.tmp.<pid>, and at
 * the target; failures leave no temporary file; stale ones are found. */
#include "unit.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/files.h"
#include "base/json.h"
#include "check/npy.h"

#define PLANTED_TEXT "precious: not lstmcheck's to write\n"
#define WRITTEN_TEXT "the new contents\n"
/* a writer or reader that blocks on a planted FIFO is stopped by SIGALRM
 * after this long (the test then fails instead of hanging) */
#define HANG_ALARM_S 20
#define SMALL_FILE_LIMIT 64 /* bytes: RLIMIT_FSIZE for a write that must fail */

static int scratch_dir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/lstmcheck_files_XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void remove_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* 1 when the file at path (followed if a link) holds exactly text */
static int holds(const char *path, const char *text)
{
    char *got;
    size_t len;
    lc_error err;
    if (file_read_regular(path, 1 << 20, &got, &len, &err) != LC_OK)
        return 0;
    const int same = len == strlen(text) && !memcmp(got, text, len);
    free(got);
    return same;
}

static int write_plain(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    return f && fputs(text, f) >= 0 && fclose(f) == 0;
}

static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* The three ways a file is written (files.h directly, the JSON writer of
 * baselines, traces and index.json, and .npy files), each into path. */
typedef enum writer_kind { WRITE_TEXT, WRITE_JSON, WRITE_NPY, WRITER_KINDS } writer_kind;
static const char *const writer_names[WRITER_KINDS] = {"file_write_atomic", "json_write_file", "npy_write"};
static const float npy_values[3] = {1, 2, 3};

static int write_with(writer_kind k, const char *path, lc_error *err)
{
    if (k == WRITE_TEXT)
        return file_write_atomic(path, WRITTEN_TEXT, strlen(WRITTEN_TEXT), err);
    if (k == WRITE_JSON) {
        json_writer w;
        json_init(&w, JSON_INDENTED);
        json_object_begin(&w);
        json_member_string(&w, "text", "new");
        json_object_end(&w);
        const int rc = json_write_file(&w, path, err);
        json_free(&w);
        return rc;
    }
    const size_t dims[1] = {3};
    return npy_write(path, NPY_F32, npy_values, 1, dims, err);
}

/* 1 when path holds what write_with(k) writes */
static int written_by(writer_kind k, const char *path)
{
    if (k == WRITE_TEXT)
        return holds(path, WRITTEN_TEXT);
    if (k == WRITE_JSON)
        return holds(path, "{\n  \"text\": \"new\"\n}\n");
    npy_dtype dt;
    void *data;
    int nd;
    size_t dims[8];
    lc_error err;
    if (npy_read(path, &dt, &data, &nd, dims, &err))
        return 0;
    const int same = dt == NPY_F32 && nd == 1 && dims[0] == 3 && !memcmp(data, npy_values, sizeof npy_values);
    free(data);
    return same;
}

/* One writer, with a link at the target and, at the name the old writer
 * took for this very process, a link (fifo 0) or a FIFO (fifo 1). */
static int planted_case(writer_kind k, int fifo)
{
    char dir[64], target[128], old_temp[160], victim_target[128], victim_temp[128];
    CHECK(scratch_dir(dir, sizeof dir), "mkdtemp");
    snprintf(target, sizeof target, "%s/out", dir);
    snprintf(old_temp, sizeof old_temp, "%s" FILE_TEMP_MARK "%ld", target, (long)getpid());
    snprintf(victim_target, sizeof victim_target, "%s/victim_target", dir);
    snprintf(victim_temp, sizeof victim_temp, "%s/victim_temp", dir);
    CHECK(write_plain(victim_target, PLANTED_TEXT) && write_plain(victim_temp, PLANTED_TEXT), "setup");
    CHECK(symlink(victim_target, target) == 0, "symlink: %s", strerror(errno));
    CHECK(fifo ? mkfifo(old_temp, 0600) == 0 : symlink(victim_temp, old_temp) == 0, "plant: %s", strerror(errno));
    const mode_t old_mask = umask(022);
    lc_error err = {{0}};
    alarm(HANG_ALARM_S);
    const int rc = write_with(k, target, &err);
    alarm(0);
    umask(old_mask);
    const char *what = writer_names[k];
    CHECK(rc == 0, "%s beside a planted %s: %s", what, fifo ? "FIFO" : "link", err.msg);
    CHECK(holds(victim_temp, PLANTED_TEXT), "%s wrote through the link at %s", what, old_temp);
    CHECK(holds(victim_target, PLANTED_TEXT), "%s wrote through the link at its target %s", what, target);
    struct stat st;
    CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode), "%s: %s is not a regular file now", what, target);
    CHECK((st.st_mode & 0777) == (FILE_CREATE_MODE & ~022), "%s: mode %o, not %o", what,
          (unsigned)(st.st_mode & 0777), (unsigned)(FILE_CREATE_MODE & ~022));
    CHECK(written_by(k, target), "%s: %s does not hold what was written", what, target);
    CHECK(lstat(old_temp, &st) == 0 && (fifo ? S_ISFIFO(st.st_mode) : S_ISLNK(st.st_mode)),
          "%s: what was planted at %s is gone or changed", what, old_temp);
    CHECK(entries_in(dir) == 4, "%s: %d entries in %s, not 4: a temporary file was left", what, entries_in(dir), dir);
    remove_tree(dir);
    return 0;
}

int test_files_planted_links_not_followed(void)
{
    for (int k = 0; k < WRITER_KINDS; k++)
        for (int fifo = 0; fifo <= 1; fifo++)
            if (planted_case((writer_kind)k, fifo))
                return 1;
    return 0;
}

/* The temporary file named in a failed rename's message ("cannot rename
 * TMP to PATH: ..."), into tmp. 1 when found. */
static int temp_named_in(const char *msg, char *tmp, size_t n)
{
    const char *from = strstr(msg, "cannot rename ");
    const char *to = from ? strstr(from, " to ") : NULL;
    if (!to)
        return 0;
    from += strlen("cannot rename ");
    snprintf(tmp, n, "%.*s", (int)(to - from), from);
    return 1;
}

/* 1 when tmp is <path>.tmp.<pid>.<FILE_TEMP_RANDOM_CHARS letters and digits> */
static int temp_name_form(const char *tmp, const char *path, long pid)
{
    char head[4200];
    snprintf(head, sizeof head, "%s" FILE_TEMP_MARK "%ld.", path, pid);
    if (strncmp(tmp, head, strlen(head)) || strlen(tmp + strlen(head)) != FILE_TEMP_RANDOM_CHARS)
        return 0;
    for (const char *c = tmp + strlen(head); *c; c++)
        if (!isalnum((unsigned char)*c))
            return 0;
    return 1;
}

/* A failure leaves no temporary file: the rename fails (a folder with
 * something in it at the target), or the write does (a file size limit).
 * The failed rename names the temporary file: pid and random part, a new
 * one each time, of the form file_remove_stale_temps removes once its
 * writer is gone. */
int test_files_temp_removed_on_failure(void)
{
    char dir[64], target[128], inside[160], names[2][4200];
    CHECK(scratch_dir(dir, sizeof dir), "mkdtemp");
    snprintf(target, sizeof target, "%s/out", dir);
    snprintf(inside, sizeof inside, "%s/keep", target);
    CHECK(mkdir(target, 0700) == 0 && write_plain(inside, PLANTED_TEXT), "setup");
    lc_error err;
    for (int i = 0; i < 2; i++) {
        CHECK(file_write_atomic(target, WRITTEN_TEXT, strlen(WRITTEN_TEXT), &err) == 1, "wrote over a folder");
        CHECK(temp_named_in(err.msg, names[i], sizeof names[i]), "the message names no temporary file: %s", err.msg);
        CHECK(temp_name_form(names[i], target, (long)getpid()), "temporary name %s", names[i]);
        CHECK(access(names[i], F_OK) != 0 && entries_in(dir) == 1, "a temporary file was left: %s", names[i]);
    }
    CHECK(strcmp(names[0], names[1]), "the same temporary name twice: %s", names[0]);
    const pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0); /* its pid is now a dead writer's */
    char stale[4300];
    snprintf(stale, sizeof stale, "%s" FILE_TEMP_MARK "%ld%s", target, (long)child,
             strrchr(names[0], '.'));
    CHECK(write_plain(stale, PLANTED_TEXT), "setup");
    CHECK(file_remove_stale_temps(target) == 1 && access(stale, F_OK) != 0,
          "a dead writer's temporary file of the writer's own form was not removed: %s", stale);
    remove_tree(target);

    CHECK(write_plain(target, PLANTED_TEXT), "setup");
    struct rlimit old_limit, small;
    CHECK(getrlimit(RLIMIT_FSIZE, &old_limit) == 0, "getrlimit");
    small = old_limit;
    small.rlim_cur = SMALL_FILE_LIMIT;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
    char big[4 * SMALL_FILE_LIMIT];
    memset(big, 'x', sizeof big);
    const int rc = file_write_atomic(target, big, sizeof big, &err);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    signal(SIGXFSZ, old_handler);
    CHECK(rc == 1 && strstr(err.msg, "cannot write"), "a write past the file size limit: %d %s", rc, err.msg);
    CHECK(holds(target, PLANTED_TEXT) && entries_in(dir) == 1, "the failed write changed %s or left a file", dir);
    remove_tree(dir);
    return 0;
}

/* Temporary files of writers that are gone are removed, in the form this
 * writer makes and in the old one; a live writer's, another file's and
 * names of another form are kept. */
int test_files_stale_temps(void)
{
    char dir[64], target[128];
    CHECK(scratch_dir(dir, sizeof dir), "mkdtemp");
    snprintf(target, sizeof target, "%s/out.json", dir);
    const pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    const long dead = (long)child, live = (long)getpid();
    static const char random_part[] = "AbCdEf012345";
    CHECK(strlen(random_part) == FILE_TEMP_RANDOM_CHARS, "the test's random part is not of the writer's length");
    struct {
        const char *base;
        long pid;
        const char *tail;
        int removed;
    } const names[] = {
        {"out.json", dead, ".AbCdEf012345", 1}, /* this writer's form, writer gone */
        {"out.json", dead, "", 1},              /* the old form, writer gone */
        {"out.json", live, ".AbCdEf012345", 0}, /* a live writer's */
        {"out.json", dead, ".AbC", 0},          /* not of this writer's form */
        {"out.json", dead, ".AbCdEf012345x", 0},
        {"out.json", dead, ".AbCdEf01234-", 0},
        {"other.json", dead, ".AbCdEf012345", 0}, /* another file's */
    };
    const int n = (int)(sizeof names / sizeof names[0]);
    char paths[sizeof names / sizeof names[0]][256];
    int expected = 0;
    for (int i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s" FILE_TEMP_MARK "%ld%s", dir, names[i].base, names[i].pid,
                 names[i].tail);
        CHECK(write_plain(paths[i], PLANTED_TEXT), "setup %s", paths[i]);
        expected += names[i].removed;
    }
    const int removed = file_remove_stale_temps(target);
    for (int i = 0; i < n; i++)
        CHECK((access(paths[i], F_OK) != 0) == names[i].removed, "%s was %s", paths[i],
              names[i].removed ? "kept" : "removed");
    CHECK(removed == expected, "%d removed, %d expected", removed, expected);
    remove_tree(dir);
    return 0;
}

/* A FIFO where a .npy file is read is refused at once, not waited on. */
int test_npy_read_refuses_fifo(void)
{
    char dir[64], path[128];
    CHECK(scratch_dir(dir, sizeof dir), "mkdtemp");
    snprintf(path, sizeof path, "%s/x.npy", dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
    npy_dtype dt;
    void *data;
    int nd;
    size_t dims[8];
    lc_error err;
    alarm(HANG_ALARM_S);
    const int rc = npy_read(path, &dt, &data, &nd, dims, &err);
    alarm(0);
    CHECK(rc == 1 && strstr(err.msg, "not a regular file"), "a FIFO read as a .npy file: %d %s", rc, err.msg);
    remove_tree(dir);
    return 0;
}
