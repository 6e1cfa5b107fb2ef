/* Baseline files (see baseline.h): read with cJSON, written with base/json. */
#include "perf/baseline.h"

#include "base/files.h"
#include "base/gitrev.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/text.h"
#include "runners/runner.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LSTMCHECK_SOURCE_DIR
#define LSTMCHECK_SOURCE_DIR "."
#endif

/* 1 for an installed lstmcheck (cmake --install): the program in PREFIX/bin,
 * beside the runner header installed with it in PREFIX/include, which is
 * not the source tree's own (a build folder inside the tree, build/, has
 * the tree's include/ beside it). Such a copy may run long after, or far
 * from, the source tree it was built from, whose baselines/ are not its
 * user's. */
static int installed_copy(void)
{
    char exe[PATH_MAX], header[PATH_MAX + 64];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(header, sizeof header, "%s/../include/lstmcheck/runner.h", exe);
    return access(header, F_OK) == 0 &&
           !path_same_file(header, LSTMCHECK_SOURCE_DIR "/include/lstmcheck/runner.h");
}

const char *baseline_default_dir(void)
{
    const char *env = getenv("LSTMCHECK_BASELINE_DIR");
    if (env && *env)
        return env;
    return installed_copy() ? "baselines" : LSTMCHECK_SOURCE_DIR "/baselines";
}

lc_status baseline_path(const char *dir, const machine_key *k, char *path, size_t n, lc_error *err)
{
    const int len = snprintf(path, n, "%s/%s.json", dir, k->slug);
    if (len < 0 || (size_t)len >= n) {
        lc_error_set(err, "the baseline file of this machine in '%.64s...' would be a path of %d bytes; at most %zu",
                     dir, len, n - 1);
        path[0] = '\0';
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

static void series_free(baseline_series *s)
{
    free(s->samples);
    s->samples = NULL;
    s->n = 0;
}

void baseline_entry_free(baseline_entry *e)
{
    series_free(&e->fwd);
    series_free(&e->bwd);
    series_free(&e->ctl);
    series_free(&e->fwd_ratio);
    series_free(&e->bwd_ratio);
}

/* The five series of an entry, in one order for sending and receiving. */
static baseline_series *entry_series(baseline_entry *e, int i)
{
    baseline_series *all[] = {&e->fwd, &e->bwd, &e->ctl, &e->fwd_ratio, &e->bwd_ratio};
    return i < 5 ? all[i] : NULL;
}

int baseline_entry_send(int fd, const baseline_entry *e)
{
    if (fd_write_all(fd, e, sizeof *e))
        return 1;
    baseline_series *s;
    for (int i = 0; (s = entry_series((baseline_entry *)e, i)); i++)
        if (s->n > 0 && fd_write_all(fd, s->samples, (size_t)s->n * sizeof(double)))
            return 1;
    return 0;
}

int baseline_entry_receive(int fd, baseline_entry *e, lc_error *err)
{
    if (fd_read_all(fd, e, sizeof *e)) {
        memset(e, 0, sizeof *e);
        lc_error_set(err, "no entry came through the pipe");
        return 1;
    }
    baseline_series *s;
    for (int i = 0; (s = entry_series(e, i)); i++)
        s->samples = NULL; /* the sender's pointers */
    e->unchecked[sizeof e->unchecked - 1] = 0;
    for (int i = 0; (s = entry_series(e, i)); i++) {
        const int n = s->n;
        s->n = 0;
        if (n < 0 || n > baseline_limits[BL_SAMPLES].hi || !(s->samples = malloc((size_t)(n ? n : 1) * sizeof(double))) ||
            (n > 0 && fd_read_all(fd, s->samples, (size_t)n * sizeof(double)))) {
            baseline_entry_free(e);
            lc_error_set(err, "a truncated entry came through the pipe");
            return 1;
        }
        s->n = n;
    }
    return 0;
}

void baseline_free(baseline_file *b)
{
    for (int i = 0; i < b->nentries; i++)
        baseline_entry_free(&b->entries[i]);
    free(b->entries);
    memset(b, 0, sizeof *b);
}

const baseline_entry *baseline_find(const baseline_file *b, const char *runner, const lstm_shape *s)
{
    const int i = baseline_index(b, runner, s);
    return i < 0 ? NULL : &b->entries[i];
}

int baseline_index(const baseline_file *b, const char *runner, const lstm_shape *s)
{
    for (int i = 0; i < b->nentries; i++)
        if (!strcmp(b->entries[i].runner, runner) && lstm_shape_equal(&b->entries[i].shape, s))
            return i;
    return -1;
}

int baseline_series_append(baseline_series *s, const double *v, int n, lc_error *err)
{
    double *grown = realloc(s->samples, (size_t)(s->n + n > 0 ? s->n + n : 1) * sizeof *grown);
    if (!grown) {
        lc_error_set(err, "out of memory");
        return 1;
    }
    memcpy(grown + s->n, v, (size_t)n * sizeof *grown);
    s->samples = grown;
    s->n += n;
    return 0;
}

int baseline_entry_append(baseline_entry *dst, const baseline_entry *src, lc_error *err)
{
    return baseline_series_append(&dst->fwd, src->fwd.samples, src->fwd.n, err) ||
           baseline_series_append(&dst->bwd, src->bwd.samples, src->bwd.n, err) ||
           baseline_series_append(&dst->ctl, src->ctl.samples, src->ctl.n, err) ||
           baseline_series_append(&dst->fwd_ratio, src->fwd_ratio.samples, src->fwd_ratio.n, err) ||
           baseline_series_append(&dst->bwd_ratio, src->bwd_ratio.samples, src->bwd_ratio.n, err);
}

int baseline_put(baseline_file *b, baseline_entry *e, lc_error *err)
{
    const int at = baseline_index(b, e->runner, &e->shape);
    if (at >= 0) {
        baseline_entry *old = &b->entries[at];
        baseline_entry_free(old);
        *old = *e;
        return 0;
    }
    baseline_entry *grown = realloc(b->entries, (size_t)(b->nentries + 1) * sizeof *grown);
    if (!grown) {
        lc_error_set(err, "out of memory");
        return 1;
    }
    b->entries = grown;
    b->entries[b->nentries++] = *e;
    return 0;
}

/* ---- limits: one table for writer and reader ---- */

const baseline_limit baseline_limits[BL_COUNT] = {
#define BL_ROW(id, what_, lo_, hi_) [id] = {.what = what_, .lo = lo_, .hi = hi_},
    BASELINE_LIMITS(BL_ROW)
#undef BL_ROW
};

/* 0 when v is within limit id (integral when whole); else err says where. */
static int check_limit(baseline_limit_id id, double v, int whole, const char *name, const char *field,
                       lc_error *err)
{
    const baseline_limit *l = &baseline_limits[id];
    if (isfinite(v) && v >= l->lo && v <= l->hi && (!whole || v == floor(v)))
        return 0;
    lc_error_set(err, "%s: %s = %.17g is outside the %s range %s%.17g..%.17g", name, field, v, l->what,
                 whole ? "of integers " : "", l->lo, l->hi);
    return 1;
}

/* 0 when s is valid UTF-8 (the writer would replace bad bytes) without a
 * control character (messages and tables print the file's strings: a
 * newline would forge a line, an ESC drive the terminal). */
static int check_chars(const char *s, const char *name, const char *field, lc_error *err)
{
    if (!text_utf8_valid(s)) {
        lc_error_set(err, "%s: %s is not valid UTF-8 (it would not be written back as read)", name, field);
        return 1;
    }
    const unsigned char *c = (const unsigned char *)text_find_unprintable(s); /* valid: a control character */
    if (c) {
        lc_error_set(err, "%s: %s holds control character U+%04X at byte %ld (it would reach the terminal)", name,
                     field, c[0] == 0xc2 ? c[1] : c[0], (long)((const char *)c - s)); /* C1: U+0080..U+009F */
        return 1;
    }
    return 0;
}

/* 0 when s fits a field of n bytes (a longer one would be cut) and passes
 * check_chars: it reads back as is and prints as text. */
static int check_string(const char *s, size_t n, const char *name, const char *field, lc_error *err)
{
    if (strlen(s) >= n) {
        lc_error_set(err, "%s: %s is %zu characters; at most %zu fit", name, field, strlen(s), n - 1);
        return 1;
    }
    return check_chars(s, name, field, err);
}

/* 0 when runner (checked by check_string) names a runner or a plugin's. */
static int check_runner(const char *runner, const char *name, const char *field, lc_error *err)
{
    if (runner_name_valid(runner))
        return 0;
    lc_error_set(err, "%s: %s '%s' is not a runner name ([a-z0-9_]+ or plugin:runner)", name, field, runner);
    return 1;
}

/* An entry as messages name it: where it is, its runner and its shape
 * (the runner's characters checked before: check_string). */
static void entry_label(const baseline_entry *e, const char *where, char *out, size_t n)
{
    char shape[128];
    lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, shape, sizeof shape);
    snprintf(out, n, "%s (runner %s, shape %s)", where, e->runner, shape);
}

/* stored is time / control as measured, within BASELINE_RATIO_TOLERANCE of
 * what the stored numbers give (an overflowed or vanished quotient never). */
static int ratio_agrees(double stored, double time, double control)
{
    const double q = time / control;
    return stored == q || (isfinite(q) && q > 0 && fabs(stored - q) <= BASELINE_RATIO_TOLERANCE * q);
}

/* The rule of an entry's series, in one place for the writer and the reader:
 * every series of one measurement holds one value per sample, every sample
 * is a positive finite number, and every ratio is its time over its control
 * time (the verdict decides on the ratios: one that is not its times'
 * quotient would decide what the times do not say). */
static int check_series(const baseline_entry *e, const char *name, const char *where, lc_error *err)
{
    const baseline_series *all[] = {&e->fwd, &e->bwd, &e->ctl, &e->fwd_ratio, &e->bwd_ratio};
    const char *names[] = {"forward", "backward", "control", "forward_ratio", "backward_ratio"};
    char field[96];
    for (int i = 0; i < 5; i++) {
        snprintf(field, sizeof field, "%s.%s: the number of samples", where, names[i]);
        if (check_limit(BL_SAMPLES, all[i]->n, 1, name, field, err))
            return 1;
        if (all[i]->n != e->fwd.n) {
            lc_error_set(err, "%s: %s.%s has %d samples, %s.forward %d: every series has one per sample", name,
                         where, names[i], all[i]->n, where, e->fwd.n);
            return 1;
        }
    }
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < all[i]->n; k++)
            if (!isfinite(all[i]->samples[k]) || !(all[i]->samples[k] > 0)) {
                lc_error_set(err, "%s: %s.%s.samples[%d] must be a positive finite number", name, where, names[i],
                             k);
                return 1;
            }
    for (int i = 0; i < 2; i++) {
        const baseline_series *time = all[i], *ratio = all[3 + i];
        for (int k = 0; k < ratio->n; k++)
            if (!ratio_agrees(ratio->samples[k], time->samples[k], e->ctl.samples[k])) {
                char label[256], stored[32], quotient[32];
                entry_label(e, where, label, sizeof label);
                json_format_double(ratio->samples[k], stored, sizeof stored);
                json_format_double(time->samples[k] / e->ctl.samples[k], quotient, sizeof quotient);
                lc_error_set(err, "%s: %s: %s[%d] is %s but %s/control is %s: a stored ratio must be its times' "
                             "quotient", name, label, names[3 + i], k, stored, names[i], quotient);
                return 1;
            }
    }
    return 0;
}

/* The strings of an entry, as the file names them. */
static int check_strings(const baseline_entry *e, const char *name, lc_error *err)
{
    const char *const values[] = {e->runner, e->lstmcheck_version, e->git_commit, e->date, e->control, e->unchecked};
    const size_t sizes[] = {sizeof e->runner, sizeof e->lstmcheck_version, sizeof e->git_commit, sizeof e->date,
                            sizeof e->control, sizeof e->unchecked};
    const char *const fields[] = {"runner", "lstmcheck_version", "git_commit", "date", "control_workload", "unchecked"};
    for (int i = 0; i < 6; i++)
        if (check_string(values[i], sizes[i], name, fields[i], err))
            return 1;
    return check_runner(e->runner, name, "runner", err);
}

/* The machine key's names and values, as the reader checks them. */
static int check_machine(const machine_key *k, const char *name, lc_error *err)
{
    char field[64];
    for (int i = 0; i < k->nfields; i++) {
        snprintf(field, sizeof field, "machine.fields.%.24s", k->names[i]);
        if (check_chars(k->names[i], name, "a name of machine.fields", err) ||
            check_chars(k->values[i], name, field, err))
            return 1;
    }
    return 0;
}

int baseline_check_entry(const baseline_entry *e, lc_error *err)
{
    const char *name = "baseline entry";
    if (check_strings(e, name, err))
        return 1;
    const int dims[] = {e->shape.seq_length, e->shape.num_layers, e->shape.input_size, e->shape.hidden_size,
                        e->shape.batch};
    for (int i = 0; i < 5; i++)
        if (check_limit(BL_DIM, dims[i], 1, name, "shape", err))
            return 1;
    return check_limit(BL_SEED, (double)e->seed, 1, name, "seed", err) ||
           check_limit(BL_ROUNDS, e->rounds, 1, name, "rounds", err) ||
           check_limit(BL_NOISE, e->noise_fwd, 0, name, "noise.forward", err) ||
           check_limit(BL_NOISE, e->noise_bwd, 0, name, "noise.backward", err) ||
           check_series(e, name, "entry", err);
}

/* ---- reading: every field checked, errors name file and field ---- */

typedef struct reader {
    const char *path;
    lc_error *err;
} reader;

/* The members of each object of a version-1 file, as the writer writes them
 * (entry_json, lstm_shape_json, stats_json); NULL-terminated. */
static const char *const file_members[] = {"format", "version", "machine", "entries", NULL};
static const char *const machine_members[] = {"device", "fields", NULL};
static const char *const entry_members[] = {
    "runner", "shape", "seed", "lstmcheck_version", "git_commit", "reproducible", "date", "control_workload", "unchecked",
    "rounds", "noise", "forward", "backward", "control", "forward_ratio", "backward_ratio", NULL};
static const char *const shape_members[] = {"seqLength", "numLayers", "inputSize", "hiddenSize", "miniBatch",
                                            NULL};
static const char *const noise_members[] = {"forward", "backward", NULL};
static const char *const series_members[] = {"n",  "mean", "std", "median", "min", "max",
                                             "q1", "q3",   "mad", "samples", NULL};

/* 0 when every member of obj (at where, a `what` of the format) is one of
 * known: the next update rewrites the file from what was read, so a member
 * it does not know would vanish unseen. */
static int check_members(reader *r, const cJSON *obj, const char *where, const char *const *known,
                         const char *what)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        int i = 0;
        while (known[i] && strcmp(known[i], c->string))
            i++;
        if (!known[i]) {
            lc_error_set(r->err, "%s: %s.%.64s is not a member of a version-%d %s (an update would drop it; "
                         "remove it or use the lstmcheck that wrote it)", r->path, where, c->string,
                         BASELINE_VERSION, what);
            return 1;
        }
    }
    return 0;
}

static const cJSON *need(reader *r, const cJSON *obj, const char *where, const char *key, int type)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *want = type == cJSON_Number ? "a number" : type == cJSON_String ? "a string"
                       : type == cJSON_Array ? "an array" : "an object";
    if (!v) {
        lc_error_set(r->err, "%s: %s.%s is missing", r->path, where, key);
        return NULL;
    }
    if (!(v->type & type)) {
        lc_error_set(r->err, "%s: %s.%s must be %s", r->path, where, key, want);
        return NULL;
    }
    return v;
}

/* A number of the file within limit id (whole: an integer). */
static int read_number(reader *r, const cJSON *obj, const char *where, const char *key, baseline_limit_id id,
                       int whole, double *out)
{
    const cJSON *v = need(r, obj, where, key, cJSON_Number);
    char field[160];
    snprintf(field, sizeof field, "%s.%s", where, key);
    if (!v || check_limit(id, v->valuedouble, whole, r->path, field, r->err))
        return 1;
    *out = v->valuedouble;
    return 0;
}

static int read_int(reader *r, const cJSON *obj, const char *where, const char *key, baseline_limit_id id, int *out)
{
    double d;
    if (read_number(r, obj, where, key, id, 1, &d))
        return 1;
    *out = (int)d;
    return 0;
}

/* A string that fits its field of n bytes: a longer one is refused, not
 * cut (a cut one would be written back cut). */
static int read_str(reader *r, const cJSON *obj, const char *where, const char *key, char *out, size_t n)
{
    const cJSON *v = need(r, obj, where, key, cJSON_String);
    char field[160];
    snprintf(field, sizeof field, "%s.%s", where, key);
    if (!v || check_string(v->valuestring, n, r->path, field, r->err))
        return 1;
    snprintf(out, n, "%s", v->valuestring);
    return 0;
}

/* One series: its samples, walked once (linear in their number), and its
 * "n", which must count them where it is given. */
static int read_series(reader *r, const cJSON *obj, const char *where, const char *key, baseline_series *s)
{
    char at[160];
    const cJSON *o = need(r, obj, where, key, cJSON_Object);
    if (!o)
        return 1;
    snprintf(at, sizeof at, "%s.%s", where, key);
    if (check_members(r, o, at, series_members, "baseline series"))
        return 1;
    const cJSON *arr = need(r, o, at, "samples", cJSON_Array);
    double n_field = 0;
    const int has_n = cJSON_GetObjectItemCaseSensitive(o, "n") != NULL; /* the summary's count, if given */
    if (!arr || (has_n && read_number(r, o, at, "n", BL_SAMPLES, 1, &n_field)))
        return 1;
    const int n = cJSON_GetArraySize(arr);
    if (has_n && n != (int)n_field) {
        lc_error_set(r->err, "%s: %s.n is %d but it holds %d samples", r->path, at, (int)n_field, n);
        return 1;
    }
    s->samples = malloc((size_t)n * sizeof *s->samples);
    if (!s->samples) {
        lc_error_set(r->err, "out of memory reading %s", r->path);
        return 1;
    }
    s->n = n;
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        if (!cJSON_IsNumber(v)) { /* its value: check_series, the writer's rule */
            lc_error_set(r->err, "%s: %s.samples[%d] must be a positive finite number", r->path, at, i);
            return 1;
        }
        s->samples[i++] = v->valuedouble;
    }
    return 0;
}

/* entries[i].shape: the original's flag names */
static int read_shape(reader *r, const cJSON *o, const char *where, lstm_shape *s)
{
    const cJSON *sh = need(r, o, where, "shape", cJSON_Object);
    if (!sh)
        return 1;
    char at[96];
    snprintf(at, sizeof at, "%s.shape", where);
    return check_members(r, sh, at, shape_members, "baseline entry's shape") ||
           read_int(r, sh, at, "seqLength", BL_DIM, &s->seq_length) ||
           read_int(r, sh, at, "numLayers", BL_DIM, &s->num_layers) ||
           read_int(r, sh, at, "inputSize", BL_DIM, &s->input_size) ||
           read_int(r, sh, at, "hiddenSize", BL_DIM, &s->hidden_size) ||
           read_int(r, sh, at, "miniBatch", BL_DIM, &s->batch);
}

/* What was measured and how it can be measured again. */
static int read_provenance(reader *r, const cJSON *o, const char *where, baseline_entry *e)
{
    double seed;
    if (read_number(r, o, where, "seed", BL_SEED, 1, &seed) || read_int(r, o, where, "rounds", BL_ROUNDS, &e->rounds))
        return 1;
    e->seed = (unsigned long long)seed;
    if (read_str(r, o, where, "lstmcheck_version", e->lstmcheck_version, sizeof e->lstmcheck_version) ||
        read_str(r, o, where, "git_commit", e->git_commit, sizeof e->git_commit) ||
        read_str(r, o, where, "date", e->date, sizeof e->date) ||
        read_str(r, o, where, "control_workload", e->control, sizeof e->control))
        return 1;
    /* optional (files written before it existed): derived from the commit */
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "reproducible");
    if (rep && !cJSON_IsBool(rep)) {
        lc_error_set(r->err, "%s: %s.reproducible must be true or false", r->path, where);
        return 1;
    }
    e->reproducible = rep ? cJSON_IsTrue(rep) && git_commit_is_reproducible(e->git_commit)
                          : git_commit_is_reproducible(e->git_commit);
    /* only where the timing was not of what the gate checked */
    return cJSON_GetObjectItemCaseSensitive(o, "unchecked") &&
           read_str(r, o, where, "unchecked", e->unchecked, sizeof e->unchecked);
}

static int read_noise(reader *r, const cJSON *o, const char *where, baseline_entry *e)
{
    const cJSON *noise = need(r, o, where, "noise", cJSON_Object);
    char at[96];
    snprintf(at, sizeof at, "%s.noise", where);
    return !noise || check_members(r, noise, at, noise_members, "baseline entry's noise") ||
           read_number(r, noise, at, "forward", BL_NOISE, 0, &e->noise_fwd) ||
           read_number(r, noise, at, "backward", BL_NOISE, 0, &e->noise_bwd);
}

static int read_entry(reader *r, const cJSON *o, int index, baseline_entry *e)
{
    char where[64];
    snprintf(where, sizeof where, "entries[%d]", index);
    memset(e, 0, sizeof *e);
    if (!cJSON_IsObject(o)) {
        lc_error_set(r->err, "%s: %s must be an object", r->path, where);
        return 1;
    }
    char runner[96];
    snprintf(runner, sizeof runner, "%s.runner", where);
    return check_members(r, o, where, entry_members, "baseline entry") ||
           read_str(r, o, where, "runner", e->runner, sizeof e->runner) ||
           check_runner(e->runner, r->path, runner, r->err) || read_shape(r, o, where, &e->shape) ||
           read_provenance(r, o, where, e) || read_series(r, o, where, "forward", &e->fwd) ||
           read_series(r, o, where, "backward", &e->bwd) || read_series(r, o, where, "control", &e->ctl) ||
           read_series(r, o, where, "forward_ratio", &e->fwd_ratio) ||
           read_series(r, o, where, "backward_ratio", &e->bwd_ratio) || read_noise(r, o, where, e) ||
           check_series(e, r->path, where, r->err);
}

/* file.format and file.version are the ones this lstmcheck writes. */
static int read_format(reader *r, const cJSON *root)
{
    char format[64];
    if (!cJSON_IsObject(root)) {
        lc_error_set(r->err, "%s: the top level must be an object", r->path);
        return 1;
    }
    if (check_members(r, root, "file", file_members, "baseline file"))
        return 1;
    if (read_str(r, root, "file", "format", format, sizeof format))
        return 1;
    if (strcmp(format, BASELINE_FORMAT)) {
        lc_error_set(r->err, "%s: file.format is '%s', expected '%s'", r->path, format, BASELINE_FORMAT);
        return 1;
    }
    const cJSON *v = need(r, root, "file", "version", cJSON_Number);
    if (!v)
        return 1;
    if (v->valuedouble != BASELINE_VERSION) {
        lc_error_set(r->err, "%s: file.version is %g; this lstmcheck reads version %d (re-create it with "
                     "'lstmcheck baseline update')", r->path, v->valuedouble, BASELINE_VERSION);
        return 1;
    }
    return 0;
}

static int read_machine(reader *r, const cJSON *root, machine_key *k)
{
    const cJSON *m = need(r, root, "file", "machine", cJSON_Object);
    char device[16];
    if (!m || check_members(r, m, "machine", machine_members, "baseline's machine") ||
        read_str(r, m, "machine", "device", device, sizeof device))
        return 1;
    if (lc_device_from_name(device, &k->device)) {
        lc_error_set(r->err, "%s: machine.device is '%s', not one of%s", r->path, device, LC_DEVICE_WORDS);
        return 1;
    }
    const cJSON *fields = need(r, m, "machine", "fields", cJSON_Object);
    if (!fields)
        return 1;
    const cJSON *fld;
    cJSON_ArrayForEach(fld, fields)
    {
        if (check_string(fld->string, sizeof k->names[0], r->path, "a name of machine.fields", r->err))
            return 1;
        char field[64];
        snprintf(field, sizeof field, "machine.fields.%.24s", fld->string);
        if (!cJSON_IsString(fld) || k->nfields == MACHINE_FIELDS) {
            lc_error_set(r->err, "%s: %s must be a string (at most %d fields)", r->path, field, MACHINE_FIELDS);
            return 1;
        }
        if (check_string(fld->valuestring, sizeof k->values[0], r->path, field, r->err))
            return 1;
        snprintf(k->names[k->nfields], sizeof k->names[0], "%s", fld->string);
        snprintf(k->values[k->nfields], sizeof k->values[0], "%s", fld->valuestring);
        k->nfields++;
    }
    machine_key_make_slug(k);
    return 0;
}

/* Every entry, each (runner, shape) once; walked once. */
static int read_entries(reader *r, const cJSON *root, baseline_file *b)
{
    const cJSON *entries = need(r, root, "file", "entries", cJSON_Array);
    if (!entries ||
        check_limit(BL_ENTRIES, cJSON_GetArraySize(entries), 1, r->path, "the number of entries", r->err))
        return 1;
    const int n = cJSON_GetArraySize(entries);
    b->entries = calloc((size_t)(n ? n : 1), sizeof *b->entries);
    if (!b->entries) {
        lc_error_set(r->err, "out of memory reading %s", r->path);
        return 1;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, entries)
    {
        const int i = b->nentries;
        if (read_entry(r, item, i, &b->entries[i])) {
            baseline_entry_free(&b->entries[i]);
            return 1;
        }
        b->nentries++;
        for (int j = 0; j < i; j++)
            if (!strcmp(b->entries[j].runner, b->entries[i].runner) &&
                lstm_shape_equal(&b->entries[j].shape, &b->entries[i].shape)) {
                lc_error_set(r->err, "%s: entries[%d] repeats runner %s at the shape of entries[%d]", r->path,
                             i, b->entries[i].runner, j);
                return 1;
            }
    }
    return 0;
}

/* No object of the format has this many members: more is not a baseline
 * (and keeps the duplicate-key check below cheap). */
#define MAX_OBJECT_MEMBERS 64
#define MAX_DEPTH 16

/* 0 when no object anywhere in v (the value of member `in`) names a key
 * twice (cJSON keeps both and finds the first: a second "entries" would be
 * dropped on rewrite) or has a key that check_chars refuses (messages
 * print keys). */
static int check_keys(reader *r, const cJSON *v, const char *in, int depth)
{
    if (depth > MAX_DEPTH) {
        lc_error_set(r->err, "%s: nested deeper than a baseline file is", r->path);
        return 1;
    }
    int members = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        if (cJSON_IsObject(v)) {
            char field[96];
            snprintf(field, sizeof field, "a member name in %.64s", in);
            if (check_chars(c->string, r->path, field, r->err))
                return 1;
            if (++members > MAX_OBJECT_MEMBERS) {
                lc_error_set(r->err, "%s: an object has more than %d members", r->path, MAX_OBJECT_MEMBERS);
                return 1;
            }
            for (const cJSON *d = v->child; d != c; d = d->next)
                if (!strcmp(d->string, c->string)) {
                    lc_error_set(r->err, "%s: key \"%.64s\" appears twice in one object", r->path, c->string);
                    return 1;
                }
        }
        if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && check_keys(r, c, c->string ? c->string : in, depth + 1))
            return 1;
    }
    return 0;
}

/* Where valid JSON text first holds the escape \u0000 (NULL: nowhere).
 * A backslash appears only in strings, each starting a pair \X: skipping
 * the pairs finds every \u0000, and "\\u0000" (a backslash, then text) is
 * none. */
static const char *escaped_nul(const char *buf, size_t len)
{
    static const char nul[] = "\\u0000";
    const size_t n = sizeof nul - 1;
    const char *p;
    for (size_t i = 0; i < len && (p = memchr(buf + i, '\\', len - i)); i += 2) {
        i = (size_t)(p - buf);
        if (len - i >= n && !memcmp(p, nul, n))
            return p;
    }
    return NULL;
}

/* One JSON document spanning all len bytes (white space after it allowed),
 * without a NUL byte, raw or escaped (cJSON would end its string there: a
 * string read cut is written back cut). */
static cJSON *parse_document(const char *buf, size_t len, const char *name, lc_error *err)
{
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        lc_error_set(err, "%s: a NUL byte at byte %ld: not a baseline file", name, (long)(nul - buf));
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        lc_error_set(err, "%s: not valid JSON (truncated or corrupt) near byte %ld", name,
                     at ? (long)(at - buf) : -1L);
        return NULL;
    }
    while (end < buf + len && strchr(" \t\r\n", *end))
        end++;
    if (end != buf + len) {
        lc_error_set(err, "%s: data after the JSON document at byte %ld", name, (long)(end - buf));
        cJSON_Delete(root);
        return NULL;
    }
    const char *escaped = escaped_nul(buf, len);
    if (escaped) {
        lc_error_set(err, "%s: \\u0000 (a NUL character, which would cut its string) at byte %ld: not a "
                     "baseline file", name, (long)(escaped - buf));
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

lc_status baseline_parse(const char *buf, size_t len, const char *name, baseline_file *b, lc_error *err)
{
    memset(b, 0, sizeof *b);
    if (len == 0) {
        lc_error_set(err, "%s: the file is empty", name);
        return LC_BAD_INPUT;
    }
    cJSON *root = parse_document(buf, len, name, err);
    if (!root)
        return LC_BAD_INPUT;
    reader r = {name, err};
    const int bad = check_keys(&r, root, "file", 0) || read_format(&r, root) ||
                    read_machine(&r, root, &b->machine) || read_entries(&r, root, b);
    cJSON_Delete(root);
    if (bad)
        baseline_free(b);
    return bad ? LC_BAD_INPUT : LC_OK;
}

lc_status baseline_load(const char *path, baseline_file *b, lc_error *err)
{
    memset(b, 0, sizeof *b);
    char *text;
    size_t len;
    lc_status rc = file_read_regular(path, BASELINE_MAX_FILE_BYTES, &text, &len, err);
    if (rc == LC_MISSING)
        lc_error_set(err, "%s: no baseline for this machine", path);
    if (rc != LC_OK)
        return rc;
    rc = baseline_parse(text, len, path, b, err);
    free(text);
    return rc;
}

/* ---- writing ---- */

/* A series: its summary, then every sample. */
static void series_json(json_writer *w, const char *key, const baseline_series *s)
{
    sample_summary sum;
    stats_summarize(s->samples, s->n, &sum);
    json_key(w, key);
    stats_json(w, &sum, s->samples);
}

static void entry_json(json_writer *w, const baseline_entry *e)
{
    json_object_begin(w);
    json_member_string(w, "runner", e->runner);
    json_key(w, "shape");
    lstm_shape_json(w, &e->shape);
    json_member_uint(w, "seed", e->seed);
    json_member_string(w, "lstmcheck_version", e->lstmcheck_version);
    json_member_string(w, "git_commit", e->git_commit);
    json_member_bool(w, "reproducible", e->reproducible);
    json_member_string(w, "date", e->date);
    json_member_string(w, "control_workload", e->control);
    if (e->unchecked[0])
        json_member_string(w, "unchecked", e->unchecked);
    json_member_int(w, "rounds", e->rounds);
    json_key(w, "noise");
    json_object_begin(w);
    json_member_double(w, "forward", e->noise_fwd);
    json_member_double(w, "backward", e->noise_bwd);
    json_object_end(w);
    series_json(w, "forward", &e->fwd);
    series_json(w, "backward", &e->bwd);
    series_json(w, "control", &e->ctl);
    series_json(w, "forward_ratio", &e->fwd_ratio);
    series_json(w, "backward_ratio", &e->bwd_ratio);
    json_object_end(w);
}

int baseline_save(const char *path, const baseline_file *b, lc_error *err)
{
    if (check_machine(&b->machine, "baseline machine key", err))
        return 1;
    for (int i = 0; i < b->nentries; i++)
        if (baseline_check_entry(&b->entries[i], err))
            return 1; /* the reader would refuse the file: write nothing */
    json_writer w;
    json_init(&w, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
    json_object_begin(&w);
    json_member_string(&w, "format", BASELINE_FORMAT);
    json_member_int(&w, "version", BASELINE_VERSION);
    json_key(&w, "machine");
    json_object_begin(&w);
    json_member_string(&w, "device", lc_device_name(b->machine.device));
    json_key(&w, "fields");
    json_object_begin(&w);
    for (int i = 0; i < b->machine.nfields; i++)
        json_member_string(&w, b->machine.names[i], b->machine.values[i]);
    json_object_end(&w);
    json_object_end(&w);
    json_key(&w, "entries");
    json_array_begin(&w);
    for (int i = 0; i < b->nentries; i++)
        entry_json(&w, &b->entries[i]);
    json_array_end(&w);
    json_object_end(&w);
    const int rc = json_write_file(&w, path, err);
    json_free(&w);
    return rc;
}

lc_status baseline_load_for(const char *path, const machine_key *key, baseline_file *b, lc_error *err)
{
    lc_status rc = baseline_load(path, b, err);
    if (rc == LC_MISSING) {
        memset(b, 0, sizeof *b);
        b->machine = *key;
        return LC_MISSING;
    }
    if (rc == LC_OK && !machine_key_equal(&b->machine, key)) {
        char have[1024], want[1024];
        machine_key_describe(&b->machine, have, sizeof have);
        machine_key_describe(key, want, sizeof want);
        lc_error_set(err, "%s: machine fields (%s) differ from this machine's (%s)", path, have, want);
        baseline_free(b);
        return LC_BAD_INPUT;
    }
    return rc;
}

lc_status baseline_store(const char *path, const machine_key *key, baseline_entry *entries, int n, lc_error *err)
{
    int lock;
    if (file_lock_parent(path, &lock, err))
        return LC_ERROR;
    const int stale = file_remove_stale_temps(path);
    if (stale)
        fprintf(stderr, "lstmcheck: removed %d temporary file%s of a killed writer beside %s\n", stale,
                stale == 1 ? "" : "s", path);
    baseline_file b;
    lc_status rc = baseline_load_for(path, key, &b, err); /* again, under the lock */
    if (rc == LC_MISSING)
        rc = LC_OK;
    for (int i = 0; rc == LC_OK && i < n; i++) {
        if (baseline_put(&b, &entries[i], err))
            rc = LC_ERROR;
        else
            memset(&entries[i], 0, sizeof entries[i]); /* b owns its arrays now */
    }
    if (rc == LC_OK && baseline_save(path, &b, err))
        rc = LC_ERROR;
    baseline_free(&b); /* empty after a failed reload */
    file_unlock(lock);
    return rc;
}

/* ---- the reference commit of a device's committed baselines ---- */

typedef struct commit_pick {
    char commit[48], date[32], file[256];
    int for_entry; /* found for the (runner, shape) asked about */
} commit_pick;

static void consider(commit_pick *best, const baseline_entry *e, const char *file, int for_entry)
{
    /* an entry of the asked (runner, shape) beats any other; then newer wins */
    if (best->commit[0] && (best->for_entry > for_entry ||
                            (best->for_entry == for_entry && strcmp(best->date, e->date) >= 0)))
        return;
    snprintf(best->commit, sizeof best->commit, "%s", e->git_commit);
    snprintf(best->date, sizeof best->date, "%s", e->date);
    snprintf(best->file, sizeof best->file, "%s", file);
    best->for_entry = for_entry;
}

/* Every reproducible and every unusable entry of the device's files in dir. */
static void pick_commits(const char *dir, lc_device device, const char *runner, const lstm_shape *shape,
                         commit_pick *best, commit_pick *unusable)
{
    memset(best, 0, sizeof *best);
    memset(unusable, 0, sizeof *unusable);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        baseline_file b;
        lc_error err;
        if (baseline_load(path, &b, &err) != LC_OK) {
            fprintf(stderr, "lstmcheck: warning: %s (not considered)\n", err.msg);
            continue;
        }
        for (int i = 0; b.machine.device == device && i < b.nentries; i++) {
            const baseline_entry *e = &b.entries[i];
            int mine = !strcmp(e->runner, runner) && lstm_shape_equal(&e->shape, shape);
            consider(e->reproducible ? best : unusable, e, de->d_name, mine);
        }
        baseline_free(&b);
    }
    if (d)
        closedir(d);
}

int baseline_reference_commit(const char *dir, lc_device device, const char *runner, const lstm_shape *shape,
                              char commit[48], char *why, size_t n)
{
    commit_pick best, unusable;
    pick_commits(dir, device, runner, shape, &best, &unusable);
    const char *name = lc_device_name(device);
    if (best.commit[0]) {
        snprintf(commit, 48, "%s", best.commit);
        snprintf(why, n, "the commit of the newest committed %s baseline%s (%s, %s): the last performance "
                 "recorded as the reference", name, best.for_entry ? " of this runner and shape" : "",
                 best.file, best.date);
        return 0;
    }
    if (unusable.commit[0])
        snprintf(why, n, "the committed %s baselines in %s record only commits that cannot be rebuilt "
                 "(newest: %s in %s)", name, dir, unusable.commit, unusable.file);
    else
        snprintf(why, n, "no committed %s baseline in %s names a commit", name, dir);
    return 1;
}
