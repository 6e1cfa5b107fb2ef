/* A run's context, collected once (perf/context.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "perf/context.h"

#include "base/files.h"
#include "build_config.h" /* generated: perf/build_config.h.in */
#include "check/isolate.h"
#include "runners/runner.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int openblas_get_num_threads(void);

const char *run_context_env_name(int i)
{
    static const char *const names[] = {
#define RUN_CONTEXT_ENV_NAME(name) #name,
        RUN_CONTEXT_ENV(RUN_CONTEXT_ENV_NAME)
#undef RUN_CONTEXT_ENV_NAME
    };
    return i >= 0 && i < RUN_CONTEXT_ENVS ? names[i] : "?";
}

const char *run_context_tree_name(run_context_tree tree)
{
    return tree == RUN_TREE_CLEAN   ? "clean"
           : tree == RUN_TREE_DIRTY ? "with uncommitted changes"
                                    : "unknown (not built in a git checkout)";
}

/* "<sha>", "<sha>-dirty" or "unknown" (cmake/build_commit.cmake) into the
 * commit and the tree's state. */
static void build_commit(run_context *c, const char *built_from)
{
    const char *dirty = strstr(built_from, "-dirty");
    const int len = dirty ? (int)(dirty - built_from) : (int)strlen(built_from);
    snprintf(c->commit, sizeof c->commit, "%.*s", len, built_from);
    c->tree = !strcmp(built_from, "unknown") ? RUN_TREE_UNKNOWN : dirty ? RUN_TREE_DIRTY : RUN_TREE_CLEAN;
}

static void build_and_libraries(run_context *c)
{
    snprintf(c->lstmcheck_version, sizeof c->lstmcheck_version, "%s", LSTMCHECK_VERSION);
    snprintf(c->build_type, sizeof c->build_type, "%s",
             LSTMCHECK_BUILD_TYPE[0] ? LSTMCHECK_BUILD_TYPE : "no build type");
    snprintf(c->c_compiler, sizeof c->c_compiler, "%s", LSTMCHECK_C_COMPILER_NAME);
    if (device_cuda_built())
        snprintf(c->cuda_compiler, sizeof c->cuda_compiler, "nvcc %s for sm_%s", LSTMCHECK_CUDA_COMPILER_VERSION,
                 LSTMCHECK_CUDA_ARCHITECTURES);
    machine_blas_version(c->openblas, sizeof c->openblas);
    onednn_describe_version(c->onednn, sizeof c->onednn);
    machine_cuda_versions(c->cuda, sizeof c->cuda, c->cudnn, sizeof c->cudnn); /* no CUDA context */
}

/* v into dst (n bytes); a value that does not fit is cut at a character
 * (UTF-8) boundary and ends in "...", so that a cut never reads as given. */
static void copy_value(char *dst, size_t n, const char *v)
{
    const size_t len = strlen(v);
    if (len < n) {
        memcpy(dst, v, len + 1);
        return;
    }
    size_t keep = n - 4;
    while (keep > 0 && ((unsigned char)v[keep] & 0xC0) == 0x80) /* not inside a character */
        keep--;
    memcpy(dst, v, keep);
    memcpy(dst + keep, "...", 4);
}

static void threads_and_env(run_context *c)
{
    cpu_set_t set;
    c->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    c->cpus_allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : c->cpus_online;
    c->openblas_threads = openblas_get_num_threads();
    for (int i = 0; i < RUN_CONTEXT_ENVS; i++) {
        const char *v = getenv(run_context_env_name(i));
        c->env_set[i] = v != NULL;
        copy_value(c->env[i], sizeof c->env[i], v ? v : "");
    }
}

static void read_machine(lc_device device, run_context_machine *m)
{
    lc_error err = {{0}};
    memset(m, 0, sizeof *m);
    m->asked = 1;
    m->known = machine_key_current(device, &m->key, &err) == 0;
    if (!m->known)
        snprintf(m->why, sizeof m->why, "%s", err.msg[0] ? err.msg : "unknown why");
}

static int machine_child(void *arg, int fd)
{
    (void)arg;
    run_context_machine m;
    read_machine(LC_DEVICE_CUDA, &m);
    return fd_write_all(fd, &m, sizeof m);
}

static int machine_parent(void *arg, int fd, lc_error *err)
{
    run_context_machine *m = arg;
    if (fd_read_all(fd, m, sizeof *m)) {
        lc_error_set(err, "the process reading the GPU's key sent nothing");
        return 1;
    }
    /* our own child's bytes, but read as any: every text ends, the count holds */
    m->why[sizeof m->why - 1] = '\0';
    m->key.slug[sizeof m->key.slug - 1] = '\0';
    if (m->key.nfields < 0 || m->key.nfields > MACHINE_FIELDS)
        m->key.nfields = 0;
    for (int i = 0; i < MACHINE_FIELDS; i++) {
        m->key.names[i][sizeof m->key.names[i] - 1] = '\0';
        m->key.values[i][sizeof m->key.values[i] - 1] = '\0';
    }
    return 0;
}

/* A GPU's key in a child where this process must not touch CUDA (it will
 * fork GPU runners), else here. */
static void machine_of(lc_device device, run_context_machine *m)
{
    lc_error err = {{0}};
    if (device != LC_DEVICE_CUDA || !isolate_gpu_work()) {
        read_machine(device, m);
        return;
    }
    if (isolate_run(machine_child, machine_parent, m, &err) != 0) {
        *m = (run_context_machine){.asked = 1};
        snprintf(m->why, sizeof m->why, "%s", err.msg);
    }
}

void run_context_collect(run_context *c, const char *built_from, const int asked[LC_DEVICE_COUNT])
{
    memset(c, 0, sizeof *c);
    const time_t now = time(NULL);
    struct tm utc;
    strftime(c->date, sizeof c->date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
    build_commit(c, built_from);
    build_and_libraries(c);
    threads_and_env(c);
    for (int d = 0; asked && d < LC_DEVICE_COUNT; d++)
        if (asked[d])
            machine_of((lc_device)d, &c->machine[d]);
}
