/* The markdown of `baseline compare --markdown` against the --json of the
 * same run: every result of the JSON has its two rows (forward, backward)
 * in the markdown table with the same verdict and the same numbers, up to
 * the markdown's rounding, and the table has no other rows; the context
 * section holds the JSON's context. Nothing
 * compared (no result), or a run that failed, does not pass.
 *   markdown_vs_json JSON MARKDOWN   (exit 0: they agree) */
#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    char buf[4096];
    size_t k;
    while (m && (k = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, k, m);
    fclose(f);
    if (m)
        fclose(m);
    return text;
}

/* The numbers of one markdown row, as written. */
typedef struct md_row {
    double old_ms, new_ms, change, ci_low, ci_high, min_effect;
    char verdict[32];
} md_row;

/* The table row of (runner, shape, phase), parsed; 0 when found. */
static int find_row(const char *md, const char *runner, const char *shape, const char *phase, md_row *r)
{
    char head[256];
    snprintf(head, sizeof head, "| `%s` | %s", runner, shape);
    for (const char *at = md; (at = strstr(at, head)); at++) {
        if (at[strlen(head)] != ' ') /* another shape that starts alike */
            continue;
        const char *cell = strstr(at, " | ") + 3; /* the shape cell, then the phase */
        cell = strstr(cell, " | ") + 3;
        if (strncmp(cell, phase, strlen(phase)) || strncmp(cell + strlen(phase), " |", 2))
            continue;
        char verdict[64];
        const int got = sscanf(cell + strlen(phase), " | %lf | %lf | %lf%% [%lf%%, %lf%%] | %63s | %*f%% | %lf%% |",
                               &r->old_ms, &r->new_ms, &r->change, &r->ci_low, &r->ci_high, verdict,
                               &r->min_effect);
        if (got != 7)
            return 1;
        const char *v = verdict + strspn(verdict, "*");
        snprintf(r->verdict, sizeof r->verdict, "%.*s", (int)strcspn(v, "*"), v);
        return 0;
    }
    return 1;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* a (rounded as the markdown writes it) agrees with b within tol */
static int agree(const char *what, double md, double json, double tol)
{
    if (fabs(md - json) <= tol)
        return 1;
    fprintf(stderr, "FAIL: %s: markdown %.10g, json %.10g (allowed difference %.3g)\n", what, md, json, tol);
    return 0;
}

static int check_phase(const char *md, const char *runner, const char *shape, const char *phase,
                       const cJSON *j)
{
    md_row r;
    if (find_row(md, runner, shape, phase, &r)) {
        fprintf(stderr, "FAIL: no readable markdown row for %s %s %s\n", runner, shape, phase);
        return 0;
    }
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(j, "verdict");
    int ok = cJSON_IsString(verdict) && !strcmp(verdict->valuestring, r.verdict);
    if (!ok)
        fprintf(stderr, "FAIL: %s %s %s: verdict %s in markdown, %s in json\n", runner, shape, phase, r.verdict,
                cJSON_IsString(verdict) ? verdict->valuestring : "(none)");
    /* %.4g: half a unit of the 4th digit; %.1f%%: half of 0.1% */
    const double old_ms = num(j, "baseline_median_ms"), new_ms = num(j, "current_median_ms");
    ok &= agree("old ms", r.old_ms, old_ms, 5e-4 * fabs(old_ms));
    ok &= agree("new ms", r.new_ms, new_ms, 5e-4 * fabs(new_ms));
    ok &= agree("change", r.change / 100, num(j, "change"), 5e-4 + 1e-9);
    ok &= agree("interval low", r.ci_low / 100, num(j, "ci_low"), 5e-4 + 1e-9);
    ok &= agree("interval high", r.ci_high / 100, num(j, "ci_high"), 5e-4 + 1e-9);
    ok &= agree("min effect", r.min_effect / 100, num(j, "min_effect"), 5e-4 + 1e-9);
    return ok;
}

/* The markdown's context section with its backslash escapes taken out
 * (markdown.c escapes punctuation: "sm\\_90"), or NULL when it has none. */
static char *context_section(const char *md)
{
    const char *from = strstr(md, "<details><summary>Context"), *to = from ? strstr(from, "</details>") : NULL;
    char *plain = to ? malloc((size_t)(to - from) + 1) : NULL;
    size_t n = 0;
    for (const char *at = from; plain && at < to; at++)
        if (!(at[0] == '\\' && at + 1 < to && strchr("\\|`*_[]#!", at[1])))
            plain[n++] = *at;
    if (plain)
        plain[n] = '\0';
    return plain;
}

/* The JSON's context is the markdown's: every text field and every
 * machine key has its row (a text with '<', '>' or '&' is not checked: the
 * markdown writes entities). */
static int check_context(const char *md, const cJSON *doc)
{
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(doc, "context"), *v;
    char *section = context_section(md);
    int ok = section && cJSON_IsObject(ctx), texts = 0;
    cJSON_ArrayForEach(v, ctx) {
        if (!ok || !cJSON_IsString(v) || strpbrk(v->valuestring, "<>&"))
            continue;
        char cell[1100];
        snprintf(cell, sizeof cell, " | %s |", v->valuestring);
        texts++;
        if (!strstr(section, cell)) {
            fprintf(stderr, "FAIL: the context's %s '%s' is not in the markdown\n", v->string, v->valuestring);
            ok = 0;
        }
    }
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(ctx, "machines")) {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(v, "key");
        if (ok && (!cJSON_IsString(key) || !strstr(section, key->valuestring))) {
            fprintf(stderr, "FAIL: the %s machine's key is not in the markdown\n", v->string);
            ok = 0;
        }
    }
    if (ok && texts < 8) {
        fprintf(stderr, "FAIL: only %d of the context's texts compared\n", texts);
        ok = 0;
    }
    if (!section || !cJSON_IsObject(ctx))
        fprintf(stderr, "FAIL: no context in the %s\n", section ? "JSON" : "markdown");
    free(section);
    return ok;
}

/* Table rows: lines that start with "| `". */
static int count_rows(const char *md)
{
    int n = 0;
    for (const char *at = md; (at = strstr(at, "\n| `")); at++)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: markdown_vs_json JSON MARKDOWN\n");
        return 2;
    }
    char *json_text = slurp(argv[1]), *md = slurp(argv[2]);
    cJSON *doc = json_text ? cJSON_Parse(json_text) : NULL;
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (!md || !cJSON_IsArray(results)) {
        fprintf(stderr, "FAIL: cannot read %s as compare JSON or %s\n", argv[1], argv[2]);
        return 1;
    }
    int ok = 1, n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, results) {
        const char *runner = cJSON_GetObjectItemCaseSensitive(r, "runner")->valuestring;
        const char *shape = cJSON_GetObjectItemCaseSensitive(r, "shape")->valuestring;
        ok &= check_phase(md, runner, shape, "forward", cJSON_GetObjectItemCaseSensitive(r, "forward"));
        ok &= check_phase(md, runner, shape, "backward", cJSON_GetObjectItemCaseSensitive(r, "backward"));
        n++;
    }
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(doc, "failed");
    if (!cJSON_IsArray(failed) || cJSON_GetArraySize(failed) != 0) {
        fprintf(stderr, "FAIL: the run failed (a WRONG runner or an error): %s\n", argv[1]);
        ok = 0;
    }
    if (n == 0) { /* agreeing on nothing proves nothing */
        fprintf(stderr, "FAIL: no result in %s: nothing was compared\n", argv[1]);
        ok = 0;
    }
    if (count_rows(md) != 2 * n) {
        fprintf(stderr, "FAIL: %d table rows for %d results\n", count_rows(md), n);
        ok = 0;
    }
    ok &= check_context(md, doc);
    if (ok)
        printf("PASS: %d results, %d markdown rows and the context agree with the JSON\n", n, 2 * n);
    cJSON_Delete(doc);
    free(json_text);
    free(md);
    return ok ? 0 : 1;
}
