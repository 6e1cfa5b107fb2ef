/* Unit tests of what A/B comparisons stand on: the git queries, the build of
 * another commit (a failure remembered), and the choice of the commit that
 * a machine without a baseline compares against. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/baseline.h"
#include "build_config.h"
#include "base/gitrev.h"
#include "perf/revbuild.h"

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

#define GIT_COMMIT_ALL "git -C %s -c user.name=t -c user.email=t@t commit -qam %s"

/* A repository in a fresh temporary folder with one commit of src/a.c. */
static int make_repo(char *dir)
{
    if (!mkdtemp(dir))
        return 1;
    return sh("git init -q %s && mkdir %s/src", dir, dir) || sh("echo one > %s/src/a.c && git -C %s add -A", dir, dir) ||
           sh(GIT_COMMIT_ALL, dir, "one");
}

/* make_repo, then a commit (message: one word) that does not build; its
 * sha. The build of a commit is kept under <build>/ab/<sha>: tests that
 * may run at once give different messages, so that their commits, made in
 * the same second, are not one commit sharing one build folder. */
static int make_broken_repo(char *dir, const char *message, char sha[GIT_SHA_LEN + 1])
{
    return make_repo(dir) ||
           sh("echo 'message(FATAL_ERROR \"broken on purpose\")' > %s/CMakeLists.txt && git -C %s add -A", dir, dir) ||
           sh(GIT_COMMIT_ALL, dir, message) || git_head(dir, sha) != LC_OK;
}

static int git_missing(void)
{
    return system("git --version > /dev/null 2>&1") != 0;
}

int test_gitrev_queries(void)
{
    if (git_missing())
        return UNIT_SKIP;
    char dir[] = "/tmp/lstmcheck_git_XXXXXX", what[256], sha[GIT_SHA_LEN + 1], head[GIT_SHA_LEN + 1];
    int dirty;
    lc_error err;
    CHECK(!make_repo(dir), "cannot make a repository in %s", dir);
    CHECK(git_head(dir, head) == LC_OK && strlen(head) == GIT_SHA_LEN, "head");
    CHECK(git_built_tree_dirty(dir, &dirty, what, sizeof what) == LC_OK && !dirty, "a clean tree is dirty: %s", what);
    CHECK(!sh("mkdir -p %s/docs && echo x > %s/docs/x.md", dir, dir), "write");
    CHECK(git_built_tree_dirty(dir, &dirty, what, sizeof what) == LC_OK && !dirty,
          "a change outside what is built counts: %s", what);
    CHECK(!sh("echo two >> %s/src/a.c%s", dir, ""), "write");
    CHECK(git_built_tree_dirty(dir, &dirty, what, sizeof what) == LC_OK && dirty && strstr(what, "src/a.c"), "modified: %s", what);
    CHECK(!sh("git -C %s checkout -q src/a.c && mkdir %s/kernels", dir, dir), "restore");
    CHECK(!sh("touch %s/kernels/new.cu%s", dir, ""), "write");
    CHECK(git_built_tree_dirty(dir, &dirty, what, sizeof what) == LC_OK && dirty && strstr(what, "kernels/new.cu"),
          "untracked source: %s", what);
    /* names */
    CHECK(git_resolve_buildable(dir, "HEAD", sha, &err) == LC_OK && !strcmp(sha, head), "HEAD");
    CHECK(git_resolve_buildable(dir, "no-such-rev", sha, &err) == LC_BAD_INPUT && strstr(err.msg, "unknown"),
          "%s", err.msg);
    CHECK(git_resolve_buildable(dir, "11d6bf8-dirty", sha, &err) == LC_BAD_INPUT &&
          strstr(err.msg, "uncommitted"), "%s", err.msg);
    CHECK(git_resolve_buildable(dir, "--help", sha, &err) == LC_BAD_INPUT, "an option passed as a name");
    char plain[] = "/tmp/lstmcheck_nogit_XXXXXX";
    CHECK(mkdtemp(plain), "mkdtemp");
    CHECK(git_resolve_buildable(plain, "HEAD", sha, &err) == LC_UNSUPPORTED && strstr(err.msg, "not a git checkout"),
          "%s", err.msg);
    CHECK(git_head(plain, sha) == LC_UNSUPPORTED, "head of a plain folder");
    /* a shallow clone does not have the first commit */
    CHECK(!sh("echo three >> %s/src/a.c%s", dir, "") && !sh(GIT_COMMIT_ALL, dir, "two"), "second commit");
    char shallow[300];
    snprintf(shallow, sizeof shallow, "%s/shallow", plain);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "git clone -q --depth 1 file://%s %s", dir, shallow);
    CHECK(system(cmd) == 0, "shallow clone");
    CHECK(git_resolve_buildable(shallow, head, sha, &err) == LC_UNSUPPORTED && strstr(err.msg, "shallow"),
          "%s", err.msg);
    CHECK(git_commit_is_reproducible("0123abc") && git_commit_is_reproducible(head), "hashes");
    CHECK(!git_commit_is_reproducible("0123abc-dirty") && !git_commit_is_reproducible("unknown") &&
          !git_commit_is_reproducible("12ab"), "not hashes");
    CHECK(!sh("rm -rf %s %s", dir, plain), "cleanup");
    return 0;
}

/* A commit that does not build: a clear error naming the log, and the
 * failure remembered (no second attempt) until its folder is removed. */
int test_revbuild_failure_remembered(void)
{
    if (git_missing())
        return UNIT_SKIP;
    char dir[] = "/tmp/lstmcheck_rb_XXXXXX", sha[GIT_SHA_LEN + 1], exe[4096];
    CHECK(!make_broken_repo(dir, "broken", sha), "a repository with a commit that does not build");
    lc_error err;
    CHECK(revbuild_lstmcheck(dir, sha, LC_DEVICE_CPU, exe, sizeof exe, &err) == 1, "a broken commit built");
    CHECK(strstr(err.msg, "does not build here") && strstr(err.msg, "build.log"), "%s", err.msg);
    char log[4096], cmd[4300];
    snprintf(log, sizeof log, "%s/ab/%.12s-cpu/build.log", LSTMCHECK_BINARY_DIR, sha);
    snprintf(cmd, sizeof cmd, "grep -q 'broken on purpose' %s", log);
    CHECK(system(cmd) == 0, "the log %s does not say why", log);
    CHECK(revbuild_lstmcheck(dir, sha, LC_DEVICE_CPU, exe, sizeof exe, &err) == 1 && strstr(err.msg, "did not build"),
          "not remembered: %s", err.msg);
    snprintf(cmd, sizeof cmd, "rm -rf %s/ab/%.12s-cpu %s/ab/%.12s-cpu.lock %s", LSTMCHECK_BINARY_DIR, sha,
             LSTMCHECK_BINARY_DIR, sha, dir);
    CHECK(system(cmd) == 0, "cleanup");
    return 0;
}

/* Links planted in the build folder of another commit are not followed
 * (issue 19): one at the stamp is replaced (its target keeps its bytes), one
 * at the lock file is refused (nothing created where it points). */
int test_revbuild_planted_links(void)
{
    if (git_missing())
        return UNIT_SKIP;
    char dir[] = "/tmp/lstmcheck_rbl_XXXXXX", sha[GIT_SHA_LEN + 1], exe[4096];
    CHECK(!make_broken_repo(dir, "broken_with_links", sha), "a repository with a commit that does not build");
    char build_dir[4096], stamp[4200], lock[4200], victim[4200], elsewhere[4200], cmd[8600];
    snprintf(build_dir, sizeof build_dir, "%s/ab/%.12s-cpu", LSTMCHECK_BINARY_DIR, sha);
    snprintf(stamp, sizeof stamp, "%s/stamp", build_dir);
    snprintf(lock, sizeof lock, "%s.lock", build_dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(elsewhere, sizeof elsewhere, "%s/created_through_the_lock", dir);
    CHECK(!sh("mkdir -p %s && echo precious > %s", build_dir, victim), "setup");
    CHECK(symlink(victim, stamp) == 0, "symlink");
    lc_error err;
    CHECK(revbuild_lstmcheck(dir, sha, LC_DEVICE_CPU, exe, sizeof exe, &err) == 1 &&
          strstr(err.msg, "does not build here"), "%s", err.msg);
    snprintf(cmd, sizeof cmd, "grep -qx precious %s && test -f %s && ! test -L %s && grep -qx failed %s", victim,
             stamp, stamp, stamp);
    CHECK(system(cmd) == 0, "the stamp's link was followed, or the stamp not written (%s)", cmd);
    CHECK(!sh("rm -rf %s %s", build_dir, lock), "cleanup");
    CHECK(symlink(elsewhere, lock) == 0, "symlink");
    CHECK(revbuild_lstmcheck(dir, sha, LC_DEVICE_CPU, exe, sizeof exe, &err) == 1 && strstr(err.msg, "cannot lock"),
          "a link at the lock file: %s", err.msg);
    CHECK(access(elsewhere, F_OK) != 0, "the lock file's link was followed: %s was created", elsewhere);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s", build_dir, lock, dir);
    CHECK(system(cmd) == 0, "cleanup");
    return 0;
}

static int write_baseline(const char *dir, const char *name, const char *device, const char *entries)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fprintf(f, "{\"format\": \"lstmcheck-baseline\", \"version\": 1, \"machine\": {\"device\": \"%s\", "
               "\"fields\": {\"k\": \"v\"}}, \"entries\": [%s]}", device, entries);
    return fclose(f);
}

#define ENTRY(runner, seq, commit, date, extra)                                                              \
    "{\"runner\": \"" runner "\", \"shape\": {\"seqLength\": " #seq ", \"numLayers\": 1, \"inputSize\": 3, "  \
    "\"hiddenSize\": 4, \"miniBatch\": 2}, \"seed\": 17, \"lstmcheck_version\": \"0.1.0\", \"git_commit\": \"" \
    commit "\", \"date\": \"" date "\", \"control_workload\": \"x\", \"rounds\": 1, " extra                   \
    "\"noise\": {\"forward\": 0.01, \"backward\": 0.01}, \"forward\": {\"samples\": [1, 2]}, \"backward\": "  \
    "{\"samples\": [1, 2]}, \"control\": {\"samples\": [1, 1]}, \"forward_ratio\": {\"samples\": [1, 2]}, "  \
    "\"backward_ratio\": {\"samples\": [1, 2]}}"

int test_baseline_reference_commit(void)
{
    char dir[] = "/tmp/lstmcheck_ref_XXXXXX", commit[48], why[600];
    CHECK(mkdtemp(dir), "mkdtemp");
    const lstm_shape s2 = {.seq_length = 2, .batch = 2, .input_size = 3, .hidden_size = 4, .num_layers = 1};
    const lstm_shape s9 = {.seq_length = 9, .batch = 2, .input_size = 3, .hidden_size = 4, .num_layers = 1};
    CHECK(baseline_reference_commit(dir, LC_DEVICE_CPU, "cpu", &s2, commit, why, sizeof why) == 1 &&
          strstr(why, "no committed cpu baseline"), "empty folder: %s", why);
    CHECK(!write_baseline(dir, "a.json", "cpu", ENTRY("cpu", 2, "11d6bf8-dirty", "2026-01-03T00:00:00Z", "")),
          "write");
    CHECK(baseline_reference_commit(dir, LC_DEVICE_CPU, "cpu", &s2, commit, why, sizeof why) == 1 &&
          strstr(why, "cannot be rebuilt") && strstr(why, "11d6bf8-dirty"), "only dirty: %s", why);
    CHECK(!write_baseline(dir, "b.json", "cpu",
                          ENTRY("cpu", 2, "aaaaaaa", "2026-01-01T00:00:00Z", "") ", "
                          ENTRY("ref", 2, "bbbbbbb", "2026-01-02T00:00:00Z", "") ", "
                          ENTRY("ref", 5, "ddddddd", "2026-01-04T00:00:00Z", "\"reproducible\": false, ")),
          "write");
    CHECK(!write_baseline(dir, "c.json", "cuda", ENTRY("cpu", 2, "ccccccc", "2026-01-05T00:00:00Z", "")), "write");
    /* the asked (runner, shape) first, even when older */
    CHECK(!baseline_reference_commit(dir, LC_DEVICE_CPU, "cpu", &s2, commit, why, sizeof why) && !strcmp(commit, "aaaaaaa") &&
          strstr(why, "b.json") && strstr(why, "this runner and shape"), "%s: %s", commit, why);
    /* else the newest reproducible entry of the device */
    CHECK(!baseline_reference_commit(dir, LC_DEVICE_CPU, "cpu", &s9, commit, why, sizeof why) && !strcmp(commit, "bbbbbbb"),
          "%s: %s", commit, why);
    CHECK(!baseline_reference_commit(dir, LC_DEVICE_CUDA, "cpu", &s2, commit, why, sizeof why) && !strcmp(commit, "ccccccc"),
          "%s: %s", commit, why);
    /* the reproducible mark is written and read back */
    char path[512];
    snprintf(path, sizeof path, "%s/b.json", dir);
    baseline_file b;
    lc_error err;
    CHECK(baseline_load(path, &b, &err) == LC_OK, "%s", err.msg);
    CHECK(b.entries[0].reproducible && !b.entries[2].reproducible, "reproducible as read");
    CHECK(!baseline_save(path, &b, &err), "%s", err.msg);
    baseline_free(&b);
    CHECK(baseline_load(path, &b, &err) == LC_OK && b.entries[0].reproducible && !b.entries[2].reproducible,
          "reproducible after a round trip");
    baseline_free(&b);
    CHECK(!sh("rm -rf %s%s", dir, ""), "cleanup");
    return 0;
}
