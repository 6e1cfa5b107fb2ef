/* Running another program (see proc.h). */
#include "base/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: stdout/stderr where io says, then exec; never returns. */
static void exec_child(char *const argv[], const proc_io *io, int out_pipe)
{
    int log = open(io && io->log_path ? io->log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (log < 0)
        _exit(127);
    dup2(out_pipe >= 0 ? out_pipe : log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0)
        dup2(null_in, STDIN_FILENO);
    if (io && io->extra_env) {
        char name[128];
        const char *eq = strchr(io->extra_env, '=');
        if (eq && (size_t)(eq - io->extra_env) < sizeof name) {
            memcpy(name, io->extra_env, (size_t)(eq - io->extra_env));
            name[eq - io->extra_env] = '\0';
            setenv(name, eq + 1, 1);
        }
    }
    execvp(argv[0], argv);
    _exit(127);
}

static void read_capture(int fd, char *out, size_t n)
{
    size_t used = 0;
    char sink[512];
    for (;;) {
        char *dst = used + 1 < n ? out + used : sink;
        size_t room = used + 1 < n ? n - 1 - used : sizeof sink;
        ssize_t k = read(fd, dst, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (dst != sink)
            used += (size_t)k;
    }
    if (n)
        out[used] = '\0';
}

int proc_run(char *const argv[], const proc_io *io, lc_error *err)
{
    const int capture = io && io->out && io->out_size;
    int fds[2] = {-1, -1};
    if (capture && pipe(fds) != 0) {
        lc_error_set(err, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        lc_error_set(err, "fork: %s", strerror(errno));
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        return -1;
    }
    if (pid == 0) {
        if (capture)
            close(fds[0]);
        exec_child(argv, io, capture ? fds[1] : -1);
    }
    if (capture) {
        close(fds[1]);
        read_capture(fds[0], io->out, io->out_size);
        close(fds[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            lc_error_set(err, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFSIGNALED(status)) {
        lc_error_set(err, "%s was killed by signal %d (%s)", argv[0], WTERMSIG(status), strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WEXITSTATUS(status) == 127) {
        lc_error_set(err, "cannot run %s", argv[0]);
        return -1;
    }
    return WEXITSTATUS(status);
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

void proc_die_with_parent(void)
{
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it died before the request was in place */
        _exit(1);
}
