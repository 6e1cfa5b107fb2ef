/* libFuzzer target: arbitrary bytes as a baseline file (src/perf/baseline.h).
 * Besides the sanitizers: whatever the reader accepts, the writer
 * (baseline_save) must write and the reader must read back identically. */
#define _GNU_SOURCE /* memfd_create */
#include "perf/baseline.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* abort() with why: libFuzzer reports the input as a crash */
#define REQUIRE(cond, ...)                                                                                        \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            fprintf(stderr, "fuzz_baseline_reader: " __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                                                  \
            abort();                                                                                              \
        }                                                                                                         \
    } while (0)

static int input_fd = -1;      /* the shim's in-memory file */
static char input_path[64];    /* /proc/self/fd/N */
static char saved_dir[4000];   /* a directory of our own for the round trip */
static char saved_path[4096];  /* where the round trip writes */

static void remove_saved(void)
{
    unlink(saved_path);
    rmdir(saved_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* baseline_save writes <path>.tmp.<pid> and renames it: a directory of
     * our own in $TMPDIR (run_fuzzer.sh: one in memory, removed after the
     * run), else in memory when /dev/shm is there. After a finding it is
     * left behind with the file written. */
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
                      : access("/dev/shm", W_OK) == 0   ? "/dev/shm"
                                                        : "/tmp";
    snprintf(saved_dir, sizeof saved_dir, "%s/fuzz_baseline_reader.XXXXXX", tmp);
    REQUIRE(mkdtemp(saved_dir), "cannot make a directory in %s", tmp);
    snprintf(saved_path, sizeof saved_path, "%s/saved.json", saved_dir);
    atexit(remove_saved);
    input_fd = memfd_create("fuzz_input", 0);
    REQUIRE(input_fd >= 0, "memfd_create failed");
    snprintf(input_path, sizeof input_path, "/proc/self/fd/%d", input_fd);
    return 0;
}

/* The bytes, parsed as a baseline file: the one place that calls the reader
 * on them. baseline_parse (the reader on a buffer) is used where baseline.h
 * declares it (CMake defines FUZZ_HAVE_BASELINE_PARSE); before it existed,
 * the bytes went through a file to baseline_load. */
static lc_status parse_bytes(const uint8_t *data, size_t size, baseline_file *out, lc_error *err)
{
#ifdef FUZZ_HAVE_BASELINE_PARSE
    return baseline_parse((const char *)data, size, "fuzz-input", out, err);
#else
    REQUIRE(ftruncate(input_fd, 0) == 0 && pwrite(input_fd, data, size, 0) == (ssize_t)size, "cannot write the input");
    return baseline_load(input_path, out, err);
#endif
}

static void require_same_series(const baseline_series *a, const baseline_series *b, int i, const char *what)
{
    REQUIRE(a->n == b->n, "entries[%d].%s: %d samples read, %d after a write", i, what, a->n, b->n);
    for (int k = 0; k < a->n; k++)
        REQUIRE(!memcmp(&a->samples[k], &b->samples[k], sizeof a->samples[k]),
                "entries[%d].%s.samples[%d]: %.17g read, %.17g after a write", i, what, k, a->samples[k],
                b->samples[k]);
}

#define REQUIRE_SAME_STRING(a, b, i, field)                                                                       \
    REQUIRE(!strcmp((a)->field, (b)->field), "entries[%d]." #field ": '%s' read, '%s' after a write", i, (a)->field, \
            (b)->field)

static void require_same_entry(const baseline_entry *a, const baseline_entry *b, int i)
{
    REQUIRE_SAME_STRING(a, b, i, runner);
    REQUIRE(!memcmp(&a->shape, &b->shape, sizeof a->shape), "entries[%d].shape differs after a write", i);
    REQUIRE(a->seed == b->seed, "entries[%d].seed: %llu read, %llu after a write", i, a->seed, b->seed);
    REQUIRE_SAME_STRING(a, b, i, lstmcheck_version);
    REQUIRE_SAME_STRING(a, b, i, git_commit);
    REQUIRE_SAME_STRING(a, b, i, date);
    REQUIRE_SAME_STRING(a, b, i, control);
    REQUIRE(a->reproducible == b->reproducible && a->rounds == b->rounds,
            "entries[%d].reproducible or rounds differs after a write", i);
    REQUIRE(!memcmp(&a->noise_fwd, &b->noise_fwd, sizeof a->noise_fwd) &&
                !memcmp(&a->noise_bwd, &b->noise_bwd, sizeof a->noise_bwd),
            "entries[%d].noise differs after a write", i);
    require_same_series(&a->fwd, &b->fwd, i, "forward");
    require_same_series(&a->bwd, &b->bwd, i, "backward");
    require_same_series(&a->ctl, &b->ctl, i, "control");
    require_same_series(&a->fwd_ratio, &b->fwd_ratio, i, "forward_ratio");
    require_same_series(&a->bwd_ratio, &b->bwd_ratio, i, "backward_ratio");
}

/* A file the reader accepted: written, read back, the same. */
static void round_trip(const baseline_file *a)
{
    baseline_file b;
    lc_error err = {{0}};
    REQUIRE(baseline_save(saved_path, a, &err) == 0, "the writer refused what the reader accepted: %s", err.msg);
    const lc_status rc = baseline_load(saved_path, &b, &err);
    REQUIRE(rc == LC_OK, "the reader refused what the writer wrote from what it accepted: %s", err.msg);
    /* a difference below names the field; the file written stays in saved_path */
    REQUIRE(a->machine.device == b.machine.device && a->machine.nfields == b.machine.nfields,
            "machine: device %d with %d fields read, %d with %d after a write", (int)a->machine.device,
            a->machine.nfields, (int)b.machine.device, b.machine.nfields);
    for (int i = 0; i < a->machine.nfields; i++)
        REQUIRE(!strcmp(a->machine.names[i], b.machine.names[i]) && !strcmp(a->machine.values[i], b.machine.values[i]),
                "machine.fields: '%s': '%s' read, '%s': '%s' after a write", a->machine.names[i],
                a->machine.values[i], b.machine.names[i], b.machine.values[i]);
    REQUIRE(machine_key_equal(&a->machine, &b.machine), "the machine differs after a write");
    REQUIRE(!strcmp(a->machine.slug, b.machine.slug), "the machine slug differs after a write: '%s', '%s'",
            a->machine.slug, b.machine.slug);
    REQUIRE(a->nentries == b.nentries, "%d entries read, %d after a write", a->nentries, b.nentries);
    for (int i = 0; i < a->nentries; i++)
        require_same_entry(&a->entries[i], &b.entries[i], i);
    baseline_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    baseline_file b;
    memset(&b, 0, sizeof b); /* a reader that refuses without touching it is fine too */
    lc_error err = {{0}};
    const lc_status rc = parse_bytes(data, size, &b, &err);
    if (rc == LC_OK) {
        round_trip(&b);
        baseline_free(&b);
    } else {
        REQUIRE(rc == LC_BAD_INPUT || rc == LC_MISSING, "status %d", (int)rc);
        REQUIRE(err.msg[0], "refused without a message");
        /* a refused file leaves nothing behind (baseline.h: b empty) */
        REQUIRE(b.nentries == 0 && b.entries == NULL, "a refused file left %d entries", b.nentries);
    }
    return 0;
}
