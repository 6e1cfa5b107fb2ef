/* A run's context (perf/context.h): every field filled from what this
 * machine and build are, and written by the one JSON printer with every key
 * (report/context_report.h). */
#define _GNU_SOURCE /* strptime, timegm */
#include "unit.h"

#include "device/machine.h"
#include "perf/context.h"
#include "report/context_report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The context's JSON, parsed; NULL when it does not parse. */
static cJSON *context_document(const run_context *c)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    report_context_json(&w, c);
    const char *text = json_text(&w, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    json_free(&w);
    return doc;
}

static double number_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int has_string(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring[0];
}

/* Every text of the list is filled (the CUDA compiler where CUDA is built),
 * the date is now, the commit and the tree are the build's. */
static int check_texts(const run_context *c)
{
#define FILLED(member, size, key, label) \
    CHECK(c->member[0] || (!strcmp(key, "cuda_compiler") && !device_cuda_built()), "%s is empty", key);
    RUN_CONTEXT_TEXTS(FILLED)
#undef FILLED
    struct tm tm = {0};
    CHECK(strptime(c->date, "%Y-%m-%dT%H:%M:%SZ", &tm) && strlen(c->date) == 20, "date '%s'", c->date);
    const double age = difftime(time(NULL), timegm(&tm));
    CHECK(age >= 0 && age < 60, "date '%s' is %.0f s from now", c->date, age);
    CHECK(!strcmp(c->commit, "0123abc") && c->tree == RUN_TREE_DIRTY, "commit '%s', tree %d", c->commit, c->tree);
    CHECK(c->cpus_online >= 1 && c->cpus_allowed >= 1 && c->cpus_allowed <= c->cpus_online &&
              c->openblas_threads >= 1,
          "cpus %d online, %d allowed, OpenBLAS %d", c->cpus_online, c->cpus_allowed, c->openblas_threads);
    return 0;
}

static int check_document(const run_context *c)
{
    cJSON *doc = context_document(c);
    CHECK(doc, "the context's JSON does not parse");
    int bad = 0;
#define KEY(member, size, key, label) bad |= !(has_string(doc, key) || !c->member[0]);
    RUN_CONTEXT_TEXTS(KEY)
#undef KEY
    const cJSON *threads = cJSON_GetObjectItemCaseSensitive(doc, "threads");
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "env");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "machines"), "cpu");
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(env, "OMP_WAIT_POLICY");
    const cJSON *omp = cJSON_GetObjectItemCaseSensitive(env, "OMP_NUM_THREADS");
    machine_key here;
    lc_error err = {{0}};
    const int key_read = machine_key_current(LC_DEVICE_CPU, &here, &err) == 0;
    bad |= !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(doc, "tree_clean")) ||
           number_of(threads, "openblas") != c->openblas_threads || number_of(threads, "cpus_online") < 1 ||
           number_of(threads, "cpus_allowed") < 1 ||
           !cJSON_IsString(policy) || strcmp(policy->valuestring, "PASSIVE") || !cJSON_IsNull(omp) || !key_read ||
           !has_string(cpu, "key") || strcmp(cJSON_GetObjectItemCaseSensitive(cpu, "key")->valuestring, here.slug) ||
           !has_string(cJSON_GetObjectItemCaseSensitive(cpu, "fields"), "blas_core") ||
           cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "machines"), "cuda");
    char *text = cJSON_PrintUnformatted(doc);
    if (bad)
        fprintf(stderr, "the context's JSON lacks a key or a value: %s\n", text ? text : "?");
    free(text);
    cJSON_Delete(doc);
    return bad;
}

/* A value longer than the context holds is cut at a character's end and
 * says so ("..."); one that fits is kept whole. */
static int check_cut_value(void)
{
    char *saved = getenv("CUDA_VISIBLE_DEVICES") ? strdup(getenv("CUDA_VISIBLE_DEVICES")) : NULL;
    char value[3 * RUN_CONTEXT_ENV_MAX + 1] = "";
    for (int i = 0; i < RUN_CONTEXT_ENV_MAX; i++)
        strcat(value, "\xe2\x82\xac"); /* €: a cut at the byte count would split one */
    setenv("CUDA_VISIBLE_DEVICES", value, 1);
    run_context c;
    run_context_collect(&c, "unknown", NULL);
    char got[RUN_CONTEXT_ENV_MAX];
    memcpy(got, c.env[RUN_CONTEXT_ENV_CUDA_VISIBLE_DEVICES], sizeof got);
    const size_t len = strlen(got);
    const int cut_right = len < RUN_CONTEXT_ENV_MAX && len > RUN_CONTEXT_ENV_MAX - 8 && !strcmp(got + len - 3, "...") &&
                          (len - 3) % 3 == 0 && !strncmp(got, value, len - 3);
    setenv("CUDA_VISIBLE_DEVICES", "GPU-0123", 1);
    run_context_collect(&c, "unknown", NULL);
    const int whole = !strcmp(c.env[RUN_CONTEXT_ENV_CUDA_VISIBLE_DEVICES], "GPU-0123");
    if (saved) setenv("CUDA_VISIBLE_DEVICES", saved, 1); else unsetenv("CUDA_VISIBLE_DEVICES");
    free(saved);
    CHECK(cut_right && whole, "a long value is '%.40s...' (%zu bytes), a short one %s", got, len, whole ? "whole" : "cut");
    return 0;
}

int test_run_context_filled(void)
{
    if (check_cut_value())
        return 1;
    char *omp = getenv("OMP_NUM_THREADS") ? strdup(getenv("OMP_NUM_THREADS")) : NULL;
    char *policy = getenv("OMP_WAIT_POLICY") ? strdup(getenv("OMP_WAIT_POLICY")) : NULL;
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1); /* set is recorded as given, unset as null */
    unsetenv("OMP_NUM_THREADS");
    const int asked[LC_DEVICE_COUNT] = {[LC_DEVICE_CPU] = 1};
    run_context c;
    run_context_collect(&c, "0123abc-dirty", asked);
    int rc = check_texts(&c) || check_document(&c);
    CHECK(rc || c.env_set[RUN_CONTEXT_ENV_OMP_WAIT_POLICY], "OMP_WAIT_POLICY not recorded");
    run_context clean, unknown;
    run_context_collect(&clean, "0123abc", NULL);
    run_context_collect(&unknown, "unknown", NULL);
    if (!rc && (clean.tree != RUN_TREE_CLEAN || strcmp(clean.commit, "0123abc") || unknown.tree != RUN_TREE_UNKNOWN ||
                clean.machine[LC_DEVICE_CPU].asked)) {
        fprintf(stderr, "a clean build, or one outside git, or no device asked, is misread\n");
        rc = 1;
    }
    if (policy) setenv("OMP_WAIT_POLICY", policy, 1); else unsetenv("OMP_WAIT_POLICY");
    if (omp) setenv("OMP_NUM_THREADS", omp, 1);
    free(omp);
    free(policy);
    return rc;
}
