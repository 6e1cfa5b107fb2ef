/* The strict baseline reader (perf/baseline.c): anything the writer writes
 * reads back identically over the whole range of BASELINE_LIMITS; what lies
 * outside it, malformed documents, and files that are not regular are
 * refused with the field named; reading is linear; a concurrent writer's
 * entries and a killed writer's temporary file are handled by
 * baseline_store. */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "base/json.h"
#include "model/inputs.h"
#include "perf/baseline.h"
#include "runners/runner.h"

/* A value of limit id: its lowest, its highest, or a random one between. */
static double limit_value(baseline_limit_id id, int pick, lc_rng *rng, int whole)
{
    const baseline_limit *l = &baseline_limits[id];
    if (pick == 0)
        return l->lo;
    if (pick == 1)
        return l->hi;
    const double v = l->lo + (l->hi - l->lo) * lc_rng_uniform(rng);
    return whole ? floor(v) : v;
}

/* A string of exactly len bytes full of what JSON escapes or may: quote,
 * backslash, slash, non-ASCII UTF-8 of two, three and four bytes (control
 * characters are refused: test_baseline_control_characters). */
static void awkward_string(char *out, size_t len, lc_rng *rng)
{
    static const char *const pieces[] = {"\"", "\\", "/", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "a", "Z"};
    const size_t npieces = sizeof pieces / sizeof pieces[0];
    size_t n = 0;
    while (n < len) {
        const char *p = pieces[lc_rng_next(rng) % npieces];
        if (n + strlen(p) > len)
            p = "x";
        memcpy(out + n, p, strlen(p));
        n += strlen(p);
    }
    out[n] = '\0';
}

/* A runner name of LSTMCHECK_QUALIFIED_NAME_MAX characters, the longest:
 * a plugin's runner, random characters around the ':', k at its end (the
 * (runner, shape) pairs stay unique). */
static void longest_runner(char *out, size_t size, int k, lc_rng *rng)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
    const size_t len = LSTMCHECK_QUALIFIED_NAME_MAX;
    for (size_t i = 0; i < len; i++)
        out[i] = chars[lc_rng_next(rng) % (sizeof chars - 1)];
    out[len / 2] = ':';
    snprintf(out + len - 4, size - (len - 4), "%04d", k);
}

/* Entry k of the property test: every bounded field at its lowest (k % 3 ==
 * 0), highest (1) or a random value (2); strings at their longest. */
static int random_entry(baseline_entry *e, int k, lc_rng *rng)
{
    lc_error err;
    memset(e, 0, sizeof *e);
    const int pick = k % 3;
    longest_runner(e->runner, sizeof e->runner, k, rng);
    int *dims[] = {&e->shape.seq_length, &e->shape.num_layers, &e->shape.input_size, &e->shape.hidden_size,
                   &e->shape.batch};
    for (int i = 0; i < 5; i++)
        *dims[i] = (int)limit_value(BL_DIM, pick, rng, 1);
    e->seed = (unsigned long long)limit_value(BL_SEED, pick, rng, 1);
    e->rounds = (int)limit_value(BL_ROUNDS, pick, rng, 1);
    e->noise_fwd = limit_value(BL_NOISE, pick, rng, 0);
    e->noise_bwd = limit_value(BL_NOISE, (pick + 1) % 3, rng, 0);
    awkward_string(e->lstmcheck_version, sizeof e->lstmcheck_version - 1, rng);
    awkward_string(e->git_commit, sizeof e->git_commit - 1, rng);
    awkward_string(e->date, sizeof e->date - 1, rng);
    awkward_string(e->control, sizeof e->control - 1, rng);
    e->reproducible = 0; /* an awkward commit is never reproducible */
    const int n = 1 + (int)(lc_rng_next(rng) % 40);
    baseline_series *times[] = {&e->fwd, &e->bwd, &e->ctl};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < n; i++) {
            /* positive, over many magnitudes, with all 53 bits of mantissa */
            const double v = ldexp(1 + lc_rng_uniform(rng) + ldexp(lc_rng_uniform(rng), -24), (int)(lc_rng_next(rng) % 80) - 40);
            CHECK(!baseline_series_append(times[s], &v, 1, &err), "%s", err.msg);
        }
    for (int i = 0; i < n; i++) { /* the ratios are the times' quotients, as measured */
        const double f = e->fwd.samples[i] / e->ctl.samples[i], b = e->bwd.samples[i] / e->ctl.samples[i];
        CHECK(!baseline_series_append(&e->fwd_ratio, &f, 1, &err) &&
                  !baseline_series_append(&e->bwd_ratio, &b, 1, &err), "%s", err.msg);
    }
    return 0;
}

static void test_machine(machine_key *k)
{
    memset(k, 0, sizeof *k);
    k->device = LC_DEVICE_CPU;
    k->nfields = 1;
    snprintf(k->names[0], sizeof k->names[0], "cpu_model");
    snprintf(k->values[0], sizeof k->values[0], "unit test \"cpu\"");
    machine_key_make_slug(k);
}

/* Each scratch file in a directory of its own, removed with what is in it
 * when the process that made it exits (not a forked child that exits):
 * the runs of this test left one behind in /tmp each. */
enum { SCRATCH_DIRS = 32 };
static char scratch_dirs[SCRATCH_DIRS][32];
static int scratch_count;
static pid_t scratch_owner;

static void remove_scratch_dirs(void)
{
    if (getpid() != scratch_owner)
        return;
    for (int i = 0; i < scratch_count; i++) {
        DIR *d = opendir(scratch_dirs[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            char path[4096];
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                snprintf(path, sizeof path, "%s/%s", scratch_dirs[i], e->d_name), unlink(path);
        }
        if (d)
            closedir(d);
        rmdir(scratch_dirs[i]);
    }
    scratch_count = 0;
}

static char *scratch_file(char *path, size_t n, const char *name)
{
    if (scratch_count == SCRATCH_DIRS)
        return NULL;
    char *dir = scratch_dirs[scratch_count];
    snprintf(dir, sizeof scratch_dirs[0], "/tmp/lstmcheck_strict_XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    if (scratch_count++ == 0 && !scratch_owner) {
        scratch_owner = getpid();
        atexit(remove_scratch_dirs);
    }
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* The whole text of a file (NULL on failure; free it). */
static char *slurp(const char *path, size_t *len)
{
    char *text;
    lc_error err;
    return file_read_regular(path, BASELINE_MAX_FILE_BYTES, &text, len, &err) == LC_OK ? text : NULL;
}

int test_baseline_limits_round_trip(void)
{
    enum { ENTRIES = 60 };
    lc_rng rng;
    lc_rng_init(&rng, 2026, 0, 0);
    baseline_file a = {0}, b;
    lc_error err;
    test_machine(&a.machine);
    for (int k = 0; k < ENTRIES; k++) {
        baseline_entry e;
        if (random_entry(&e, k, &rng))
            return 1;
        CHECK(!baseline_put(&a, &e, &err), "%s", err.msg);
    }
    char path[4096];
    CHECK(scratch_file(path, sizeof path, "rt.json"), "mkdtemp");
    CHECK(!baseline_save(path, &a, &err), "%s", err.msg);
    CHECK(baseline_load(path, &b, &err) == LC_OK, "%s", err.msg);
    CHECK(b.nentries == ENTRIES && machine_key_equal(&a.machine, &b.machine), "%d entries read back", b.nentries);
    for (int i = 0; i < ENTRIES; i++)
        CHECK(unit_same_baseline_entry(&a.entries[i], &b.entries[i]), "entries[%d] differs after a write and a read", i);
    baseline_free(&a);
    baseline_free(&b);
    return 0;
}

/* One edit of a valid file's text and the words its refusal must hold. */
typedef struct bad_edit {
    const char *find, *replace, *expect;
} bad_edit;

/* text with the first `find` replaced (NULL when absent). */
static char *edited(const char *text, const char *find, const char *replace)
{
    const char *at = strstr(text, find);
    if (!at)
        return NULL;
    const size_t n = strlen(text) - strlen(find) + strlen(replace) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, replace, at + strlen(find));
    return out;
}

/* A small valid file's text, written by the writer. */
static char *valid_text(size_t *len)
{
    baseline_file f = {0};
    lc_error err;
    test_machine(&f.machine);
    baseline_entry e = {.shape = {.seq_length = 3, .num_layers = 1, .input_size = 4, .hidden_size = 5, .batch = 2},
                        .seed = 17, .rounds = 5, .noise_fwd = 0.01, .noise_bwd = 0.02};
    snprintf(e.runner, sizeof e.runner, "cpu");
    snprintf(e.git_commit, sizeof e.git_commit, "0123456789abcdef0123456789abcdef01234567");
    snprintf(e.control, sizeof e.control, "control");
    const double v[3] = {1, 2, 3}, one[3] = {1, 1, 1};
    baseline_series *all[] = {&e.fwd, &e.bwd, &e.ctl, &e.fwd_ratio, &e.bwd_ratio};
    for (int s = 0; s < 5; s++) /* control 1: every ratio is its time */
        baseline_series_append(all[s], all[s] == &e.ctl ? one : v, 3, &err);
    baseline_put(&f, &e, &err);
    char path[4096];
    if (!scratch_file(path, sizeof path, "v.json") || baseline_save(path, &f, &err))
        return NULL;
    baseline_free(&f);
    char *text = slurp(path, len);
    for (char *c = text; c && *c; c++)
        if (*c == '\t')
            *c = ' '; /* edits below name `"key": value` */
    return text;
}

int test_baseline_strict_reader(void)
{
    static const bad_edit edits[] = {
        {"\"seed\": 17", "\"seed\": 2147483648", "seed = 2147483648 is outside"},
        {"\"seed\": 17", "\"seed\": -1", "seed = -1 is outside"},
        {"\"rounds\": 5", "\"rounds\": 1001", "rounds = 1001 is outside"},
        {"\"forward\": 0.01", "\"forward\": 1e300", "noise.forward = 1.0000000000000001e+300 is outside"},
        {"\"hiddenSize\": 5", "\"hiddenSize\": 1000001", "hiddenSize = 1000001 is outside"},
        {"\"runner\": \"cpu\"", "\"runner\": \"cpu_with_a_name_longer_than_31_chars\"", "runner is 36 characters"},
        {"0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567-and-more",
         "git_commit is 49 characters"},
        {"\"entries\": [", "\"entries\": [], \"entries\": [", "key \"entries\" appears twice"},
        {"\"seed\": 17,", "\"seed\": 17, \"seed\": 18,", "key \"seed\" appears twice"},
        {"\"n\": 3", "\"n\": 4", "n is 4 but it holds 3 samples"},
    };
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    baseline_file b;
    lc_error err;
    CHECK(baseline_parse(text, len, "valid", &b, &err) == LC_OK, "%s", err.msg);
    baseline_free(&b);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = edited(text, edits[i].find, edits[i].replace);
        CHECK(bad, "case %zu: '%s' not in the valid file", i, edits[i].find);
        const lc_status st = baseline_parse(bad, strlen(bad), "bad", &b, &err);
        free(bad);
        CHECK(st == LC_BAD_INPUT && strstr(err.msg, edits[i].expect), "case %zu: %s", i, err.msg);
    }
    /* one series shorter than the others */
    char *bad = edited(text, "\"samples\": [1.0, 2.0, 3.0]", "\"samples\": [1.0, 2.0]");
    CHECK(bad, "no samples array in the valid file");
    char *worse = edited(bad, "\"n\": 3", "\"n\": 2");
    CHECK(worse && baseline_parse(worse, strlen(worse), "bad", &b, &err) == LC_BAD_INPUT &&
              strstr(err.msg, "every series has one per sample"), "%s", err.msg);
    free(bad);
    free(worse);
    free(text);
    return 0;
}

/* Every row of BASELINE_LIMITS, one step outside at each end where a
 * file can say it: refused with the field named. A new row without a line
 * here fails to compile. */
typedef struct limit_edit {
    const char *find, *below, *above, *field;
} limit_edit;
static const limit_edit limit_edits[BL_COUNT] = {
    [BL_SEED] = {"\"seed\": 17", "\"seed\": -1", "\"seed\": 2147483648", "seed"},
    [BL_DIM] = {"\"hiddenSize\": 5", "\"hiddenSize\": 0", "\"hiddenSize\": 1000001", "hiddenSize"},
    [BL_ROUNDS] = {"\"rounds\": 5", "\"rounds\": 0", "\"rounds\": 1001", "rounds"},
    [BL_NOISE] = {"\"backward\": 0.02", "\"backward\": -0.001", "\"backward\": 1.001", "noise.backward"},
    /* above: ten million samples is no unit test's file */
    [BL_SAMPLES] = {"\"n\": 3", "\"n\": 0", NULL, ".n"},
    /* below: zero entries is the lowest; above: 4097 entries, made below */
    [BL_ENTRIES] = {NULL, NULL, NULL, "entries"},
};
_Static_assert(sizeof limit_edits / sizeof limit_edits[0] == BL_COUNT, "a limit without an edit");

/* The valid text with its entry repeated n times (runners made distinct). */
static char *many_entries(const char *text, int n)
{
    const char *open = strstr(text, "\"entries\": [") + strlen("\"entries\": [");
    const char *close = strrchr(text, ']');
    const size_t one = (size_t)(close - open), size = strlen(text) + (size_t)n * (one + 16);
    char *out = malloc(size), *at = out;
    at += sprintf(at, "%.*s", (int)(open - text), text);
    for (int i = 0; i < n; i++) {
        char *entry = malloc(one + 1), runner[32];
        snprintf(entry, one + 1, "%.*s", (int)one, open);
        snprintf(runner, sizeof runner, "\"runner\": \"r%d\"", i);
        char *e = edited(entry, "\"runner\": \"cpu\"", runner);
        at += sprintf(at, "%s%s", i ? ", " : "", e);
        free(entry);
        free(e);
    }
    sprintf(at, "%s", close);
    return out;
}

int test_baseline_limits_refused(void)
{
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    baseline_file b;
    lc_error err;
    for (int id = 0; id < BL_COUNT; id++) {
        const limit_edit *le = &limit_edits[id];
        const char *outside[2] = {le->below, le->above};
        for (int k = 0; k < 2; k++) {
            if (!outside[k])
                continue;
            char *bad = edited(text, le->find, outside[k]);
            CHECK(bad, "%s: '%s' not in the valid file", baseline_limits[id].what, le->find);
            const lc_status st = baseline_parse(bad, strlen(bad), "bad", &b, &err);
            free(bad);
            CHECK(st == LC_BAD_INPUT && strstr(err.msg, le->field), "%s %s: %s", baseline_limits[id].what,
                  k ? "above" : "below", err.msg);
        }
    }
    char *most = many_entries(text, (int)baseline_limits[BL_ENTRIES].hi);
    CHECK(baseline_parse(most, strlen(most), "most", &b, &err) == LC_OK, "%s", err.msg);
    baseline_free(&b);
    free(most);
    char *over = many_entries(text, (int)baseline_limits[BL_ENTRIES].hi + 1);
    CHECK(baseline_parse(over, strlen(over), "over", &b, &err) == LC_BAD_INPUT && strstr(err.msg, "entries"), "%s",
          err.msg);
    free(over);
    free(text);
    return 0;
}

int test_baseline_malformed_documents(void)
{
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    baseline_file b;
    lc_error err;
    /* trailing data, two documents, a NUL inside, white space after (fine) */
    char *two = malloc(2 * len + 8);
    snprintf(two, 2 * len + 8, "%s%s", text, text);
    CHECK(baseline_parse(two, 2 * len, "two", &b, &err) == LC_BAD_INPUT && strstr(err.msg, "data after"), "%s",
          err.msg);
    snprintf(two, 2 * len + 8, "%s garbage", text);
    CHECK(baseline_parse(two, strlen(two), "tail", &b, &err) == LC_BAD_INPUT && strstr(err.msg, "data after"), "%s",
          err.msg);
    snprintf(two, 2 * len + 8, "%s \n\t", text);
    CHECK(baseline_parse(two, strlen(two), "ws", &b, &err) == LC_OK, "%s", err.msg);
    baseline_free(&b);
    memcpy(two, text, len);
    two[len] = '\0';
    memcpy(two + len + 1, "{}", 2);
    CHECK(baseline_parse(two, len + 3, "nul", &b, &err) == LC_BAD_INPUT && strstr(err.msg, "NUL byte"), "%s",
          err.msg);
    free(two);
    free(text);
    /* deep nesting and huge objects are not a baseline's shape */
    char deep[256] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    for (int i = 0; i < 40; i++)
        strcat(deep, "]");
    CHECK(baseline_parse(deep, strlen(deep), "deep", &b, &err) == LC_BAD_INPUT, "deep nesting accepted");
    return 0;
}

/* A FIFO at the path is refused at once, not read forever. */
int test_baseline_not_regular(void)
{
    char path[4096];
    CHECK(scratch_file(path, sizeof path, "fifo.json"), "mkdtemp");
    CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
    const pid_t child = fork();
    if (child == 0) {
        alarm(5); /* a blocked open would end here, failing the test */
        baseline_file b;
        lc_error err;
        const lc_status st = baseline_load(path, &b, &err);
        _exit(st == LC_BAD_INPUT && strstr(err.msg, "not a regular file") ? 0 : 1);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    unlink(path);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a FIFO was not refused at once (status %d)", status);
    return 0;
}

/* Reading walks arrays once: 200k samples per series (1M numbers, ~25 MB)
 * read in a few seconds (an indexed walk took 31 s for 100k). */
int test_baseline_linear_read(void)
{
    enum { N = 200000 };
    baseline_file a = {0}, b;
    lc_error err;
    test_machine(&a.machine);
    baseline_entry e = {.shape = {.seq_length = 1, .num_layers = 1, .input_size = 1, .hidden_size = 1, .batch = 1},
                        .rounds = 5};
    snprintf(e.runner, sizeof e.runner, "cpu");
    double *v = malloc(N * sizeof *v), *one = malloc(N * sizeof *one);
    for (int i = 0; i < N; i++) {
        v[i] = 1 + i * 1e-6;
        one[i] = 1;
    }
    baseline_series *all[] = {&e.fwd, &e.bwd, &e.ctl, &e.fwd_ratio, &e.bwd_ratio};
    for (int s = 0; s < 5; s++) /* control 1: every ratio is its time */
        CHECK(!baseline_series_append(all[s], all[s] == &e.ctl ? one : v, N, &err), "%s", err.msg);
    free(v);
    free(one);
    baseline_put(&a, &e, &err);
    char path[4096];
    CHECK(scratch_file(path, sizeof path, "big.json"), "mkdtemp");
    CHECK(!baseline_save(path, &a, &err), "%s", err.msg);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(baseline_load(path, &b, &err) == LC_OK, "%s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("read %d samples per series in %.2f s\n", N, s);
    CHECK(b.nentries == 1 && b.entries[0].bwd_ratio.n == N, "read back wrong");
    CHECK(s < 10, "reading took %.1f s", s);
    unlink(path);
    baseline_free(&a);
    baseline_free(&b);
    return 0;
}

/* baseline_store: the file re-read under the lock keeps another writer's
 * entries; a dead writer's temporary file is removed, a live one's kept;
 * the writer refuses an entry the reader would refuse. */
int test_baseline_store(void)
{
    size_t len;
    char *text = valid_text(&len);
    char path[4096], dead[4200], live[4200];
    CHECK(text && scratch_file(path, sizeof path, "m.json"), "setup");
    baseline_file f;
    lc_error err;
    CHECK(baseline_parse(text, len, "valid", &f, &err) == LC_OK, "%s", err.msg);
    free(text);
    CHECK(!baseline_save(path, &f, &err), "%s", err.msg); /* "another writer" stored cpu */
    const pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0); /* its pid is now a dead writer's */
    snprintf(dead, sizeof dead, "%s.tmp.%ld", path, (long)child);
    snprintf(live, sizeof live, "%s.tmp.%ld", path, (long)getppid()); /* alive; not ours: our own writer uses that name */
    fclose(fopen(dead, "w"));
    fclose(fopen(live, "w"));
    baseline_entry e = f.entries[0];
    memset(&f.entries[0], 0, sizeof f.entries[0]);
    snprintf(e.runner, sizeof e.runner, "other");
    CHECK(baseline_store(path, &f.machine, &e, 1, &err) == LC_OK, "%s", err.msg);
    baseline_file g;
    CHECK(baseline_load(path, &g, &err) == LC_OK, "%s", err.msg);
    CHECK(g.nentries == 2, "%d entries after storing beside another writer's", g.nentries);
    CHECK(access(dead, F_OK) != 0 && access(live, F_OK) == 0, "stale temporary files: dead kept or live removed");
    unlink(live);
    g.entries[0].noise_fwd = 2; /* outside BL_NOISE: refused, the file untouched */
    CHECK(baseline_save(path, &g, &err) == 1 && strstr(err.msg, "noise.forward"), "%s", err.msg);
    baseline_file h;
    CHECK(baseline_load(path, &h, &err) == LC_OK && h.entries[0].noise_fwd != 2, "the refused save wrote");
    baseline_free(&f);
    baseline_free(&g);
    baseline_free(&h);
    return 0;
}

/* ---- the stored ratios are their stored times' quotients (issue 19) ---- */

/* Where samples[index] of `series` starts in text (NULL when not found). */
static const char *sample_at(const char *text, const char *series, int index)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\": {", series);
    const char *at = strstr(text, key);
    at = at ? strstr(at, "\"samples\": [") : NULL;
    if (!at)
        return NULL;
    at += strlen("\"samples\": [");
    for (int k = 0; k < index; k++) {
        at = strpbrk(at, ",]");
        if (!at || *at != ',')
            return NULL;
        at += 2; /* ", " */
    }
    return at;
}

/* text with the number at samples[index] of `series` replaced by `value`
 * (NULL when not found; free it). */
static char *with_sample(const char *text, const char *series, int index, const char *value)
{
    const char *at = sample_at(text, series, index);
    if (!at)
        return NULL;
    const size_t len = strcspn(at, ",]");
    const size_t n = strlen(text) - len + strlen(value) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, value, at + len);
    return out;
}

/* samples[index] of `series` in text, as a double (NaN when not found). */
static double sample_of(const char *text, const char *series, int index)
{
    const char *at = sample_at(text, series, index);
    return at ? strtod(at, NULL) : NAN;
}

/* An entry measured as `baseline update` measures one: times in ms, each
 * ratio its time over its control time. */
static void measured_entry(baseline_entry *e)
{
    lc_error err;
    memset(e, 0, sizeof *e);
    snprintf(e->runner, sizeof e->runner, "cpu");
    e->shape = (lstm_shape){.seq_length = 20, .num_layers = 1, .input_size = 128, .hidden_size = 128, .batch = 16};
    e->seed = 17;
    e->rounds = 5;
    e->noise_fwd = 0.005;
    e->noise_bwd = 0.004;
    e->reproducible = 1;
    snprintf(e->git_commit, sizeof e->git_commit, "0123456789abcdef0123456789abcdef01234567");
    snprintf(e->control, sizeof e->control, "OpenBLAS sgemm 384^3");
    lc_rng rng;
    lc_rng_init(&rng, 19, 0, 0);
    for (int i = 0; i < 8; i++) {
        const double f = 3.2 + 0.4 * lc_rng_uniform(&rng), b = 5.7 + 0.3 * lc_rng_uniform(&rng),
                     c = 3.5 + 0.2 * lc_rng_uniform(&rng), fr = f / c, br = b / c;
        baseline_series_append(&e->fwd, &f, 1, &err);
        baseline_series_append(&e->bwd, &b, 1, &err);
        baseline_series_append(&e->ctl, &c, 1, &err);
        baseline_series_append(&e->fwd_ratio, &fr, 1, &err);
        baseline_series_append(&e->bwd_ratio, &br, 1, &err);
    }
}

/* 0 when text, written to path, loads; else the loader's status (err set). */
static lc_status load_text(const char *path, const char *text, baseline_file *b, lc_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        lc_error_set(err, "cannot write %s", path);
        return LC_ERROR;
    }
    return baseline_load(path, b, err);
}

/* A valid file loads; a copy with one ratio (or one time) edited so that a
 * ratio is no longer its times' quotient is refused, naming the file, the
 * entry (runner and shape), the series and the first index that disagrees,
 * by every reader (load, the command's load_for, the A/B commit search);
 * the writer refuses such an entry. The one-ulp slack of files cJSON wrote
 * is kept (BASELINE_RATIO_TOLERANCE). */
int test_baseline_ratios_recomputed(void)
{
    baseline_file f = {0}, b;
    lc_error err;
    test_machine(&f.machine);
    baseline_entry e;
    measured_entry(&e);
    CHECK(!baseline_put(&f, &e, &err), "%s", err.msg);
    char path[4096], dir[4096], bad[4200];
    CHECK(scratch_file(path, sizeof path, "valid.json"), "mkdtemp");
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
    snprintf(bad, sizeof bad, "%s/%s.json", dir, f.machine.slug); /* where the commands look */
    CHECK(!baseline_save(path, &f, &err), "%s", err.msg);
    size_t len;
    char *text = NULL;
    CHECK(file_read_regular(path, BASELINE_MAX_FILE_BYTES, &text, &len, &err) == LC_OK, "%s", err.msg);
    CHECK(baseline_load(path, &b, &err) == LC_OK, "the valid file: %s", err.msg);
    baseline_free(&b);

    const double f3 = sample_of(text, "forward", 3), c3 = sample_of(text, "control", 3);
    const double b0 = sample_of(text, "backward", 0), c0 = sample_of(text, "control", 0);
    const double r0 = sample_of(text, "backward_ratio", 0), r1 = sample_of(text, "forward_ratio", 1);
    char q3[32], q0[32], r0x[32], near[32], off[32], want[256];
    json_format_double(f3 / c3, q3, sizeof q3);
    json_format_double(b0 / c0, q0, sizeof q0);
    json_format_double(r0 * 1.01, r0x, sizeof r0x);
    json_format_double(nextafter(r1, 2 * r1), near, sizeof near);  /* one ulp: cJSON's slack */
    json_format_double(r1 * (1 + 1e-12), off, sizeof off);          /* far under any verdict, still refused */
    struct {
        const char *series;
        int index;
        const char *value, *expect;
    } cases[] = {
        {"forward_ratio", 3, "1e308", "forward_ratio[3] is 1e+308 but forward/control is "},
        {"backward_ratio", 0, r0x, "backward_ratio[0] is "},
        {"forward_ratio", 1, off, "forward_ratio[1] is "},
        {"forward", 2, "1e300", "forward_ratio[2] is "},      /* a time edited: the same rule */
        {"control", 5, "1e-308", "forward_ratio[5] is "},     /* a quotient that overflows */
        {"backward", 4, "0", "entries[0].backward.samples[4] must be a positive finite number"},
        {"control", 6, "1e999", "entries[0].control.samples[6] must be a positive finite number"},
    };
    const char *entry = "entries[0] (runner cpu, shape s20-l1-i128-h128-b16): ";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = with_sample(text, cases[i].series, cases[i].index, cases[i].value);
        CHECK(t, "case %zu: no %s[%d] in the file", i, cases[i].series, cases[i].index);
        const lc_status st = load_text(bad, t, &b, &err);
        free(t);
        CHECK(st == LC_BAD_INPUT && strstr(err.msg, bad) && strstr(err.msg, cases[i].expect) && !strchr(err.msg, '\n'),
              "case %zu (%s[%d] = %s): status %d: %s", i, cases[i].series, cases[i].index, cases[i].value, st, err.msg);
        CHECK(strstr(cases[i].expect, "must be") || strstr(err.msg, entry), "case %zu: the entry unnamed: %s", i,
              err.msg);
    }
    /* the exact message of the two the issue names */
    char *t = with_sample(text, "forward_ratio", 3, "1e308");
    CHECK(load_text(bad, t, &b, &err) == LC_BAD_INPUT, "1e308 loaded");
    snprintf(want, sizeof want, "%s: %sforward_ratio[3] is 1e+308 but forward/control is %s: a stored ratio must be "
             "its times' quotient", bad, entry, q3);
    CHECK(!strcmp(err.msg, want), "message\n  '%s'\nexpected\n  '%s'", err.msg, want);
    /* every reader refuses it: the command's, the A/B commit search's (passed over) */
    CHECK(baseline_load_for(bad, &f.machine, &b, &err) == LC_BAD_INPUT && strstr(err.msg, "forward_ratio[3]"),
          "load_for: %s", err.msg);
    CHECK(unlink(path) == 0, "unlink");
    char commit[48], why[600];
    CHECK(baseline_reference_commit(dir, LC_DEVICE_CPU, "cpu", &f.entries[0].shape, commit, why, sizeof why) == 1,
          "the A/B commit search took %s from a tampered file", commit);
    free(t);
    t = with_sample(text, "backward_ratio", 0, r0x);
    CHECK(load_text(bad, t, &b, &err) == LC_BAD_INPUT, "x1.01 loaded");
    snprintf(want, sizeof want, "%s: %sbackward_ratio[0] is %s but backward/control is %s: a stored ratio must be "
             "its times' quotient", bad, entry, r0x, q0);
    CHECK(!strcmp(err.msg, want), "message\n  '%s'\nexpected\n  '%s'", err.msg, want);
    free(t);
    /* one ulp off (what cJSON's 15 digits left in the committed files) loads */
    t = with_sample(text, "forward_ratio", 1, near);
    CHECK(load_text(bad, t, &b, &err) == LC_OK, "one ulp: %s", err.msg);
    baseline_free(&b);
    free(t);
    /* a ratio series shorter than its times, its n made to agree */
    t = with_sample(text, "forward_ratio", 7, "");
    char *shorter = t ? strstr(t, "\"forward_ratio\": {") : NULL;
    CHECK(shorter, "no forward_ratio");
    char *comma = strstr(shorter, ", ]");
    char *n8 = strstr(shorter, "\"n\": 8");
    CHECK(comma && n8 && n8 < comma, "layout of forward_ratio");
    memmove(comma, comma + 2, strlen(comma + 2) + 1); /* "..., x, ]" -> "..., x]" */
    n8[5] = '7';
    CHECK(load_text(bad, t, &b, &err) == LC_BAD_INPUT && strstr(err.msg, "entries[0].forward_ratio has 7 samples") &&
              strstr(err.msg, "every series has one per sample"), "%s", err.msg);
    free(t);
    /* the writer refuses what the reader would: nothing written */
    CHECK(unlink(bad) == 0, "unlink");
    f.entries[0].fwd_ratio.samples[3] = 1e308;
    CHECK(baseline_save(bad, &f, &err) == 1 && strstr(err.msg, "forward_ratio[3] is 1e+308") && access(bad, F_OK) != 0,
          "the writer: %s", err.msg);
    f.entries[0].fwd_ratio.samples[3] = f3 / c3;
    f.entries[0].ctl.samples[2] = -1;
    CHECK(baseline_save(bad, &f, &err) == 1 && strstr(err.msg, "control.samples[2] must be a positive finite number") &&
              access(bad, F_OK) != 0, "the writer: %s", err.msg);
    free(text);
    baseline_free(&f);
    rmdir(dir);
    return 0;
}

/* ---- strings, runner names and members (issue 19 item 15) ---- */

/* Each edit of valid_text refused with exactly `expect` (after "bad: ")
 * and then tail. */
static int refused_exactly(const char *text, const bad_edit *edits, size_t n, const char *tail)
{
    baseline_file b;
    lc_error err;
    char want[512];
    for (size_t i = 0; i < n; i++) {
        char *bad = edited(text, edits[i].find, edits[i].replace);
        CHECK(bad, "case %zu: '%s' not in the valid file", i, edits[i].find);
        const lc_status st = baseline_parse(bad, strlen(bad), "bad", &b, &err);
        free(bad);
        snprintf(want, sizeof want, "bad: %s%s", edits[i].expect, tail);
        CHECK(st == LC_BAD_INPUT && !strcmp(err.msg, want), "case %zu: status %d\n  '%s'\nexpected\n  '%s'", i, st,
              err.msg, want);
    }
    return 0;
}

/* The JSON escape \u0000 is refused where it stands (cJSON ended the
 * string there: "ref\u0000evil" read as "ref"); an escaped backslash
 * before "u0000" is text, and reads. */
int test_baseline_escaped_nul(void)
{
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    static const char *const finds[] = {"\"date\": \"\"", "\"control_workload\": \"control\"", "\"cpu_model\""};
    static const char *const replaces[] = {"\"date\": \"ref\\u0000evil\"",
                                           "\"control_workload\": \"a\\\\\\u0000b\"", /* \\ then \u0000 */
                                           "\"cpu_\\u0000model\""};
    baseline_file b;
    lc_error err;
    char want[256];
    for (int i = 0; i < 3; i++) {
        char *bad = edited(text, finds[i], replaces[i]);
        CHECK(bad, "case %d: '%s' not in the valid file", i, finds[i]);
        const long at = (long)(strstr(bad, "\\u0000") - bad);
        const lc_status st = baseline_parse(bad, strlen(bad), "bad", &b, &err);
        free(bad);
        snprintf(want, sizeof want, "bad: \\u0000 (a NUL character, which would cut its string) at byte %ld: not a "
                 "baseline file", at);
        CHECK(st == LC_BAD_INPUT && !strcmp(err.msg, want), "case %d: status %d\n  '%s'\nexpected\n  '%s'", i, st,
              err.msg, want);
    }
    char *fine = edited(text, "\"control_workload\": \"control\"", "\"control_workload\": \"a\\\\u0000b\"");
    CHECK(fine && baseline_parse(fine, strlen(fine), "fine", &b, &err) == LC_OK, "\\\\u0000: %s", err.msg);
    CHECK(!strcmp(b.entries[0].control, "a\\u0000b"), "read as '%s'", b.entries[0].control);
    baseline_free(&b);
    free(fine);
    free(text);
    return 0;
}

/* A control character in any string of a file (escaped in the JSON) is
 * refused, naming the field: they were printed raw (a runner "r\nWRONG x"
 * forged a row of `baseline show`, an ESC in date drove the terminal). The
 * writer refuses them too. */
int test_baseline_control_characters(void)
{
    static const char *const tail = " (it would reach the terminal)";
    static const bad_edit edits[] = {
        {"\"runner\": \"cpu\"", "\"runner\": \"r\\nWRONG x\"",
         "entries[0].runner holds control character U+000A at byte 1"},
        {"\"date\": \"\"", "\"date\": \"\\u001b[2J\"", "entries[0].date holds control character U+001B at byte 0"},
        {"\"git_commit\": \"0123", "\"git_commit\": \"\\t0123",
         "entries[0].git_commit holds control character U+0009 at byte 0"},
        {"\"lstmcheck_version\": \"\"", "\"lstmcheck_version\": \"1\\u007f\"",
         "entries[0].lstmcheck_version holds control character U+007F at byte 1"},
        {"\"control_workload\": \"control\"", "\"control_workload\": \"c\\u009b2J\"",
         "entries[0].control_workload holds control character U+009B at byte 1"},
        {"\"device\": \"cpu\"", "\"device\": \"cpu\\r\"", "machine.device holds control character U+000D at byte 3"},
        {"\"unit test", "\"\\u0007unit test", "machine.fields.cpu_model holds control character U+0007 at byte 0"},
        {"\"cpu_model\"", "\"cpu\\nmodel\"", "a member name in fields holds control character U+000A at byte 3"},
        {"\"seed\"", "\"colour\\u001b\": 1, \"seed\"",
         "a member name in entries holds control character U+001B at byte 6"},
    };
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    if (refused_exactly(text, edits, sizeof edits / sizeof edits[0], tail)) {
        free(text);
        return 1;
    }
    /* the writer: an entry, then the machine key */
    baseline_file f;
    lc_error err;
    CHECK(baseline_parse(text, len, "valid", &f, &err) == LC_OK, "%s", err.msg);
    free(text);
    char path[4096];
    CHECK(scratch_file(path, sizeof path, "w.json"), "mkdtemp");
    snprintf(f.entries[0].date, sizeof f.entries[0].date, "2026\x1b[2J");
    CHECK(baseline_save(path, &f, &err) == 1 && !strcmp(err.msg, "baseline entry: date holds control character U+001B "
          "at byte 4 (it would reach the terminal)") && access(path, F_OK) != 0, "the writer: %s", err.msg);
    f.entries[0].date[0] = '\0';
    snprintf(f.machine.values[0], sizeof f.machine.values[0], "cpu\nmodel");
    CHECK(baseline_save(path, &f, &err) == 1 && strstr(err.msg, "machine.fields.cpu_model holds control character "
          "U+000A") && access(path, F_OK) != 0, "the writer: %s", err.msg);
    baseline_free(&f);
    return 0;
}

/* runner_name_valid: [a-z0-9_]+ or <plugin>:<runner>, at most
 * LSTMCHECK_QUALIFIED_NAME_MAX; a file's or an entry's other runner is
 * refused; registry_validate keeps its message. */
int test_baseline_runner_names(void)
{
    char longest[LSTMCHECK_QUALIFIED_NAME_MAX + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0'; /* one too many */
    CHECK(!runner_name_valid(longest), "%zu characters accepted", strlen(longest));
    longest[LSTMCHECK_QUALIFIED_NAME_MAX] = '\0';
    longest[4] = ':';
    CHECK(runner_name_valid(longest), "'%s' refused", longest);
    static const char *const good[] = {"cpu", "good:lstm", "a", "_", "0", "cudnn_v2", "p_1:r_2"};
    static const char *const bad[] = {"", ":", "a:", ":a", "a:b:c", "a::b", "Cpu", "a-b", "a b", "a.b", "\xc3\xa9"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(runner_name_valid(good[i]), "'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!runner_name_valid(bad[i]), "'%s' accepted", bad[i]);
    static const bad_edit edits[] = {
        {"\"runner\": \"cpu\"", "\"runner\": \"\"",
         "entries[0].runner '' is not a runner name ([a-z0-9_]+ or plugin:runner)"},
        {"\"runner\": \"cpu\"", "\"runner\": \"CPU\"",
         "entries[0].runner 'CPU' is not a runner name ([a-z0-9_]+ or plugin:runner)"},
        {"\"runner\": \"cpu\"", "\"runner\": \"a:b:c\"",
         "entries[0].runner 'a:b:c' is not a runner name ([a-z0-9_]+ or plugin:runner)"},
    };
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    char *plugin = edited(text, "\"runner\": \"cpu\"", "\"runner\": \"good:lstm\"");
    baseline_file f;
    lc_error err;
    CHECK(plugin && baseline_parse(plugin, strlen(plugin), "plugin", &f, &err) == LC_OK, "good:lstm: %s", err.msg);
    baseline_free(&f);
    free(plugin);
    if (refused_exactly(text, edits, sizeof edits / sizeof edits[0], "")) {
        free(text);
        return 1;
    }
    CHECK(baseline_parse(text, len, "valid", &f, &err) == LC_OK, "%s", err.msg);
    free(text);
    f.entries[0].runner[0] = '\0';
    CHECK(baseline_check_entry(&f.entries[0], &err) == 1 && !strcmp(err.msg, "baseline entry: runner '' is not a "
          "runner name ([a-z0-9_]+ or plugin:runner)"), "the writer: %s", err.msg);
    /* a table's names are unqualified (a plugin's get their prefix after) */
    runner_ops named = *lstm_runners[0];
    const runner_ops *table[] = {&named, NULL};
    static const char *const not_in_table[] = {"a:b", "Cpu", ""};
    for (int i = 0; i < 3; i++) {
        named.name = not_in_table[i];
        CHECK(registry_validate(table, &err) && (!*not_in_table[i] || strstr(err.msg, "has a character outside "
              "[a-z0-9_]")), "table name '%s': %s", not_in_table[i], err.msg);
    }
    baseline_free(&f);
    return 0;
}

/* A member the format does not have is refused, at every level (the next
 * update, rewriting the file, dropped it unseen); machine.fields' names
 * are the machine key's and stay free; every committed file still reads
 * (unit.baseline_file_round_trip loads each). */
int test_baseline_unknown_members(void)
{
    static const char *const tail = " (an update would drop it; remove it or use the lstmcheck that wrote it)";
    static const bad_edit edits[] = {
        {"\"format\"", "\"colour\": 1, \"format\"", "file.colour is not a member of a version-1 baseline file"},
        {"\"device\"", "\"colour\": 1, \"device\"", "machine.colour is not a member of a version-1 baseline's machine"},
        {"\"runner\"", "\"colour\": 1, \"runner\"", "entries[0].colour is not a member of a version-1 baseline entry"},
        {"\"seqLength\"", "\"colour\": 1, \"seqLength\"",
         "entries[0].shape.colour is not a member of a version-1 baseline entry's shape"},
        {"\"noise\": {", "\"noise\": {\"colour\": 1, ",
         "entries[0].noise.colour is not a member of a version-1 baseline entry's noise"},
        {"\"backward\": {", "\"backward\": {\"colour\": 1, ",
         "entries[0].backward.colour is not a member of a version-1 baseline series"},
    };
    size_t len;
    char *text = valid_text(&len);
    CHECK(text, "no valid file");
    if (refused_exactly(text, edits, sizeof edits / sizeof edits[0], tail)) {
        free(text);
        return 1;
    }
    char *field = edited(text, "\"cpu_model\"", "\"colour\": \"red\", \"cpu_model\"");
    baseline_file b;
    lc_error err;
    CHECK(field && baseline_parse(field, strlen(field), "field", &b, &err) == LC_OK &&
              b.machine.nfields == 2, "a machine field: %s", err.msg);
    baseline_free(&b);
    free(field);
    free(text);
    return 0;
}
