/* Baseline files (see baseline.h): read with cJSON, written with base/json. */
#include "perf/baseline.h"

#include "base/gitrev.h"
#include "base/json.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LSTMCHECK_SOURCE_DIR
#define LSTMCHECK_SOURCE_DIR "."
#endif

const char *baseline_default_dir(void)
{
    const char *env = getenv("LSTMCHECK_BASELINE_DIR");
    return env && *env ? env : LSTMCHECK_SOURCE_DIR "/baselines";
}

void baseline_path(const char *dir, const machine_key *k, char *path, size_t n)
{
    snprintf(path, n, "%s/%s.json", dir, k->slug);
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

void baseline_free(baseline_file *b)
{
    for (int i = 0; i < b->nentries; i++)
        baseline_entry_free(&b->entries[i]);
    free(b->entries);
    memset(b, 0, sizeof *b);
}

static int shape_equal(const lstm_shape *a, const lstm_shape *b)
{
    return a->seq_length == b->seq_length && a->batch == b->batch && a->input_size == b->input_size &&
           a->hidden_size == b->hidden_size && a->num_layers == b->num_layers;
}

baseline_entry *baseline_find(baseline_file *b, const char *runner, const lstm_shape *s)
{
    for (int i = 0; i < b->nentries; i++)
        if (!strcmp(b->entries[i].runner, runner) && shape_equal(&b->entries[i].shape, s))
            return &b->entries[i];
    return NULL;
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
    baseline_entry *old = baseline_find(b, e->runner, &e->shape);
    if (old) {
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

/* ---- reading: every field checked, errors name file and field ---- */

typedef struct reader {
    const char *path;
    lc_error *err;
} reader;

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

static int read_int(reader *r, const cJSON *obj, const char *where, const char *key, int lo, int *out)
{
    const cJSON *v = need(r, obj, where, key, cJSON_Number);
    if (!v)
        return 1;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < lo || d > LSTM_MAX_DIM) {
        lc_error_set(r->err, "%s: %s.%s = %g is not an integer >= %d", r->path, where, key, d, lo);
        return 1;
    }
    *out = (int)d;
    return 0;
}

static int read_str(reader *r, const cJSON *obj, const char *where, const char *key, char *out, size_t n)
{
    const cJSON *v = need(r, obj, where, key, cJSON_String);
    if (!v)
        return 1;
    snprintf(out, n, "%s", v->valuestring);
    return 0;
}

static int read_series(reader *r, const cJSON *obj, const char *where, const char *key, baseline_series *s)
{
    char at[160];
    const cJSON *o = need(r, obj, where, key, cJSON_Object);
    if (!o)
        return 1;
    snprintf(at, sizeof at, "%s.%s", where, key);
    const cJSON *arr = need(r, o, at, "samples", cJSON_Array);
    if (!arr)
        return 1;
    int n = cJSON_GetArraySize(arr);
    if (n < 1) {
        lc_error_set(r->err, "%s: %s.samples is empty", r->path, at);
        return 1;
    }
    s->samples = malloc((size_t)n * sizeof *s->samples);
    if (!s->samples) {
        lc_error_set(r->err, "out of memory reading %s", r->path);
        return 1;
    }
    s->n = n;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0) {
            lc_error_set(r->err, "%s: %s.samples[%d] must be a positive finite number", r->path, at, i);
            return 1;
        }
        s->samples[i] = v->valuedouble;
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
    return read_int(r, sh, at, "seqLength", 1, &s->seq_length) ||
           read_int(r, sh, at, "numLayers", 1, &s->num_layers) ||
           read_int(r, sh, at, "inputSize", 1, &s->input_size) ||
           read_int(r, sh, at, "hiddenSize", 1, &s->hidden_size) || read_int(r, sh, at, "miniBatch", 1, &s->batch);
}

/* What was measured and how it can be measured again. */
static int read_provenance(reader *r, const cJSON *o, const char *where, baseline_entry *e)
{
    int seed;
    if (read_int(r, o, where, "seed", 0, &seed) || read_int(r, o, where, "rounds", 1, &e->rounds))
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
    return 0;
}

static int read_noise(reader *r, const cJSON *o, const char *where, baseline_entry *e)
{
    const cJSON *noise = need(r, o, where, "noise", cJSON_Object);
    if (!noise)
        return 1;
    char at[96];
    snprintf(at, sizeof at, "%s.noise", where);
    const cJSON *nf = need(r, noise, at, "forward", cJSON_Number);
    const cJSON *nb = nf ? need(r, noise, at, "backward", cJSON_Number) : NULL;
    if (!nf || !nb)
        return 1;
    if (!isfinite(nf->valuedouble) || nf->valuedouble < 0 || !isfinite(nb->valuedouble) || nb->valuedouble < 0) {
        lc_error_set(r->err, "%s: %s.forward/backward must be finite and >= 0", r->path, at);
        return 1;
    }
    e->noise_fwd = nf->valuedouble;
    e->noise_bwd = nb->valuedouble;
    return 0;
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
    return read_str(r, o, where, "runner", e->runner, sizeof e->runner) || read_shape(r, o, where, &e->shape) ||
           read_provenance(r, o, where, e) || read_series(r, o, where, "forward", &e->fwd) ||
           read_series(r, o, where, "backward", &e->bwd) || read_series(r, o, where, "control", &e->ctl) ||
           read_series(r, o, where, "forward_ratio", &e->fwd_ratio) ||
           read_series(r, o, where, "backward_ratio", &e->bwd_ratio) || read_noise(r, o, where, e);
}

/* The whole file as a NUL-terminated string: LC_OK, LC_MISSING or LC_BAD_INPUT. */
static lc_status read_text(const char *path, char **text, lc_error *err)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        const int why = errno;
        if (why == ENOENT) {
            lc_error_set(err, "%s: no baseline for this machine", path);
            return LC_MISSING;
        }
        lc_error_set(err, "%s: %s", path, strerror(why));
        return LC_BAD_INPUT;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = size > 0 ? malloc((size_t)size + 1) : NULL;
    const int ok = buf && fread(buf, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(buf);
        lc_error_set(err, size <= 0 ? "%s: the file is empty" : "%s: cannot read", path);
        return LC_BAD_INPUT;
    }
    buf[size] = '\0';
    *text = buf;
    return LC_OK;
}

/* file.format and file.version are the ones this lstmcheck writes. */
static int read_format(reader *r, const cJSON *root)
{
    char format[64];
    int version;
    if (!cJSON_IsObject(root)) {
        lc_error_set(r->err, "%s: the top level must be an object", r->path);
        return 1;
    }
    if (read_str(r, root, "file", "format", format, sizeof format))
        return 1;
    if (strcmp(format, BASELINE_FORMAT)) {
        lc_error_set(r->err, "%s: file.format is '%s', expected '%s'", r->path, format, BASELINE_FORMAT);
        return 1;
    }
    if (read_int(r, root, "file", "version", 0, &version))
        return 1;
    if (version != BASELINE_VERSION) {
        lc_error_set(r->err, "%s: file.version is %d; this lstmcheck reads version %d (re-create it with "
                     "'lstmcheck baseline update')", r->path, version, BASELINE_VERSION);
        return 1;
    }
    return 0;
}

static int read_machine(reader *r, const cJSON *root, machine_key *k)
{
    const cJSON *m = need(r, root, "file", "machine", cJSON_Object);
    char device[16];
    if (!m || read_str(r, m, "machine", "device", device, sizeof device))
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
        if (!cJSON_IsString(fld) || k->nfields == MACHINE_FIELDS) {
            lc_error_set(r->err, "%s: machine.fields.%s must be a string (at most %d fields)", r->path,
                         fld->string ? fld->string : "?", MACHINE_FIELDS);
            return 1;
        }
        snprintf(k->names[k->nfields], sizeof k->names[0], "%s", fld->string);
        snprintf(k->values[k->nfields], sizeof k->values[0], "%s", fld->valuestring);
        k->nfields++;
    }
    machine_key_make_slug(k);
    return 0;
}

/* Every entry, each (runner, shape) once. */
static int read_entries(reader *r, const cJSON *root, baseline_file *b)
{
    const cJSON *entries = need(r, root, "file", "entries", cJSON_Array);
    if (!entries)
        return 1;
    int n = cJSON_GetArraySize(entries);
    b->entries = calloc((size_t)(n ? n : 1), sizeof *b->entries);
    if (!b->entries) {
        lc_error_set(r->err, "out of memory reading %s", r->path);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (read_entry(r, cJSON_GetArrayItem(entries, i), i, &b->entries[i])) {
            baseline_entry_free(&b->entries[i]);
            return 1;
        }
        b->nentries++;
        for (int j = 0; j < i; j++)
            if (!strcmp(b->entries[j].runner, b->entries[i].runner) &&
                shape_equal(&b->entries[j].shape, &b->entries[i].shape)) {
                lc_error_set(r->err, "%s: entries[%d] repeats runner %s at the shape of entries[%d]", r->path,
                             i, b->entries[i].runner, j);
                return 1;
            }
    }
    return 0;
}

lc_status baseline_load(const char *path, baseline_file *b, lc_error *err)
{
    memset(b, 0, sizeof *b);
    char *text;
    lc_status rc = read_text(path, &text, err);
    if (rc != LC_OK)
        return rc;
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        lc_error_set(err, "%s: not valid JSON (truncated or corrupt) near byte %ld", path,
                     at ? (long)(at - text) : -1L);
        free(text);
        return LC_BAD_INPUT;
    }
    free(text);
    reader r = {path, err};
    rc = read_format(&r, root) || read_machine(&r, root, &b->machine) || read_entries(&r, root, b) ? LC_BAD_INPUT
                                                                                                   : LC_OK;
    cJSON_Delete(root);
    if (rc != LC_OK)
        baseline_free(b);
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
            int mine = !strcmp(e->runner, runner) && shape_equal(&e->shape, shape);
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
