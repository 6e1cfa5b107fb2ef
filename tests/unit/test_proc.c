/* Child processes (src/base/proc.h): they die with their parent, a call
 * into foreign code that outlasts the child timeout is killed and named,
 * and no child writes into this process's stdout. This process becomes a
 * child subreaper where a test kills a parent: the orphans then come here,
 * so how they ended can be waited for (and none is left behind). And the
 * child timeout a command line sets (cmd/session.h). */
#define _DEFAULT_SOURCE /* usleep */
#include "unit.h"

#include "base/files.h"
#include "base/proc.h"
#include "cmd/cli.h"
#include "cmd/session.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long an orphan may take to die after its parent was killed. */
#define DEATH_DEADLINE_S 5.0
#define POLL_US 10000

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A child of parent (its pid from /proc), waited for up to DEATH_DEADLINE_S; -1 if none came. */
static pid_t child_of(pid_t parent)
{
    for (const double end = seconds() + DEATH_DEADLINE_S; seconds() < end; usleep(POLL_US)) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        pid_t found = -1;
        while (d && found < 0 && (de = readdir(d))) {
            char path[300], stat[512];
            snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
            FILE *f = de->d_name[0] >= '1' && de->d_name[0] <= '9' ? fopen(path, "r") : NULL;
            if (!f)
                continue;
            const char *rp = fgets(stat, sizeof stat, f) ? strrchr(stat, ')') : NULL;
            int ppid = 0;
            if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == parent)
                found = atoi(de->d_name);
            fclose(f);
        }
        if (d)
            closedir(d);
        if (found > 0)
            return found;
    }
    return -1;
}

/* How an orphan (now this subreaper's child) ended: its wait status, or -1
 * when it still ran DEATH_DEADLINE_S after its parent was killed (it is
 * killed then). */
static int orphan_end(pid_t pid)
{
    int status;
    for (const double end = seconds() + DEATH_DEADLINE_S; seconds() < end; usleep(POLL_US))
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

/* A program lstmcheck runs (proc_run: the A/B sides, the build of an old
 * commit, git) dies with the process that runs it. */
int test_proc_run_child_dies_with_parent(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "cannot become a subreaper");
    const pid_t runner = fork();
    if (runner == 0) {
        char *argv[] = {"sleep", "60", NULL};
        proc_run(argv, NULL, NULL);
        _exit(0);
    }
    const pid_t program = child_of(runner);
    kill(runner, SIGKILL);
    waitpid(runner, NULL, 0);
    CHECK(program > 0, "proc_run started no program");
    const int status = orphan_end(program);
    CHECK(status != -1, "the program still ran %g s after the process running it was killed", DEATH_DEADLINE_S);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the program ended otherwise: status %d", status);
    return 0;
}

static int grandchild_sleeps(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    sleep_forever();
    return 0;
}

static int child_forks_again(void *arg, int fd)
{
    (void)fd;
    proc_outcome out;
    lc_error err;
    return proc_fork(*(proc_child_kind *)arg, grandchild_sleeps, NULL, arg, &out, &err);
}

/* A forked child and the child it forked die with the process above them. */
int test_proc_fork_children_die_with_parent(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "cannot become a subreaper");
    static proc_child_kind work = PROC_CHILD_WORK;
    const pid_t top = fork();
    if (top == 0) {
        proc_outcome out;
        lc_error err;
        proc_fork(work, child_forks_again, NULL, &work, &out, &err);
        _exit(0);
    }
    const pid_t child = child_of(top);
    const pid_t grandchild = child > 0 ? child_of(child) : -1;
    kill(top, SIGKILL);
    waitpid(top, NULL, 0);
    CHECK(child > 0 && grandchild > 0, "no child (%d) or grandchild (%d)", (int)child, (int)grandchild);
    const int child_status = orphan_end(child), grandchild_status = orphan_end(grandchild);
    CHECK(child_status != -1, "the child still ran %g s after its parent was killed", DEATH_DEADLINE_S);
    CHECK(grandchild_status != -1, "the grandchild still ran %g s after the top was killed", DEATH_DEADLINE_S);
    return 0;
}

/* The race: a parent killed between fork() and the child's request to die
 * with it. The child, asking after its parent died, must exit at once
 * (reading getppid() only then, it would see the reaper and go on). */
int test_proc_die_with_parent_after_parent_died(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "cannot become a subreaper");
    const pid_t parent = fork();
    if (parent == 0) {
        const pid_t me = getpid(); /* recorded before the fork, as proc_fork does */
        if (fork() == 0) {
            while (getppid() == me) /* not scheduled until its parent is gone */
                usleep(POLL_US);
            proc_die_with_parent(me);
            sleep_forever();
        }
        sleep_forever();
    }
    const pid_t late = child_of(parent);
    kill(parent, SIGKILL);
    waitpid(parent, NULL, 0);
    CHECK(late > 0, "no child");
    const int status = orphan_end(late);
    CHECK(status != -1, "a child whose parent died before it asked still ran %g s later", DEATH_DEADLINE_S);
    CHECK(WIFEXITED(status), "it ended otherwise: status %d", status);
    return 0;
}

static int foreign_call_hangs(void *arg, int fd)
{
    (void)fd;
    proc_foreign_begin((const char *)arg);
    sleep_forever();
    return 0;
}

#define IDLE_S 2.5
#define SHORT_TIMEOUT_S 1.0

static int own_work_takes_long(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    proc_foreign_begin("forward()"); /* a quick call, then lstmcheck's own long work */
    proc_foreign_end();
    usleep((useconds_t)(IDLE_S * 1e6));
    return 0;
}

/* A call into foreign code that outlasts the child timeout: the child is
 * killed and the call named; lstmcheck's own work between calls is not
 * timed. */
int test_proc_fork_timeout_names_phase(void)
{
    proc_outcome out;
    lc_error err = {{0}};
    proc_set_child_timeout(SHORT_TIMEOUT_S);
    const double start = seconds();
    const int rc = proc_fork(PROC_CHILD_WORK, foreign_call_hangs, NULL, "forward()", &out, &err);
    const double took = seconds() - start;
    char how[256];
    proc_outcome_text(&out, how, sizeof how);
    const int rc_idle = proc_fork(PROC_CHILD_WORK, own_work_takes_long, NULL, NULL, &out, &err);
    proc_set_child_timeout(0);
    char want[128];
    snprintf(want, sizeof want, "timed out after %g s in forward() and was killed", SHORT_TIMEOUT_S);
    CHECK(rc && strstr(how, want), "%s", how);
    CHECK(took >= SHORT_TIMEOUT_S && took < SHORT_TIMEOUT_S + DEATH_DEADLINE_S, "killed after %.2f s", took);
    CHECK(rc_idle == 0 && !out.timed_out, "own work of %g s was timed out: %s", IDLE_S,
          proc_outcome_text(&out, how, sizeof how));
    return 0;
}

static int leaves_a_process(void *arg, int fd)
{
    (void)arg;
    const pid_t left = fork(); /* holds the pipe open, as a plugin's helper process would */
    if (left == 0)
        sleep_forever();
    return fd_write_all(fd, &left, sizeof left);
}

static int read_pid(void *arg, int fd, lc_error *err)
{
    (void)err;
    return fd_read_all(fd, arg, sizeof(pid_t));
}

/* A child that ends leaving a process it started: the wait ends with the
 * child, and that process is killed (the child's process group) and
 * reaped (it came here as an orphan: this process is a subreaper). */
int test_proc_fork_kills_what_the_child_left(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "cannot become a subreaper");
    pid_t left = -1;
    proc_outcome out;
    lc_error err = {{0}};
    const double start = seconds();
    const int rc = proc_fork(PROC_CHILD_WORK, leaves_a_process, read_pid, &left, &out, &err);
    const double took = seconds() - start;
    CHECK(rc == 0 && left > 0, "%s", err.msg);
    CHECK(took < DEATH_DEADLINE_S, "the wait took %.1f s: it waited for what the child left", took);
    CHECK(kill(left, 0) != 0, "what the child left still runs (or was not reaped)");
    return 0;
}

static int prints(void *arg, int fd)
{
    (void)fd;
    printf("%s\n", (const char *)arg); /* unflushed: the child's exit flushes it */
    return 0;
}

/* fd's file from its start, NUL-terminated. */
static void file_text(int fd, char *buf, size_t n)
{
    const ssize_t k = pread(fd, buf, n - 1, 0);
    buf[k > 0 ? k : 0] = '\0';
}

/* What a child prints goes to stderr; what foreign code prints in this
 * process (proc_foreign_begin/end) goes to stderr; this process's own
 * printing stays on stdout. */
int test_proc_stdout_stays_this_process(void)
{
    FILE *out_file = tmpfile(), *err_file = tmpfile();
    CHECK(out_file && err_file, "no temporary files");
    fflush(stdout);
    fflush(stderr);
    const int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    dup2(fileno(out_file), STDOUT_FILENO);
    dup2(fileno(err_file), STDERR_FILENO);
    proc_outcome o;
    lc_error e = {{0}};
    const int rc = proc_fork(PROC_CHILD_WORK, prints, NULL, "from the child", &o, &e);
    proc_foreign_begin("forward()");
    printf("from foreign code\n");
    proc_foreign_end();
    printf("from this process\n");
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    char out[256], errs[256];
    file_text(fileno(out_file), out, sizeof out);
    file_text(fileno(err_file), errs, sizeof errs);
    CHECK(rc == 0, "%s", e.msg);
    CHECK(!strcmp(out, "from this process\n"), "stdout holds: '%s'", out);
    CHECK(strstr(errs, "from the child") && strstr(errs, "from foreign code"), "stderr holds: '%s'", errs);
    return 0;
}

/* The child timeout a command line gives: --child-timeout; else the
 * default, or a budget of the command where larger (a call as long as the
 * budget is no hang); 0: none. */
static double timeout_of(int argc, char **argv)
{
    cli_options o;
    cli_defaults(&o);
    lc_error err = {{0}};
    const double s = cli_parse(argc, argv, &o, &err) ? -1 : session_child_timeout(&o);
    cli_free(&o);
    return s;
}

int test_child_timeout_from_command_line(void)
{
    char *plain[] = {"lstmcheck", "check"};
    char *given[] = {"lstmcheck", "check", "--child-timeout", "2.5"};
    char *none[] = {"lstmcheck", "list", "--child-timeout", "0"};
    char *budget[] = {"lstmcheck", "bench", "--time-budget", "1000"};
    char *compare[] = {"lstmcheck", "baseline", "compare", "--max-seconds", "900"};
    char *small_budget[] = {"lstmcheck", "bench", "--time-budget", "5"};
    char *negative[] = {"lstmcheck", "check", "--child-timeout", "-1"};
    CHECK(timeout_of(2, plain) == CLI_CHILD_TIMEOUT_S, "default %g", timeout_of(2, plain));
    CHECK(timeout_of(4, given) == 2.5, "given %g", timeout_of(4, given));
    CHECK(timeout_of(4, none) == 0, "0: none, %g", timeout_of(4, none));
    CHECK(timeout_of(4, budget) == 1000, "a larger --time-budget: %g", timeout_of(4, budget));
    CHECK(timeout_of(5, compare) == 900, "a larger --max-seconds: %g", timeout_of(5, compare));
    CHECK(timeout_of(4, small_budget) == CLI_CHILD_TIMEOUT_S, "a smaller budget: %g", timeout_of(4, small_budget));
    CHECK(timeout_of(4, negative) == -1, "a negative timeout is refused");
    return 0;
}

static int leaves_a_session(void *arg, int fd)
{
    (void)arg;
    const pid_t left = fork(); /* a plugin's daemon: out of the child's group */
    if (left == 0) {
        setsid();
        sleep_forever();
    }
    return fd_write_all(fd, &left, sizeof left);
}

/* A child that ends leaving a process that left its process group (setsid,
 * as a daemon does): that process is killed too, and reaped here, where
 * it came as an orphan (it would hold this process's stderr open forever:
 * a pipeline reading it would never end). */
int test_proc_fork_kills_what_left_the_group(void)
{
    pid_t left = -1;
    proc_outcome out;
    lc_error err = {{0}};
    const int rc = proc_fork(PROC_CHILD_WORK, leaves_a_session, read_pid, &left, &out, &err);
    CHECK(rc == 0 && left > 0, "%s", err.msg);
    const int alive = kill(left, 0) == 0;
    if (alive)
        kill(left, SIGKILL);
    CHECK(!alive, "the process the child left in a session of its own still runs");
    return 0;
}
