/* Building another commit beside this build (see revbuild.h). */
#include "perf/revbuild.h"

#include "build_config.h"
#include "base/files.h"
#include "base/proc.h"
#include "device/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAMP_OK "ok\n"
#define STAMP_FAILED "failed\n"
#define STAMP_MAX_BYTES 64 /* a longer file is no stamp of ours */

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return 1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST;
}

/* The stamp's text, "" when there is none or it is not a regular file (a
 * FIFO planted there is refused at once, not waited on). */
static void read_stamp(const char *path, char *buf, size_t n)
{
    char *text;
    size_t len;
    lc_error ignored;
    buf[0] = '\0';
    if (file_read_regular(path, STAMP_MAX_BYTES, &text, &len, &ignored) == LC_OK) {
        snprintf(buf, n, "%s", text);
        free(text);
    }
}

/* Atomically (base/files.h): a link planted at the stamp is replaced, its
 * target never written. A stamp that cannot be written is not an error:
 * the next comparison builds again. */
static void write_stamp(const char *path, const char *text)
{
    lc_error ignored;
    file_write_atomic(path, text, strlen(text), &ignored);
}

/* Run one step of the build with its output in the log; 0 when it worked. */
static int step(char *const argv[], const char *log)
{
    FILE *f = fopen(log, "a");
    if (f) {
        fprintf(f, "$");
        for (int i = 0; argv[i]; i++)
            fprintf(f, " %s", argv[i]);
        fprintf(f, "\n");
        fclose(f);
    }
    proc_io io = {.log_path = log};
    lc_error e;
    return proc_run(argv, &io, &e) != 0;
}

/* The worktree at dir/src (made once) and its build at dir/build. */
static int build_steps(const char *source_dir, const char *sha, lc_device device, const char *dir,
                       const char *log)
{
    char src[4096], bld[4096], jobs[16], cuda[64], buildtype[128], cc[4200];
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(bld, sizeof bld, "%s/build", dir);
    snprintf(jobs, sizeof jobs, "-j%ld", sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(cuda, sizeof cuda, "-DLSTMCHECK_CUDA=%s", device == LC_DEVICE_CUDA ? "ON" : "OFF");
    snprintf(buildtype, sizeof buildtype, "-DCMAKE_BUILD_TYPE=%s", LSTMCHECK_BUILD_TYPE);
    snprintf(cc, sizeof cc, "-DCMAKE_C_COMPILER=%s", LSTMCHECK_C_COMPILER);
    char gitdir[4200];
    snprintf(gitdir, sizeof gitdir, "%s/.git", src);
    if (!exists(gitdir)) {
        char *prune[] = {"git", "-C", (char *)source_dir, "worktree", "prune", NULL};
        char *add[] = {"git", "-C", (char *)source_dir, "worktree", "add", "--detach", "--force", src,
                       (char *)sha, NULL};
        if (step(prune, log) || step(add, log))
            return 1;
    }
    char archs[128] = "";
    if (device == LC_DEVICE_CUDA && LSTMCHECK_CUDA_ARCHITECTURES[0])
        snprintf(archs, sizeof archs, "-DCMAKE_CUDA_ARCHITECTURES=%s", LSTMCHECK_CUDA_ARCHITECTURES);
    char *configure[] = {LSTMCHECK_CMAKE_COMMAND, "-S", src, "-B", bld, "-G", LSTMCHECK_CMAKE_GENERATOR,
                         buildtype, cc, cuda, archs[0] ? archs : NULL, NULL};
    char *build[] = {LSTMCHECK_CMAKE_COMMAND, "--build", bld, "--target", "lstmcheck", jobs, NULL};
    return step(configure, log) || step(build, log);
}

int revbuild_lstmcheck(const char *source_dir, const char *sha, lc_device device, char *exe, size_t n,
                       lc_error *err)
{
    char dir[4096], lockpath[4200], stamp[4200], log[4200], state[32];
    snprintf(dir, sizeof dir, "%s/ab/%.12s-%s", LSTMCHECK_BINARY_DIR, sha, lc_device_name(device));
    snprintf(lockpath, sizeof lockpath, "%s.lock", dir);
    snprintf(stamp, sizeof stamp, "%s/stamp", dir);
    snprintf(log, sizeof log, "%s/build.log", dir);
    snprintf(exe, n, "%s/build/lstmcheck", dir);
    if (mkdir_p(dir)) {
        lc_error_set(err, "cannot create %s: %s", dir, strerror(errno));
        return 1;
    }
    int lock = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, FILE_CREATE_MODE);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        lc_error_set(err, "cannot lock %s: %s", lockpath, strerror(errno));
        if (lock >= 0)
            close(lock);
        return 1;
    }
    int rc = 0;
    read_stamp(stamp, state, sizeof state);
    if (!strcmp(state, STAMP_FAILED)) {
        lc_error_set(err, "commit %.12s did not build here (log: %s; delete %s to try again)", sha, log, dir);
        rc = 1;
    } else if (strcmp(state, STAMP_OK) || !exists(exe)) {
        fprintf(stderr, "building commit %.12s for the A/B comparison in %s ...\n", sha, dir);
        double t0 = wall_seconds();
        unlink(log);
        rc = build_steps(source_dir, sha, device, dir, log) || !exists(exe);
        write_stamp(stamp, rc ? STAMP_FAILED : STAMP_OK);
        if (rc)
            lc_error_set(err, "commit %.12s does not build here (log: %s)", sha, log);
        else
            fprintf(stderr, "built commit %.12s in %.0f s\n", sha, wall_seconds() - t0);
    }
    flock(lock, LOCK_UN);
    close(lock);
    return rc;
}
