/* dump_test: a --dump is enough to recompute its case. Gates the cpu
 * runner (and a state-only variant of it) with a dump, then reads the dump
 * back as an outsider would: index.json with cJSON, tensors with
 * npy_read. From the dumped inputs alone it rebuilds the problem, runs the
 * reference and requires every dumped reference tensor bit for bit. It
 * also checks that the recorded seed regenerates the dumped inputs, that
 * the recorded loss names the seeded outputs, and that the recorded
 * tolerance parameters reproduce the gate's ratio of every tensor. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/gate.h"
#include "model/inputs.h"
#include "check/npy.h"
#include "model/reference.h"
#include "runners/runner.h"

#define FAIL(...) (printf("dump_test: " __VA_ARGS__), printf("\n"), 1)
#define MAX_VIEWS 64 /* 6 + up to 8 per layer (layernorm): enough for the shapes below */

typedef struct dump {
    char dir[4096];
    cJSON *index;
    lstm_shape shape;
    int model; /* index.json's "model", by name */
} dump;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1))) {
        if (fread(text, 1, (size_t)n, f) == (size_t)n) {
            text[n] = '\0';
        } else {
            free(text);
            text = NULL;
        }
    }
    fclose(f);
    return text;
}

static int number_of(const cJSON *obj, const char *key, double *v)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(item))
        return 1;
    *v = item->valuedouble;
    return 0;
}

/* Load one listed file; its dtype and element count must be as expected. */
static void *load(const dump *d, const cJSON *entry, npy_dtype want, size_t count)
{
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(entry, "file");
    char path[8192];
    npy_dtype dtype;
    void *data;
    int ndim;
    size_t dims[8], n = 1;
    lc_error err;
    if (!cJSON_IsString(file) ||
        snprintf(path, sizeof path, "%s/%s", d->dir, file->valuestring) >= (int)sizeof path)
        return NULL;
    if (npy_read(path, &dtype, &data, &ndim, dims, &err)) {
        printf("dump_test: %s\n", err.msg);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    if (dtype != want || n != count) {
        printf("dump_test: %s holds %zu elements of dtype %d, expected %zu of %d\n", path, n, dtype,
               count, want);
        free(data);
        return NULL;
    }
    return data;
}

static const char *tensor_of(const cJSON *entry)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(entry, "tensor");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static const char *role_of(const cJSON *entry)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(entry, "role");
    return cJSON_IsString(t) ? t->valuestring : "";
}

/* Where an input tensor goes in the problem, and its element count. */
static float **input_slot(lstm_problem *p, const char *name, size_t *count)
{
    const lstm_shape *s = &p->shape;
    if (!strcmp(name, "x")) { *count = lstm_seq_elems(s, s->input_size); return &p->x; }
    if (!strcmp(name, "dy")) { *count = lstm_seq_elems(s, s->hidden_size); return &p->dy; }
    *count = lstm_state_elems(s);
    if (!strcmp(name, "h0")) return &p->h0;
    if (!strcmp(name, "c0")) return &p->c0;
    if (!strcmp(name, "dhy")) return &p->dhy;
    if (!strcmp(name, "dcy")) return &p->dcy;
    /* "<tensor>.<layer>": one of the model's per-layer tensors */
    const lstm_model *m = lstm_model_get(p->model);
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        const size_t n = strlen(t->name);
        int l, end = 0;
        if (strncmp(name, t->name, n) || sscanf(name + n, ".%d%n", &l, &end) != 1 || name[n + (size_t)end] ||
            l < 0 || l >= model_tensor_layers(t, s))
            continue;
        *count = model_tensor_elems(t, s, l);
        return &model_tensor_inputs(t, p)[l];
    }
    return NULL;
}

/* The problem from the dump's index and input files alone. */
static int rebuild_problem(const dump *d, lstm_problem *p)
{
    lc_error err;
    if (lstm_problem_alloc(p, &d->shape, d->model, &err))
        return FAIL("%s", err.msg);
    const cJSON *entry;
    int loaded = 0;
    cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(d->index, "files")) {
        if (strcmp(role_of(entry), "input"))
            continue;
        const char *name = tensor_of(entry);
        if (!strcmp(name, "lengths")) {
            if (!(p->lengths = load(d, entry, NPY_I32, (size_t)d->shape.batch)))
                return 1;
            loaded++;
            continue;
        }
        size_t count;
        float **slot = input_slot(p, name, &count);
        float *data = slot ? load(d, entry, NPY_F32, count) : NULL;
        if (!data)
            return FAIL("input '%s' cannot be placed or loaded", name);
        free(*slot);
        *slot = data;
        loaded++;
    }
    const cJSON *lengths = cJSON_GetObjectItemCaseSensitive(d->index, "lengths");
    const int seeded = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d->index, "seeded"));
    const lstm_model *m = lstm_model_get(d->model);
    int expected = 3 + seeded + !cJSON_IsNull(lengths); /* x, h0, c0, the seeds, the lengths */
    for (int i = 0; i < m->ntensors; i++)
        expected += model_tensor_layers(&m->tensors[i], &d->shape); /* w_ih.0, ..., dropout_mask.1 */
    if (loaded != expected)
        return FAIL("%d input files, expected %d", loaded, expected);
    for (int b = 0; p->lengths && b < d->shape.batch; b++)
        if (cJSON_GetArrayItem(lengths, b)->valueint != p->lengths[b])
            return FAIL("lengths in index.json and input_lengths.npy differ at %d", b);
    return 0;
}

/* The view of recomputed results with this tensor name. */
static const lstm_tensor_view *find_view(const lstm_tensor_view *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

/* The reference recomputed from the dumped inputs, as named views; and,
 * for a model that measures its sensitivity, on them moved, one per draw
 * (draws: how many; 0 otherwise). */
typedef struct recomputed {
    lstm_results results, moved[GATE_MOVED_DRAWS];
    lstm_tensor_view views[MAX_VIEWS], moved_views[GATE_MOVED_DRAWS][MAX_VIEWS];
    int nviews, nmoved, draws;
} recomputed;

/* Every dumped tensor of the reference (draw -1) or of a draw's moved
 * reference equals the recomputed one, bit for bit. */
static int check_reference(const dump *d, const lstm_problem *p, const recomputed *rec, int draw)
{
    char role[32] = "reference";
    if (draw >= 0)
        snprintf(role, sizeof role, "moved_reference_%d", draw);
    const int moved = draw >= 0;
    const lstm_tensor_view *v = moved ? rec->moved_views[draw] : rec->views;
    const int n = moved ? rec->nmoved : rec->nviews;
    int compared = 0, rc = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(d->index, "files")) {
        if (rc || strcmp(role_of(entry), role))
            continue;
        const lstm_tensor_view *mine = find_view(v, n, tensor_of(entry));
        double *dumped = mine ? load(d, entry, NPY_F64, mine->count) : NULL;
        if (!dumped)
            rc = FAIL("%s tensor '%s' not loadable", role, tensor_of(entry));
        else if (memcmp(dumped, mine->data, mine->count * sizeof(double)))
            rc = FAIL("%s tensor '%s' differs from the one recomputed", role, mine->name);
        free(dumped);
        compared++;
    }
    /* every tensor the gate compares: y (when dy is seeded), hy, cy, dx,
     * dh0, dc0 and the gradient of each of the model's parameters per layer */
    const lstm_model *m = lstm_model_get(d->model);
    int expected = (p->dy != NULL) + 5;
    for (int i = 0; i < m->ntensors; i++)
        expected += m->tensors[i].has_grad ? model_tensor_layers(&m->tensors[i], &d->shape) : 0;
    if (moved && !(m->moved_reference && draw < rec->draws))
        expected = 0;
    if (!rc && compared != expected)
        rc = FAIL("%d %s tensors in the dump, expected %d", compared, role, expected);
    if (!rc)
        printf("dump_test: %s: %d %s tensors recomputed from the dumped inputs, bit-identical\n",
               d->dir, compared, role);
    return rc;
}

/* The recorded seed and seeded outputs regenerate the dumped inputs. */
static int check_seed(const dump *d, const lstm_problem *dumped)
{
    double seed;
    unsigned mask = 0;
    const cJSON *s;
    if (number_of(d->index, "seed", &seed))
        return FAIL("index.json has no seed");
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(d->index, "seeded")) {
        const char *name = cJSON_IsString(s) ? s->valuestring : "";
        mask |= !strcmp(name, "dy") ? SEED_DY : !strcmp(name, "dhy") ? SEED_DHY
              : !strcmp(name, "dcy") ? SEED_DCY : 0;
    }
    lstm_problem p;
    lc_error err;
    if (lstm_problem_alloc(&p, &d->shape, d->model, &err) || lstm_inputs_generate(&p, (uint64_t)seed, mask, &err))
        return FAIL("%s", err.msg);
    char where[256] = "";
    const int same = !p.dy == !dumped->dy && !p.dhy == !dumped->dhy && !p.dcy == !dumped->dcy &&
                     !lstm_problem_differs(&p, dumped, where, sizeof where);
    if (!same)
        printf("dump_test: %s\n", where);
    lstm_problem_free(&p);
    return same ? 0 : FAIL("seed %.0f with the recorded seeds does not regenerate the dumped inputs", seed);
}

/* |moved(e) - ref(e)|, the largest of the draws (0 without any) */
static double moved_by(const double *ref, const double *const *moved, int draws, size_t i)
{
    double most = 0;
    for (int k = 0; k < draws; k++)
        most = fmax(most, fabs(moved[k][i] - ref[i]));
    return most;
}

/* The worst error/allowed of one runner tensor, from the rule's recorded
 * parameters (not from tolerance.c); moved: the draws' moved references
 * of the tensor (draws of them, 0 for a model without). */
static double recorded_ratio(const cJSON *tol, const char *kind, const double *ref, const double *const *moved,
                             int draws, const double *got, size_t n)
{
    double safety, moved_safety, u, m, cap, N, sumsq = 0, moved_rms = 0, worst = 0;
    if (number_of(tol, "safety", &safety) || number_of(tol, "moved_safety", &moved_safety) ||
        number_of(tol, "unit_roundoff", &u) || number_of(tol, "smallest_normal", &m) ||
        number_of(tol, "max_scale", &cap) || number_of(cJSON_GetObjectItemCaseSensitive(tol, "N"), kind, &N))
        return NAN;
    for (size_t i = 0; i < n; i++)
        sumsq += ref[i] * ref[i];
    for (int k = 0; k < draws; k++) { /* the largest draw's rms */
        double sq = 0;
        for (size_t i = 0; i < n; i++)
            sq += (moved[k][i] - ref[i]) * (moved[k][i] - ref[i]);
        moved_rms = fmax(moved_rms, sqrt(sq / (double)n));
    }
    const double rms = sqrt(sumsq / (double)n);
    const double depth = safety * sqrt(N), moved_scale = moved_safety * u / ldexp(1.0, -24);
    for (size_t i = 0; i < n; i++) {
        const double size = fabs(ref[i]) + rms;
        const double relative =
            fmin(depth * u * size + moved_scale * (moved_by(ref, moved, draws, i) + moved_rms), cap * size);
        const double ratio = fabs(got[i] - ref[i]) / (relative + depth * m);
        worst = ratio > worst ? ratio : worst;
    }
    return worst;
}

/* Each runner tensor's recorded worst ratio follows from the recorded rule. */
static int check_tolerance(const dump *d, const recomputed *rec)
{
    const lstm_tensor_view *v = rec->views;
    const int n = rec->nviews;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(d->index, "tolerance"), *entry;
    int rc = 0, checked = 0;
    cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(d->index, "files")) {
        if (rc || strcmp(role_of(entry), "runner"))
            continue;
        const lstm_tensor_view *ref = find_view(v, n, tensor_of(entry));
        const double *moved[GATE_MOVED_DRAWS];
        for (int k = 0; k < rec->draws; k++)
            moved[k] = find_view(rec->moved_views[k], rec->nmoved, tensor_of(entry))->data;
        double *got = ref ? load(d, entry, NPY_F64, ref->count) : NULL, recorded;
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(entry, "tolerance_kind");
        if (!got || !cJSON_IsString(kind) || number_of(entry, "worst_ratio", &recorded))
            rc = FAIL("runner tensor '%s' lacks its file, kind or ratio", tensor_of(entry));
        else if (!(fabs(recorded_ratio(tol, kind->valuestring, ref->data, moved, rec->draws, got, ref->count) -
                        recorded) <=
                   1e-9 * recorded + 1e-300))
            rc = FAIL("runner tensor '%s': the recorded rule does not give the recorded ratio %g", ref->name,
                      recorded);
        free(got);
        checked++;
    }
    return rc ? rc : checked ? 0 : FAIL("no runner tensors in the dump");
}

static int open_dump(dump *d, const char *root, const char *runner)
{
    char path[8192];
    snprintf(d->dir, sizeof d->dir, "%s/%s", root, runner);
    snprintf(path, sizeof path, "%s/index.json", d->dir);
    char *text = read_text(path);
    d->index = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!d->index)
        return FAIL("%s is missing or not JSON", path);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(d->index, "shape");
    double T, B, I, H, L;
    if (number_of(shape, "seqLength", &T) || number_of(shape, "miniBatch", &B) ||
        number_of(shape, "inputSize", &I) || number_of(shape, "hiddenSize", &H) ||
        number_of(shape, "numLayers", &L))
        return FAIL("%s has no complete shape", path);
    d->shape = (lstm_shape){.seq_length = (int)T, .batch = (int)B, .input_size = (int)I,
                            .hidden_size = (int)H, .num_layers = (int)L};
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(d->index, "model");
    const lstm_model *m = cJSON_IsString(model) ? lstm_model_named(model->valuestring) : NULL;
    if (!m)
        return FAIL("%s names no model of this lstmcheck", path);
    d->model = m->id;
    return 0;
}

/* Remove what the dump wrote: the listed files, the index, the folder. */
static void remove_dump(const dump *d)
{
    const cJSON *files = d->index ? cJSON_GetObjectItemCaseSensitive(d->index, "files") : NULL, *entry;
    char path[8192];
    cJSON_ArrayForEach(entry, files) {
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(entry, "file");
        if (cJSON_IsString(file) && snprintf(path, sizeof path, "%s/%s", d->dir, file->valuestring) < (int)sizeof path)
            remove(path);
    }
    snprintf(path, sizeof path, "%s/index.json", d->dir);
    remove(path);
    rmdir(d->dir);
}

/* The reference of the dumped inputs, and, for a model that measures its
 * sensitivity, of them moved as docs/inputs.md says, with the seed's
 * rounding sample (model/reference.h). */
static int recompute(const dump *d, const lstm_problem *p, uint64_t seed, recomputed *rec)
{
    lc_error err;
    const unsigned all = LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS;
    if (lstm_results_alloc(&rec->results, &d->shape, d->model, &err) || lstm_reference_run(p, &rec->results, &err))
        return FAIL("reference: %s", err.msg);
    rec->nviews = lstm_results_views(&rec->results, all, rec->views, MAX_VIEWS);
    double draws = 0;
    if (number_of(cJSON_GetObjectItemCaseSensitive(d->index, "tolerance"), "moved_draws", &draws) ||
        draws != (lstm_model_get(d->model)->moved_reference ? GATE_MOVED_DRAWS : 0))
        return FAIL("index.json's tolerance.moved_draws is not this model's");
    for (int k = 0; k < (int)draws; k++) {
        lstm_problem q;
        if (lstm_problem_copy(&q, p, &err))
            return FAIL("%s", err.msg);
        lstm_inputs_move(&q, lstm_moved_seed(seed, k));
        const int rc = lstm_results_alloc(&rec->moved[k], &d->shape, d->model, &err) ||
                       lstm_reference_run_rounded(&q, lstm_moved_seed(seed, k), &rec->moved[k], &err);
        lstm_problem_free(&q);
        if (rc)
            return FAIL("moved reference %d: %s", k, err.msg);
        rec->draws = k + 1;
        rec->nmoved = lstm_results_views(&rec->moved[k], all, rec->moved_views[k], MAX_VIEWS);
    }
    return 0;
}

/* Gate r with a dump under root, then recompute the case from the dump. */
static int dump_and_recompute(const runner_ops *r, const lstm_shape *s, uint64_t seed, const int *lengths,
                              const char *expected_loss, const char *root)
{
    numerics_context ctx;
    gate_report rep;
    lc_error err;
    if (numerics_context_init(&ctx, s, seed, lengths, &err))
        return FAIL("%s", err.msg);
    gate_run(r, &ctx, root, &rep);
    numerics_context_free(&ctx);
    if (rep.status != LC_OK)
        return FAIL("%s did not pass the gate (status %d: %s)", r->name, rep.status, rep.reason);
    dump d = {.index = NULL};
    lstm_problem p = {0};
    recomputed rec = {.nviews = 0, .nmoved = 0, .draws = 0};
    int rc = open_dump(&d, root, r->name);
    const cJSON *loss = d.index ? cJSON_GetObjectItemCaseSensitive(d.index, "loss") : NULL;
    if (!rc && (!cJSON_IsString(loss) || strcmp(loss->valuestring, expected_loss)))
        rc = FAIL("%s: loss is not \"%s\"", d.dir, expected_loss);
    rc = rc || rebuild_problem(&d, &p);
    rc = rc || recompute(&d, &p, seed, &rec);
    rc = rc || check_reference(&d, &p, &rec, -1);
    for (int k = 0; k < GATE_MOVED_DRAWS; k++) /* a draw the model has not: none in the dump */
        rc = rc || check_reference(&d, &p, &rec, k);
    rc = rc || check_seed(&d, &p) || check_tolerance(&d, &rec);
    lstm_results_free(&rec.results);
    for (int k = 0; k < GATE_MOVED_DRAWS; k++)
        lstm_results_free(&rec.moved[k]);
    lstm_problem_free(&p);
    remove_dump(&d);
    cJSON_Delete(d.index);
    return rc;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char root[4096];
    snprintf(root, sizeof root, "%s/lstmcheck-dump-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root))
        return FAIL("cannot create a temporary folder under %s", tmp && *tmp ? tmp : "/tmp");
    const runner_ops *cpu = registry_find("cpu");
    /* the cpu runner seen as a state-only runner (like jit_simple): no dy */
    runner_ops state_only = *cpu;
    state_only.name = "cpu_state_only";
    state_only.caps |= RUNNER_STATE_ONLY;
    const lstm_shape layered = {.seq_length = 6, .batch = 4, .input_size = 5, .hidden_size = 7, .num_layers = 2};
    const lstm_shape single = {.seq_length = 5, .batch = 3, .input_size = 4, .hidden_size = 6, .num_layers = 1};
    const int lengths[] = {6, 1, 3, 1};
    const lstm_shape deep = {.seq_length = 6, .batch = 4, .input_size = 5, .hidden_size = 7, .num_layers = 3};
    int rc = dump_and_recompute(cpu, &layered, 29, lengths, "sum(y*dy) + sum(hy*dhy) + sum(cy*dcy)", root) ||
             dump_and_recompute(&state_only, &single, 31, NULL, "sum(hy*dhy) + sum(cy*dcy)", root) ||
             dump_and_recompute(registry_find("cpu_dropout"), &deep, 37, lengths,
                                "sum(y*dy) + sum(hy*dhy) + sum(cy*dcy)", root) ||
             dump_and_recompute(registry_find("cpu_layernorm"), &deep, 41, lengths,
                                "sum(y*dy) + sum(hy*dhy) + sum(cy*dcy)", root);
    if (rmdir(root) != 0)
        rc = rc || FAIL("%s is not empty after the test", root);
    if (!rc)
        printf("dump_test: the four dumps (lstm, state-only, dropout with its masks, layernorm with its "
               "LayerNorms' parameters) recompute\n");
    return rc;
}
