/* Baseline files (see baseline.h), read and written with cJSON. */
#include "perf/baseline.h"
#include "base/files.h"

#include "base/gitrev.h"

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

void shape_tag(const lstm_shape *s, char *buf, size_t n)
{
    snprintf(buf, n, "s%d-l%d-i%d-h%d-b%d", s->seq_length, s->num_layers, s->input_size,
             s->hidden_size, s->batch);
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

static int read_entry(reader *r, const cJSON *o, int index, baseline_entry *e)
{
    char where[64];
    snprintf(where, sizeof where, "entries[%d]", index);
    memset(e, 0, sizeof *e);
    if (!cJSON_IsObject(o)) {
        lc_error_set(r->err, "%s: %s must be an object", r->path, where);
        return 1;
    }
    if (read_str(r, o, where, "runner", e->runner, sizeof e->runner))
        return 1;
    const cJSON *sh = need(r, o, where, "shape", cJSON_Object);
    if (!sh)
        return 1;
    char sw[96];
    snprintf(sw, sizeof sw, "%s.shape", where);
    if (read_int(r, sh, sw, "seqLength", 1, &e->shape.seq_length) ||
        read_int(r, sh, sw, "numLayers", 1, &e->shape.num_layers) ||
        read_int(r, sh, sw, "inputSize", 1, &e->shape.input_size) ||
        read_int(r, sh, sw, "hiddenSize", 1, &e->shape.hidden_size) ||
        read_int(r, sh, sw, "miniBatch", 1, &e->shape.batch))
        return 1;
    int seed, rounds;
    if (read_int(r, o, where, "seed", 0, &seed) || read_int(r, o, where, "rounds", 1, &rounds))
        return 1;
    e->seed = (unsigned long long)seed;
    e->rounds = rounds;
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
    if (read_series(r, o, where, "forward", &e->fwd) || read_series(r, o, where, "backward", &e->bwd) ||
        read_series(r, o, where, "control", &e->ctl) ||
        read_series(r, o, where, "forward_ratio", &e->fwd_ratio) ||
        read_series(r, o, where, "backward_ratio", &e->bwd_ratio))
        return 1;
    const cJSON *noise = need(r, o, where, "noise", cJSON_Object);
    if (!noise)
        return 1;
    char nw[96];
    snprintf(nw, sizeof nw, "%s.noise", where);
    const cJSON *nf = need(r, noise, nw, "forward", cJSON_Number);
    const cJSON *nb = nf ? need(r, noise, nw, "backward", cJSON_Number) : NULL;
    if (!nf || !nb)
        return 1;
    if (!isfinite(nf->valuedouble) || nf->valuedouble < 0 || !isfinite(nb->valuedouble) || nb->valuedouble < 0) {
        lc_error_set(r->err, "%s: %s.forward/backward must be finite and >= 0", r->path, nw);
        return 1;
    }
    e->noise_fwd = nf->valuedouble;
    e->noise_bwd = nb->valuedouble;
    return 0;
}

lc_status baseline_load(const char *path, baseline_file *b, lc_error *err)
{
    memset(b, 0, sizeof *b);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) {
            lc_error_set(err, "%s: no baseline for this machine", path);
            return LC_MISSING;
        }
        lc_error_set(err, "%s: %s", path, strerror(errno));
        return LC_BAD_INPUT;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size <= 0) {
        fclose(f);
        lc_error_set(err, "%s: the file is empty", path);
        return LC_BAD_INPUT;
    }
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(text);
        lc_error_set(err, "%s: cannot read", path);
        return LC_BAD_INPUT;
    }
    fclose(f);
    text[size] = '\0';
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
    int rc = LC_BAD_INPUT;
    char format[64];
    int version;
    if (!cJSON_IsObject(root)) {
        lc_error_set(err, "%s: the top level must be an object", path);
        goto done;
    }
    if (read_str(&r, root, "file", "format", format, sizeof format))
        goto done;
    if (strcmp(format, BASELINE_FORMAT)) {
        lc_error_set(err, "%s: file.format is '%s', expected '%s'", path, format, BASELINE_FORMAT);
        goto done;
    }
    if (read_int(&r, root, "file", "version", 0, &version))
        goto done;
    if (version != BASELINE_VERSION) {
        lc_error_set(err, "%s: file.version is %d; this lstmcheck reads version %d (re-create it with "
                     "'lstmcheck baseline update')", path, version, BASELINE_VERSION);
        goto done;
    }
    const cJSON *m = need(&r, root, "file", "machine", cJSON_Object);
    if (!m || read_str(&r, m, "machine", "device", b->machine.device, sizeof b->machine.device))
        goto done;
    const cJSON *fields = need(&r, m, "machine", "fields", cJSON_Object);
    if (!fields)
        goto done;
    const cJSON *fld;
    cJSON_ArrayForEach(fld, fields)
    {
        if (!cJSON_IsString(fld) || b->machine.nfields == MACHINE_FIELDS) {
            lc_error_set(err, "%s: machine.fields.%s must be a string (at most %d fields)", path,
                         fld->string ? fld->string : "?", MACHINE_FIELDS);
            goto done;
        }
        snprintf(b->machine.names[b->machine.nfields], sizeof b->machine.names[0], "%s", fld->string);
        snprintf(b->machine.values[b->machine.nfields], sizeof b->machine.values[0], "%s", fld->valuestring);
        b->machine.nfields++;
    }
    machine_key_make_slug(&b->machine);
    const cJSON *entries = need(&r, root, "file", "entries", cJSON_Array);
    if (!entries)
        goto done;
    int n = cJSON_GetArraySize(entries);
    b->entries = calloc((size_t)(n ? n : 1), sizeof *b->entries);
    if (!b->entries) {
        lc_error_set(err, "out of memory reading %s", path);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (read_entry(&r, cJSON_GetArrayItem(entries, i), i, &b->entries[i])) {
            baseline_entry_free(&b->entries[i]);
            goto done;
        }
        b->nentries++;
        for (int j = 0; j < i; j++)
            if (!strcmp(b->entries[j].runner, b->entries[i].runner) &&
                shape_equal(&b->entries[j].shape, &b->entries[i].shape)) {
                lc_error_set(err, "%s: entries[%d] repeats runner %s at the shape of entries[%d]", path, i,
                             b->entries[i].runner, j);
                goto done;
            }
    }
    rc = LC_OK;
done:
    cJSON_Delete(root);
    if (rc != LC_OK)
        baseline_free(b);
    return rc;
}

/* ---- writing ---- */

static cJSON *series_json(const baseline_series *s)
{
    sample_summary sum;
    stats_summarize(s->samples, s->n, &sum);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", s->n);
    cJSON_AddNumberToObject(o, "median", sum.median);
    cJSON_AddNumberToObject(o, "mean", sum.mean);
    cJSON_AddNumberToObject(o, "std", sum.std);
    cJSON_AddNumberToObject(o, "min", sum.min);
    cJSON_AddNumberToObject(o, "q1", sum.q1);
    cJSON_AddNumberToObject(o, "q3", sum.q3);
    cJSON_AddNumberToObject(o, "mad", sum.mad);
    cJSON_AddItemToObject(o, "samples", cJSON_CreateDoubleArray(s->samples, s->n));
    return o;
}

int baseline_save(const char *path, const baseline_file *b, lc_error *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", BASELINE_FORMAT);
    cJSON_AddNumberToObject(root, "version", BASELINE_VERSION);
    cJSON *m = cJSON_AddObjectToObject(root, "machine");
    cJSON_AddStringToObject(m, "device", b->machine.device);
    cJSON *fields = cJSON_AddObjectToObject(m, "fields");
    for (int i = 0; i < b->machine.nfields; i++)
        cJSON_AddStringToObject(fields, b->machine.names[i], b->machine.values[i]);
    cJSON *entries = cJSON_AddArrayToObject(root, "entries");
    for (int i = 0; i < b->nentries; i++) {
        const baseline_entry *e = &b->entries[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "runner", e->runner);
        cJSON *sh = cJSON_AddObjectToObject(o, "shape");
        cJSON_AddNumberToObject(sh, "seqLength", e->shape.seq_length);
        cJSON_AddNumberToObject(sh, "numLayers", e->shape.num_layers);
        cJSON_AddNumberToObject(sh, "inputSize", e->shape.input_size);
        cJSON_AddNumberToObject(sh, "hiddenSize", e->shape.hidden_size);
        cJSON_AddNumberToObject(sh, "miniBatch", e->shape.batch);
        cJSON_AddNumberToObject(o, "seed", (double)e->seed);
        cJSON_AddStringToObject(o, "lstmcheck_version", e->lstmcheck_version);
        cJSON_AddStringToObject(o, "git_commit", e->git_commit);
        cJSON_AddBoolToObject(o, "reproducible", e->reproducible);
        cJSON_AddStringToObject(o, "date", e->date);
        cJSON_AddStringToObject(o, "control_workload", e->control);
        cJSON_AddNumberToObject(o, "rounds", e->rounds);
        cJSON *noise = cJSON_AddObjectToObject(o, "noise");
        cJSON_AddNumberToObject(noise, "forward", e->noise_fwd);
        cJSON_AddNumberToObject(noise, "backward", e->noise_bwd);
        cJSON_AddItemToObject(o, "forward", series_json(&e->fwd));
        cJSON_AddItemToObject(o, "backward", series_json(&e->bwd));
        cJSON_AddItemToObject(o, "control", series_json(&e->ctl));
        cJSON_AddItemToObject(o, "forward_ratio", series_json(&e->fwd_ratio));
        cJSON_AddItemToObject(o, "backward_ratio", series_json(&e->bwd_ratio));
        cJSON_AddItemToArray(entries, o);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        lc_error_set(err, "out of memory writing %s", path);
        return 1;
    }
    size_t len = strlen(text);
    char *withnl = malloc(len + 2);
    if (!withnl) {
        free(text);
        lc_error_set(err, "out of memory writing %s", path);
        return 1;
    }
    memcpy(withnl, text, len);
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    free(text);
    int rc = file_write_atomic(path, withnl, len + 1, err);
    free(withnl);
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

int baseline_reference_commit(const char *dir, const char *device, const char *runner, const lstm_shape *shape,
                              char commit[48], char *why, size_t n)
{
    commit_pick best, unusable;
    memset(&best, 0, sizeof best);
    memset(&unusable, 0, sizeof unusable);
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
        for (int i = 0; strcmp(b.machine.device, device) == 0 && i < b.nentries; i++) {
            const baseline_entry *e = &b.entries[i];
            int mine = !strcmp(e->runner, runner) && shape_equal(&e->shape, shape);
            consider(e->reproducible ? &best : &unusable, e, de->d_name, mine);
        }
        baseline_free(&b);
    }
    if (d)
        closedir(d);
    if (best.commit[0]) {
        snprintf(commit, 48, "%s", best.commit);
        snprintf(why, n, "the commit of the newest committed %s baseline%s (%s, %s): the last performance "
                 "recorded as the reference", device, best.for_entry ? " of this runner and shape" : "",
                 best.file, best.date);
        return 0;
    }
    if (unusable.commit[0])
        snprintf(why, n, "the committed %s baselines in %s record only commits that cannot be rebuilt "
                 "(newest: %s in %s)", device, dir, unusable.commit, unusable.file);
    else
        snprintf(why, n, "no committed %s baseline in %s names a commit", device, dir);
    return 1;
}
