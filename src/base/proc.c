/* Child processes (see proc.h). */
#define _GNU_SOURCE /* memfd_create, pipe2, MAP_ANONYMOUS */
#include "base/proc.h"

#include "base/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- phases: what a child tells its parent it is in ---- */

/* One page shared by a PROC_CHILD_WORK child and its parent. A seqlock:
 * the child makes seq odd while it writes, so the parent never takes half
 * of one phase's name with the other's start. */
typedef struct phase_page {
    atomic_uint seq;
    atomic_llong started_ns; /* CLOCK_MONOTONIC at the phase's start; 0: in none */
    char what[PROC_PHASE_MAX];
} phase_page;

static double g_child_timeout;    /* seconds; 0: none */
static phase_page *g_page;        /* this process's page, when it is a PROC_CHILD_WORK child */
static int g_stdout_is_stderr;    /* this process is such a child: fd 1 is stderr for good */
static int g_foreign_depth;       /* calls into foreign code in progress (proc_foreign_begin) */
static int g_saved_stdout = -1;   /* fd 1 as it was, while a foreign call has it on stderr */

/* How often a waiting parent looks at its child's phase: a twentieth of
 * the timeout, within these bounds (a 2 s timeout kills within 2.1 s). */
#define WATCH_TICKS_PER_TIMEOUT 20
#define WATCH_TICK_MIN_MS 10
#define WATCH_TICK_MAX_MS 500
#define NS_PER_S 1000000000LL

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * NS_PER_S + t.tv_nsec;
}

/* A phase begins (what, started) or ends (NULL, 0). In the timed calls of
 * a child: no formatting, two clock reads per call in all. */
static void page_write(phase_page *pg, const char *what, long long started)
{
    const unsigned s = atomic_load_explicit(&pg->seq, memory_order_relaxed);
    atomic_store_explicit(&pg->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (what) {
        const size_t n = strnlen(what, sizeof pg->what - 1);
        memcpy(pg->what, what, n);
        pg->what[n] = '\0';
    }
    atomic_store_explicit(&pg->started_ns, started, memory_order_relaxed);
    atomic_store_explicit(&pg->seq, s + 2, memory_order_release);
}

/* 1 when the child has been in its phase longer than timeout_s; what: its name. */
static int phase_overdue(phase_page *pg, double timeout_s, char *what)
{
    char name[PROC_PHASE_MAX];
    const unsigned s1 = atomic_load_explicit(&pg->seq, memory_order_acquire);
    memcpy(name, pg->what, sizeof name);
    const long long started = atomic_load_explicit(&pg->started_ns, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if ((s1 & 1) || s1 != atomic_load_explicit(&pg->seq, memory_order_relaxed))
        return 0; /* being written: the next look sees it whole */
    if (!started || (double)(now_ns() - started) <= timeout_s * NS_PER_S)
        return 0;
    name[sizeof name - 1] = '\0';
    memcpy(what, name, sizeof name);
    return 1;
}

void proc_set_child_timeout(double seconds)
{
    g_child_timeout = seconds > 0 ? seconds : 0;
}

double proc_child_timeout(void)
{
    return g_child_timeout;
}

/* fd 1 to stderr for a foreign call; this process's own stdout kept aside */
static void stdout_aside(void)
{
    fflush(stdout); /* what this process printed goes where it belongs first */
    g_saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (g_saved_stdout >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) != STDOUT_FILENO) {
        close(g_saved_stdout);
        g_saved_stdout = -1;
    }
}

static void stdout_back(void)
{
    fflush(stdout); /* what the call printed goes to stderr */
    if (g_saved_stdout >= 0) {
        dup2(g_saved_stdout, STDOUT_FILENO);
        close(g_saved_stdout);
    }
    g_saved_stdout = -1;
}

void proc_foreign_begin(const char *phase)
{
    if (g_foreign_depth++ > 0)
        return;
    if (g_page)
        page_write(g_page, phase, now_ns());
    if (!g_stdout_is_stderr)
        stdout_aside();
}

void proc_foreign_end(void)
{
    if (g_foreign_depth == 0 || --g_foreign_depth > 0)
        return;
    if (!g_stdout_is_stderr)
        stdout_back();
    if (g_page)
        page_write(g_page, NULL, 0);
}

void proc_keep_standard_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* the lowest free number is fd: those below it are open */
        int got = open(fd ? "/dev/full" : "/dev/null", fd ? O_WRONLY : O_RDONLY);
        if (got < 0)
            got = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd)
            close(got);
    }
}

int proc_own_output_done(void)
{
    const int lost = fflush(stdout) != 0 || ferror(stdout);
    if (!g_stdout_is_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) == STDOUT_FILENO)
        g_stdout_is_stderr = 1;
    return lost ? -1 : 0;
}

/* ---- forked children ---- */

void proc_die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it died before the request was in place */
        _exit(1);
}

/* The child's side of proc_fork, before its work. */
static void become_child(proc_child_kind kind, pid_t parent, phase_page *page)
{
    proc_die_with_parent(parent);
    if (g_saved_stdout >= 0) { /* forked during a foreign call: this process's stdout back first */
        dup2(g_saved_stdout, STDOUT_FILENO);
        close(g_saved_stdout);
    }
    g_saved_stdout = -1;
    g_foreign_depth = 0;
    g_page = NULL;
    if (kind == PROC_CHILD_EXEC)
        return;
    setpgid(0, 0);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    g_stdout_is_stderr = 1;
    g_page = page;
}

/* The pipe from the child, the memory file its result is kept in, and the
 * phase page of a PROC_CHILD_WORK child. 0, or 1 with err. */
static int open_channels(proc_child_kind kind, int fds[2], int *keep, phase_page **page, lc_error *err)
{
    if (pipe2(fds, O_CLOEXEC) != 0) {
        lc_error_set(err, "pipe: %s", strerror(errno));
        return 1;
    }
    *keep = memfd_create("lstmcheck-child-result", MFD_CLOEXEC);
    *page = kind == PROC_CHILD_WORK
                ? mmap(NULL, sizeof **page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                : NULL;
    if (*keep >= 0 && *page != MAP_FAILED)
        return 0;
    lc_error_set(err, "%s: %s", *keep < 0 ? "memfd_create" : "mmap", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    if (*keep >= 0)
        close(*keep);
    if (*page && *page != MAP_FAILED)
        munmap(*page, sizeof **page);
    return 1;
}

/* 1 once the child has ended (left unreaped), or is no child of ours any
 * more (reaped elsewhere: nothing to wait for). */
static int ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return si.si_pid == pid;
}

/* One read of the child's bytes into keep: 0 at the end of the pipe. */
static int keep_some(int from, int keep)
{
    char buf[1 << 16];
    const ssize_t k = read(from, buf, sizeof buf);
    if (k < 0)
        return errno == EINTR;
    if (k > 0) /* what cannot be kept leaves the result short, and parent() says so */
        (void)fd_write_all(keep, buf, (size_t)k);
    return k > 0;
}

/* Wait up to tick_ms for the child's bytes and keep them: 0 at the end of
 * the pipe, else 1. */
static int relay(int from, int keep, int tick_ms)
{
    struct pollfd p = {.fd = from, .events = POLLIN};
    return poll(&p, 1, tick_ms) <= 0 || keep_some(from, keep);
}

/* What is left in the pipe once the child has ended (a process it started
 * may still hold the pipe open: no waiting for its end). */
static void drain(int from, int keep)
{
    struct pollfd p = {.fd = from, .events = POLLIN};
    while (poll(&p, 1, 0) > 0 && keep_some(from, keep))
        ;
}

static void sleep_ms(int ms)
{
    const struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Keep what the child writes until it ends, killing it (its group) when it
 * stays in one announced phase past the timeout; then reap it into out. */
static void watch(pid_t pid, proc_child_kind kind, int from, int keep, phase_page *page, proc_outcome *out)
{
    const int tick = out->timeout_s > 0 ? (int)(1000 * out->timeout_s / WATCH_TICKS_PER_TIMEOUT) : WATCH_TICK_MAX_MS;
    const int tick_ms = tick < WATCH_TICK_MIN_MS ? WATCH_TICK_MIN_MS : tick > WATCH_TICK_MAX_MS ? WATCH_TICK_MAX_MS : tick;
    int open = 1, idle_ms = 1;
    while (!ended(pid)) {
        if (page && out->timeout_s > 0 && !out->timed_out && phase_overdue(page, out->timeout_s, out->phase)) {
            out->timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        if (open) {
            open = relay(from, keep, tick_ms);
        } else { /* the pipe is closed: the child is on its way out */
            sleep_ms(idle_ms);
            idle_ms = 2 * idle_ms < tick_ms ? 2 * idle_ms : tick_ms;
        }
    }
    /* what it started and left running; its group id is still taken (it is
     * a zombie until reaped below), so this reaches no other group */
    if (kind == PROC_CHILD_WORK)
        kill(-pid, SIGKILL);
    if (open)
        drain(from, keep);
    int status = 0, got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    out->exit_status = got == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    out->signal = got == pid && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* What a work child started and left outside its process group (setsid):
 * while the child runs this process is a child subreaper, so that such
 * orphans come here rather than to init; once the child has ended they
 * are killed and reaped, and then what they started, which comes here in
 * turn. lstmcheck has one child at a time, so every child this process
 * has then is such an orphan. */
#define ADOPTED_ROUNDS_MAX 16
#define ADOPTED_PER_ROUND 64 /* orphans killed per look at /proc */

/* Up to n children of this process (from /proc: their parent is us). */
static int own_children(pid_t *pids, int n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    const pid_t me = getpid();
    int found = 0;
    for (struct dirent *e; found < n && (e = readdir(d));) {
        char path[64], stat[512];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        const ssize_t k = fd < 0 ? -1 : read(fd, stat, sizeof stat - 1);
        if (fd >= 0)
            close(fd);
        stat[k > 0 ? k : 0] = '\0';
        const char *after_name = strrchr(stat, ')'); /* the name may hold spaces and ')' */
        int ppid = 0;
        if (after_name && sscanf(after_name, ") %*c %d", &ppid) == 1 && ppid == me)
            pids[found++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return found;
}

static void kill_adopted(int was_subreaper)
{
    pid_t pids[ADOPTED_PER_ROUND];
    int n;
    for (int round = 0; round < ADOPTED_ROUNDS_MAX && (n = own_children(pids, ADOPTED_PER_ROUND)) > 0; round++)
        for (int i = 0; i < n; i++) {
            kill(pids[i], SIGKILL);
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    prctl(PR_SET_CHILD_SUBREAPER, was_subreaper);
}

int proc_fork(proc_child_kind kind, proc_child_fn child, proc_parent_fn parent, void *arg, proc_outcome *out,
              lc_error *err)
{
    return proc_fork_within(kind, child, parent, arg, g_child_timeout, out, err);
}

int proc_fork_within(proc_child_kind kind, proc_child_fn child, proc_parent_fn parent, void *arg, double timeout_s,
                     proc_outcome *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    out->exit_status = -1;
    out->timeout_s = timeout_s > 0 ? timeout_s : 0;
    int fds[2], keep;
    phase_page *page;
    if (open_channels(kind, fds, &keep, &page, err))
        return 1;
    fflush(stdout); /* else the child would print the parent's buffered text again */
    fflush(stderr);
    const pid_t me = getpid();
    int was_subreaper = 0;
    if (kind == PROC_CHILD_WORK) {
        prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    }
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        close(keep);
        become_child(kind, me, page);
        const int rc = child(arg, fds[1]);
        fflush(stdout);
        fflush(stderr);
        _exit(rc ? 1 : 0); /* no atexit handlers: they belong to the parent */
    }
    if (pid < 0)
        lc_error_set(err, "fork: %s", strerror(errno));
    close(fds[1]);
    int rc = 1;
    if (pid > 0) {
        out->started = 1;
        if (kind == PROC_CHILD_WORK)
            setpgid(pid, pid); /* as the child does: a kill of its group cannot come before the group */
        watch(pid, kind, fds[0], keep, page, out);
    }
    if (kind == PROC_CHILD_WORK)
        kill_adopted(was_subreaper);
    if (pid > 0) {
        rc = out->exit_status != 0;
        if (parent && lseek(keep, 0, SEEK_SET) == 0)
            rc |= parent(arg, keep, err) != 0;
    }
    close(fds[0]);
    close(keep);
    if (page)
        munmap(page, sizeof *page);
    return rc;
}

const char *proc_outcome_text(const proc_outcome *o, char *buf, size_t n)
{
    if (!o->started)
        snprintf(buf, n, "did not start");
    else if (o->timed_out)
        snprintf(buf, n, "timed out after %g s in %s and was killed", o->timeout_s, o->phase);
    else if (o->signal)
        snprintf(buf, n, "was killed by signal %d (%s)", o->signal, strsignal(o->signal));
    else
        snprintf(buf, n, "ended with status %d", o->exit_status);
    return buf;
}

/* ---- programs ---- */

typedef struct exec_job {
    char *const *argv;
    const proc_io *io;
} exec_job;

static int captures(const proc_io *io)
{
    return io && !io->inherit_output && io->out && io->out_size;
}

/* In the child: stdout/stderr where io says, then exec; never returns. */
static int exec_child(void *arg, int out_pipe)
{
    const exec_job *j = arg;
    const proc_io *io = j->io;
    if (!io || !io->inherit_output) {
        int log = open(io && io->log_path ? io->log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0666);
        if (log < 0)
            _exit(127);
        dup2(captures(io) ? out_pipe : log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        int null_in = open("/dev/null", O_RDONLY);
        if (null_in >= 0)
            dup2(null_in, STDIN_FILENO);
    }
    if (io && io->extra_env) {
        char name[128];
        const char *eq = strchr(io->extra_env, '=');
        if (eq && (size_t)(eq - io->extra_env) < sizeof name) {
            memcpy(name, io->extra_env, (size_t)(eq - io->extra_env));
            name[eq - io->extra_env] = '\0';
            setenv(name, eq + 1, 1);
        }
    }
    execvp(j->argv[0], j->argv);
    _exit(127);
}

static int read_capture(void *arg, int fd, lc_error *err)
{
    (void)err;
    const proc_io *io = ((const exec_job *)arg)->io;
    size_t used = 0;
    for (;;) {
        const ssize_t k = read(fd, io->out + used, io->out_size - 1 - used);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        used += (size_t)k;
    }
    io->out[used] = '\0';
    return 0;
}

int proc_run(char *const argv[], const proc_io *io, lc_error *err)
{
    exec_job job = {argv, io};
    proc_outcome o;
    lc_error why = {{0}};
    proc_fork(PROC_CHILD_EXEC, exec_child, captures(io) ? read_capture : NULL, &job, &o, &why);
    if (!o.started) {
        lc_error_set(err, "%s", why.msg);
        return -1;
    }
    if (o.signal) {
        lc_error_set(err, "%s was killed by signal %d (%s)", argv[0], o.signal, strsignal(o.signal));
        return -1;
    }
    if (o.exit_status == 127) {
        lc_error_set(err, "cannot run %s", argv[0]);
        return -1;
    }
    return o.exit_status;
}

void proc_log_last_line(const char *log_path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(log_path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            snprintf(buf, n, "%s", line);
    }
    fclose(f);
}

void proc_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        char path[4096];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}
