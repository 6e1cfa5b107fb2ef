/* A run's context as JSON and as --version's lines (context_report.h). */
#include "report/context_report.h"

#include "device/device.h"
#include "lstmcheck/runner.h"

#include <stdio.h>
#include <string.h>

static void put_machine(json_writer *w, const run_context_machine *m)
{
    json_object_begin(w);
    if (!m->known) {
        json_member_string(w, "error", m->why);
        json_object_end(w);
        return;
    }
    json_member_string(w, "key", m->key.slug);
    json_key(w, "fields");
    json_object_begin(w);
    for (int i = 0; i < m->key.nfields; i++)
        json_member_string(w, m->key.names[i], m->key.values[i]);
    json_object_end(w);
    json_object_end(w);
}

void report_context_json(json_writer *w, const run_context *c)
{
    json_object_begin(w);
#define PUT_TEXT(member, size, key, label) json_member_string(w, key, c->member[0] ? c->member : NULL);
    RUN_CONTEXT_TEXTS(PUT_TEXT)
#undef PUT_TEXT
    if (c->tree == RUN_TREE_UNKNOWN)
        json_member_null(w, "tree_clean");
    else
        json_member_bool(w, "tree_clean", c->tree == RUN_TREE_CLEAN);
    json_key(w, "threads");
    json_object_begin(w);
    json_member_int(w, "cpus_online", c->cpus_online);
    json_member_int(w, "cpus_allowed", c->cpus_allowed);
    json_member_int(w, "openblas", c->openblas_threads);
    json_object_end(w);
    json_key(w, "env");
    json_object_begin(w);
    for (int i = 0; i < RUN_CONTEXT_ENVS; i++)
        json_member_string(w, run_context_env_name(i), c->env_set[i] ? c->env[i] : NULL);
    json_object_end(w);
    json_key(w, "machines");
    json_object_begin(w);
    for (int d = 0; d < LC_DEVICE_COUNT; d++) {
        if (!c->machine[d].asked)
            continue;
        json_key(w, lc_device_name((lc_device)d));
        put_machine(w, &c->machine[d]);
    }
    json_object_end(w);
    json_object_end(w);
}

void report_context_machine(const run_context_machine *m, char *buf, size_t n)
{
    if (!m->known) {
        snprintf(buf, n, "not known: %s", m->why);
        return;
    }
    char fields[1024];
    machine_key_describe(&m->key, fields, sizeof fields);
    snprintf(buf, n, "%s (%s)", m->key.slug, fields);
}

void report_version(FILE *f, const run_context *c)
{
    fprintf(f, "lstmcheck %s\n", c->lstmcheck_version);
    fprintf(f, "commit:     %s%s\n", c->commit,
            c->tree == RUN_TREE_DIRTY     ? " with uncommitted changes"
            : c->tree == RUN_TREE_UNKNOWN ? " (not built in a git checkout)"
                                          : "");
    fprintf(f, "build:      %s, %s%s%s\n", c->build_type, c->c_compiler, c->cuda_compiler[0] ? ", " : "",
            c->cuda_compiler);
    fprintf(f, "runner ABI: %d (include/lstmcheck/runner.h)\n", LSTMCHECK_RUNNER_ABI_VERSION);
    fprintf(f, "OpenBLAS:   %s\n", c->openblas);
    fprintf(f, "oneDNN:     %s\n", c->onednn);
    fprintf(f, "CUDA:       %s\n", c->cuda);
    fprintf(f, "cuDNN:      %s\n", c->cudnn);
}
