/* Reports of `baseline compare` (src/report/compare_report.h) from fixed
 * results: the markdown's rows to the letter, the SVG's panels, and the
 * refusals. tests/report/ checks a real run against its --json and renders
 * the SVG this test draws (report_writers, LSTMCHECK_REPORT_OUT=DIR). */
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/compare_report.h"
#include "report/markup.h"

#include <cjson/cJSON.h>

static sample_summary box(double median, double spread, int n)
{
    return (sample_summary){.n = n, .median = median, .q1 = median - spread, .q3 = median + spread,
                            .min = median - 3 * spread, .max = median + 4 * spread};
}

static verdict_result verdict(verdict_kind k, double change, double lo, double hi, double delta, const char *why)
{
    verdict_result v = {.kind = k, .change = change, .ci_low = lo, .ci_high = hi, .p = 1e-6, .delta = delta};
    snprintf(v.reason, sizeof v.reason, "%s", why);
    return v;
}

/* Two decided entries: a confirmed SLOWER forward against a baseline
 * entry (with the note saying it stands without an A/B), and an A/B entry with an INCONCLUSIVE forward (a '|' in its
 * reason) and a FASTER backward whose current whisker runs far past the
 * rest; one skip, one WRONG and one ERROR. */
static void fixed_result(comparison_result *r)
{
    comparison_init(r, "cpu_model=<test> & co", "baselines/test.json", 1, 8);
    snprintf(r->current, sizeof r->current, "this build (0123abcd)");
    perf_comparison c = {0};
    c.fwd = verdict(VERDICT_SLOWER, 0.0512, 0.0421, 0.0603, 0.03, "slower by 5.1%, confirmed by an independent round");
    c.bwd = verdict(VERDICT_SAME, 0.004, -0.006, 0.012, 0.03, "within +-3.0%");
    c.base_fwd.median = 12.3456, c.cur_fwd.median = 12.9781, c.base_bwd.median = 20.5, c.cur_bwd.median = 20.6;
    c.on_fwd = (perf_decided_on){box(1.0, 0.01, 75), box(1.0512, 0.01, 60), 0.004};
    c.on_bwd = (perf_decided_on){box(1.7, 0.02, 75), box(1.707, 0.02, 60), 0.005};
    const int i = comparison_add_decided(r, "cpu", "s20-l1-i128-h128-b16", &c, NULL, NULL,
                                         "slower than the baseline entry (fwd +5.1% [+4.2, +6.0] beyond 3.0%), not "
                                         "rechecked A/B: the entry was recorded from uncommitted changes");
    comparison_set_entry(r, i, "96a2cbd8c3b45183d2470c85b6644f46b007badb", "2026-11-25T06:55:16Z");
    perf_comparison a = {0};
    a.fwd = verdict(VERDICT_INCONCLUSIVE, 0.02, -0.01, 0.05, 0.03, "interval straddles | the minimum effect");
    a.bwd = verdict(VERDICT_FASTER, -0.1, -0.12, -0.08, 0.03, "faster by 10.0%: run 'lstmcheck baseline update'");
    a.base_fwd.median = 1.25, a.cur_fwd.median = 1.275, a.base_bwd.median = 2.5, a.cur_bwd.median = 2.25;
    a.on_fwd = (perf_decided_on){box(0.5, 0.01, 8), box(0.51, 0.01, 8), 0};
    a.on_bwd = (perf_decided_on){box(1.0, 0.01, 8), box(0.9, 0.01, 8), 0};
    a.on_bwd.cur.max = 3.0; /* one process 3x slower: cut at the plot's edge */
    ab_outcome ab = {.processes = {6, 6}, .process_noise_fwd = 0.0123, .process_noise_bwd = 0.0045};
    const comparison_against against = {.commit = "0123456789abcdef0123", .why = "as asked (--against HEAD~1)"};
    comparison_add_decided(r, "example:cpu_lstm", "s20-l1-i128-h128-b16", &a, &ab, &against, NULL);
    comparison_add_skipped(r, "ref", "s20-l1-i128-h128-b16", "not in the perf matrix");
    comparison_add_failed(r, "wrongish", "s4-l1-i5-h8-b2", COMPARISON_WRONG,
                          "FAIL wrongish: 1 of 9 tensors out of tolerance", "wrongish is wrong, not slow");
    /* an error's row drops a detail: an error is no verdict on the runner */
    comparison_add_failed(r, "broken", "s4-l1-i5-h8-b2", COMPARISON_ERROR, "its process sent no result",
                          "broken is wrong, not slow");
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, what)); at += strlen(what))
        n++;
    return n;
}

int unit_open_out(unit_out_file *o, const char *name)
{
    snprintf(o->tmp, sizeof o->tmp, "/tmp/lstmcheck-report-XXXXXX");
    o->dir = getenv("LSTMCHECK_REPORT_OUT");
    if (!o->dir)
        o->dir = mkdtemp(o->tmp);
    snprintf(o->path, sizeof o->path, "%s/%s", o->dir ? o->dir : ".", name);
    return o->dir == NULL;
}

void unit_remove_out(const unit_out_file *o)
{
    if (!getenv("LSTMCHECK_REPORT_OUT")) {
        unlink(o->path);
        rmdir(o->dir);
    }
}

int test_report_markdown_rows(void)
{
    comparison_result r;
    fixed_result(&r);
    unit_out_file out;
    CHECK(!unit_open_out(&out, "report_markdown_rows.md"), "a folder for the file");
    lc_error err = {{0}};
    CHECK(compare_report_markdown(&r, out.path, &err) == LC_OK, "%s", err.msg);
    const char *md = read_text(out.path);
    CHECK(md, "the file was written");
    static const char *const rows[] = {
        "| `cpu` | s20-l1-i128-h128-b16 | forward | 12.35 | 12.98 | +5.1% [+4.2%, +6.0%] | **SLOWER** | 0.40% | 3.0% |\n",
        "| `cpu` | s20-l1-i128-h128-b16 | backward | 20.5 | 20.6 | +0.4% [-0.6%, +1.2%] | SAME | 0.50% | 3.0% |\n",
        "| `example:cpu_lstm` | s20-l1-i128-h128-b16 (A/B vs 0123456789ab) | forward | 1.25 | 1.275 | +2.0% "
        "[-1.0%, +5.0%] | INCONCLUSIVE | 1.23% | 3.0% |\n",
        "| `example:cpu_lstm` | s20-l1-i128-h128-b16 (A/B vs 0123456789ab) | backward | 2.5 | 2.25 | -10.0% "
        "[-12.0%, -8.0%] | FASTER | 0.45% | 3.0% |\n",
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK(strstr(md, rows[i]), "row %zu as expected: %s\nin:\n%s", i, rows[i], md);
    CHECK(count(md, "\n| `") == 4, "4 rows, no more:\n%s", md);
    CHECK(strstr(md, "1 slower, 1 faster, 1 same, 1 inconclusive (forward and backward counted apart); "
                     "1 not compared here, 1 with wrong results, 1 failed with an error."), "the counts:\n%s", md);
    CHECK(count(md, "\n- `") == 8, "a reason for each verdict but SAME, the A/B row, the entry's note, the skip, "
          "the wrong and the error:\n%s", md);
    CHECK(strstr(md, "straddles \\| the minimum"), "a '|' in a reason is escaped:\n%s", md);
    comparison_free(&r);
    unit_remove_out(&out);
    return 0;
}

int test_report_writers(void)
{
    comparison_result r;
    fixed_result(&r);
    unit_out_file out;
    CHECK(!unit_open_out(&out, "report_writers.svg"), "a folder for the file");
    lc_error err = {{0}};
    CHECK(compare_report_write(&r, NULL, out.path, &err) == LC_OK, "%s", err.msg);
    const char *svg = read_text(out.path);
    CHECK(svg && !strncmp(svg, "<?xml", 5) && strstr(svg, "</svg>\n"), "an SVG document");
    CHECK(count(svg, ">change</text>") == 4, "one panel per entry and phase");
    CHECK(count(svg, "fill=\"#e6e6e6\"") == 4, "a minimum-effect band in each panel");
    CHECK(strstr(svg, "cpu_model=&lt;test&gt; &amp; co"), "text is escaped");
    CHECK(strstr(svg, "fill=\"#c0392b\">SLOWER +5.1% [+4.2%, +6.0%]"), "the SLOWER caption, in red");
    CHECK(strstr(svg, ">max +200%</text>"), "the whisker cut at the edge says where it ends");
    comparison_free(&r);
    unit_remove_out(&out);
    return 0;
}

int test_report_refusals(void)
{
    lc_error err = {{0}};
    comparison_result r;
    fixed_result(&r);
    r.incomplete = 1; /* as after an allocation failed */
    CHECK(compare_report_markdown(&r, "/tmp/lstmcheck-never-written.md", &err) == LC_ERROR &&
              access("/tmp/lstmcheck-never-written.md", F_OK) != 0, "an incomplete report is not written");
    comparison_free(&r);
    return 0;
}

/* A reason quoting a plugin's words (HTML, markdown, CR, ESC, a C1 CSI,
 * invalid UTF-8) is shown as it reads: no markup, no control character. */
int test_report_markdown_hostile_text(void)
{
    comparison_result r;
    comparison_init(&r, "cpu`<img src=x>`", "/tmp/md`<b>`/x.json", 1, 2);
    comparison_add_skipped(&r, "cpu", "s20-l1-i128-h128-b16",
                        "<img src=x onerror=alert(1)> & **bold** [a](javascript:x) `c` _i_ #h\r\x1b[31m"
                        "\xc2\x9b" "2J \xff\xfe ~~s~~ $x$ @user \xe2\x80\xae" "gnp.exe end");
    unit_out_file out;
    CHECK(!unit_open_out(&out, "report_markdown_hostile_text.md"), "a folder for the file");
    lc_error err = {{0}};
    CHECK(compare_report_markdown(&r, out.path, &err) == LC_OK, "%s", err.msg);
    const char *md = read_text(out.path);
    CHECK(md, "the file was written");
    const char *want = "&lt;img src=x onerror=alert(1)&gt; &amp; \\*\\*bold\\*\\* \\[a\\](javascript:x) \\`c\\` "
                       "\\_i\\_ \\#h\\\\r\\\\x1b\\[31m\\\\u009b2J \\\\xff\\\\xfe \\~\\~s\\~\\~ \\$x\\$ \\@user "
                       "\\u202egnp.exe end\n";
    /* the value holds the reason as one printable line (\r, \x1b written out); markdown escapes the
     * backslashes of that, so a reader sees them as written; strike-through, math and a mention are
     * escaped, a right-to-left override written out */
    CHECK(strstr(md, want), "the reason escaped as\n%s\nin:\n%s", want, md);
    CHECK(strstr(md, "Machine: cpu\\`&lt;img src=x&gt;\\`  \n") && strstr(md, "Against: /tmp/md\\`&lt;b&gt;\\`/x.json  \n"),
          "machine and folder escaped, not quoted:\n%s", md);
    for (const unsigned char *c = (const unsigned char *)md; *c; c++)
        CHECK(*c >= 0x20 || *c == '\n', "a control character 0x%02x at byte %ld", *c, (long)(c - (const unsigned char *)md));
    comparison_free(&r);
    unit_remove_out(&out);
    return 0;
}

/* ---- every printer against the value ---- */

/* What each printer wrote for one result. */
typedef struct printed {
    char *text, *json, *md, *svg;
} printed;

static char *mem_text(void (*print)(FILE *, const comparison_result *), const comparison_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    print(f, r);
    fclose(f);
    return text;
}

static void print_table(FILE *f, const comparison_result *r)
{
    compare_report_begin(f, r);
    for (int i = 0; i < r->nrows; i++)
        compare_report_row(f, r, i, 0);
    compare_report_end(f, r);
}

static void print_json(FILE *f, const comparison_result *r)
{
    compare_report_json(f, r);
}

/* What a file writer (markdown, SVG) writes, read back; NULL when it failed. */
static char *file_text(lc_status (*write)(const comparison_result *, const char *, lc_error *),
                       const comparison_result *r)
{
    lc_error err;
    char path[] = "/tmp/lstmcheck-agree-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    const char *text = write(r, path, &err) == LC_OK ? read_text(path) : NULL;
    char *copy = text ? strdup(text) : NULL;
    unlink(path);
    return copy;
}

static void print_all(const comparison_result *r, printed *p)
{
    p->text = mem_text(print_table, r);
    p->json = mem_text(print_json, r);
    p->md = file_text(compare_report_markdown, r);
    p->svg = file_text(compare_report_svg, r);
}

static void free_printed(printed *p)
{
    free(p->text), free(p->json), free(p->md), free(p->svg);
}

/* The line of text that starts with head, or NULL. */
static const char *line_of(const char *text, const char *head, char *line, size_t n)
{
    for (const char *at = text; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
        if (!strncmp(at, head, strlen(head))) {
            snprintf(line, n, "%.*s", (int)strcspn(at, "\n"), at);
            return line;
        }
    return NULL;
}

static const char *json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The k-th element of list whose runner and shape are row's: 0 when found. */
static const cJSON *json_row(const cJSON *doc, const char *list, const comparison_row *row)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, list))
        if (!strcmp(json_str(e, "runner"), row->runner) && !strcmp(json_str(e, "shape"), row->shape))
            return e;
    return NULL;
}

/* A decided row's note (why an A/B, or why a SLOWER stands without one)
 * in the table, the markdown (as its escaping writes it) and the JSON; none
 * in the JSON where the row has none. 0 when they agree. */
static int note_disagrees(const printed *p, const cJSON *j, const comparison_row *row, char *why, size_t n)
{
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(j, "note");
    if (!row->note[0])
        return note ? snprintf(why, n, "json: a note where %s has none", row->runner), 1 : 0;
    char line[COMPARISON_NOTE_MAX + 128], *md = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&md, &len);
    if (!f)
        return snprintf(why, n, "out of memory"), 1;
    markup_md_text(f, row->note);
    fclose(f);
    snprintf(line, sizeof line, "note: %s: %s\n", row->runner, row->note);
    const int bad = !strstr(p->text, line) || !strstr(p->md, md) || !cJSON_IsString(note) ||
                    strcmp(note->valuestring, row->note);
    free(md);
    return bad ? snprintf(why, n, "table, markdown or json: %s %s's note is not '%s'", row->runner, row->shape,
                          row->note), 1 : 0;
}

/* One decided row's phase in every printer: its verdict, and in the JSON
 * its numbers bit for bit. why: what disagreed. 0 when they agree. */
static int phase_disagrees(const printed *p, const cJSON *doc, const comparison_row *row, int b, char *why,
                           size_t n)
{
    const comparison_phase ph = comparison_row_phase(row, b);
    const char *verdict = verdict_name(ph.v->kind);
    char head[256], line[4096];
    snprintf(head, sizeof head, "%-16s %-22s %-4s", row->runner, row->shape, b ? "bwd" : "fwd");
    if (!line_of(p->text, head, line, sizeof line) || !strstr(line, verdict))
        return snprintf(why, n, "table: no %s line for %s", verdict, head), 1;
    snprintf(head, sizeof head, "| `%s` | %s", row->runner, row->shape);
    int found = 0;
    for (const char *at = p->md; (at = strstr(at, head)); at++)
        found |= line_of(at, head, line, sizeof line) && strstr(line, ph.name) && strstr(line, verdict);
    if (!found)
        return snprintf(why, n, "markdown: no %s %s row for %s", ph.name, verdict, head), 1;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(json_row(doc, "results", row), ph.name);
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(j, "baseline_median_ms");
    if (strcmp(json_str(j, "verdict"), verdict) || !cJSON_IsNumber(base) || base->valuedouble != ph.base_ms->median)
        return snprintf(why, n, "json: %s %s %s is not %s at %.17g ms", row->runner, row->shape, ph.name, verdict,
                        ph.base_ms->median), 1;
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(json_row(doc, "results", row), "entry");
    if (row->entry_commit[0] != '\0' ? strcmp(json_str(entry, "commit"), row->entry_commit) ||
                                            strcmp(json_str(entry, "date"), row->entry_date) ||
                                            !strstr(p->md, row->entry_commit) || !strstr(p->md, row->entry_date)
                                      : entry != NULL)
        return snprintf(why, n, "json or markdown: %s %s's baseline entry is not '%s' of %s", row->runner,
                        row->shape, row->entry_commit, row->entry_date), 1;
    if (note_disagrees(p, json_row(doc, "results", row), row, why, n))
        return 1;
    char caption[128];
    snprintf(caption, sizeof caption, ">%s %+.1f%%", verdict, 100 * ph.v->change);
    if (!strstr(p->svg, caption))
        return snprintf(why, n, "svg: no caption '%s'", caption), 1;
    return 0;
}

/* A row not decided in every printer: its reason (and a WRONG row's
 * detail), where it belongs. */
static int undecided_disagrees(const printed *p, const cJSON *doc, const comparison_row *row, char *why, size_t n)
{
    static const char *const svg_word[] = {[COMPARISON_SKIPPED] = "NOT COMPARED", [COMPARISON_WRONG] = "WRONG",
                                           [COMPARISON_ERROR] = "ERROR"};
    char head[2048], line[4096];
    if (row->outcome == COMPARISON_SKIPPED)
        snprintf(head, sizeof head, "SKIP %s %s: %s", row->runner, row->shape, row->reason);
    else if (row->outcome == COMPARISON_WRONG)
        snprintf(head, sizeof head, "WRONG %s: %s", row->shape, row->reason);
    else
        snprintf(head, sizeof head, "ERROR %s %s: %s", row->runner, row->shape, row->reason);
    if (!line_of(p->text, head, line, sizeof line))
        return snprintf(why, n, "table: no line '%s'", head), 1;
    snprintf(head, sizeof head, "- `%s` %s: %s", row->runner, row->shape, row->reason);
    if (!strstr(p->md, head))
        return snprintf(why, n, "markdown: no item '%s'", head), 1;
    const cJSON *e = json_row(doc, row->outcome == COMPARISON_SKIPPED ? "skipped" : "failed", row);
    if (!e || strcmp(json_str(e, "reason"), row->reason) || strcmp(json_str(e, "detail"), row->detail))
        return snprintf(why, n, "json: %s %s not listed with its reason and detail", row->runner, row->shape), 1;
    snprintf(head, sizeof head, ">%s %s %s: %s</text>", svg_word[row->outcome], row->runner, row->shape, row->reason);
    if (!strstr(p->svg, head))
        return snprintf(why, n, "svg: no line '%s'", head), 1;
    if (row->detail[0] && !(strstr(p->text, row->detail) && strstr(p->md, row->detail)))
        return snprintf(why, n, "table or markdown: no detail '%s'", row->detail), 1;
    return 0;
}

/* Every printer against the value: each row in each, the same counts.
 * The number of rows compared (none is a failure: why says so), or -1. */
static int printers_agree(const comparison_result *r, const printed *p, char *why, size_t n)
{
    cJSON *doc = cJSON_Parse(p->json ? p->json : "");
    int compared = 0, bad = !doc || !p->text || !p->md || !p->svg;
    if (bad)
        snprintf(why, n, "a printer wrote nothing readable");
    for (int i = 0; !bad && i < r->nrows; i++, compared++) {
        const comparison_row *row = &r->rows[i];
        if (row->outcome == COMPARISON_DECIDED)
            bad = phase_disagrees(p, doc, row, 0, why, n) || phase_disagrees(p, doc, row, 1, why, n);
        else
            bad = undecided_disagrees(p, doc, row, why, n);
    }
    char counts[512];
    compare_report_counts_line(r, counts, sizeof counts);
    comparison_counts c;
    comparison_count(r, &c);
    const cJSON *jc = cJSON_GetObjectItemCaseSensitive(doc, "counts");
    const cJSON *slower = cJSON_GetObjectItemCaseSensitive(jc, "slower");
    const cJSON *same = cJSON_GetObjectItemCaseSensitive(jc, "same");
    if (!bad && (!strstr(p->text, counts) || !strstr(p->md, counts) || !strstr(p->svg, counts)))
        bad = 1, snprintf(why, n, "the counts '%s' are not in the table, the markdown and the plot", counts);
    if (!bad && (!cJSON_IsNumber(slower) || slower->valueint != c.phases[VERDICT_SLOWER] || !cJSON_IsNumber(same) ||
                 same->valueint != c.phases[VERDICT_SAME]))
        bad = 1, snprintf(why, n, "the JSON's counts differ from the value's");
    cJSON_Delete(doc);
    if (!bad && !compared)
        bad = 1, snprintf(why, n, "nothing was compared");
    return bad ? -1 : compared;
}

int test_report_printers_agree(void)
{
    comparison_result r;
    fixed_result(&r);
    printed p;
    print_all(&r, &p);
    char why[512] = "";
    CHECK(printers_agree(&r, &p, why, sizeof why) == r.nrows, "%s", why);
    CHECK(!r.rows[4].detail[0] && !strstr(p.json, "broken is wrong") && !strstr(p.md, "broken is wrong"),
          "an error's row carries no advice for a wrong runner");
    /* the check can fail: a verdict changed in one printer's text, or an empty result */
    char *at = strstr(p.md, "| SAME |");
    CHECK(at, "the markdown's SAME cell");
    memcpy(at, "| SOME |", 8);
    CHECK(printers_agree(&r, &p, why, sizeof why) < 0 && strstr(why, "markdown"), "a changed verdict: %s", why);
    free_printed(&p);
    comparison_free(&r);
    comparison_init(&r, "m", "b.json", 0, 2);
    print_all(&r, &p);
    CHECK(printers_agree(&r, &p, why, sizeof why) < 0 && strstr(why, "nothing was compared"), "empty: %s", why);
    free_printed(&p);
    comparison_free(&r);
    return 0;
}

/* How a comparison ends, row by row: a skip is "not here" (3), a SLOWER or
 * a WRONG row a finding (1), an ERROR row a breakage (4) whatever else. */
int test_comparison_status_ranks(void)
{
    comparison_result r;
    comparison_init(&r, "m", "b.json", 1, 4);
    perf_comparison same = {0};
    same.fwd = verdict(VERDICT_SAME, 0, -0.01, 0.01, 0.03, "within");
    same.bwd = same.fwd;
    comparison_add_decided(&r, "cpu", "s1", &same, NULL, NULL, NULL);
    CHECK(comparison_status(&r) == LC_OK, "one SAME row: %s", lc_status_name(comparison_status(&r)));
    comparison_add_skipped(&r, "ref", "s1", "not in the perf matrix");
    CHECK(comparison_status(&r) == LC_UNSUPPORTED, "a skip: %s", lc_status_name(comparison_status(&r)));
    perf_comparison slower = same;
    slower.bwd = verdict(VERDICT_SLOWER, 0.1, 0.08, 0.12, 0.03, "slower");
    comparison_add_decided(&r, "cpu", "s2", &slower, NULL, NULL, NULL);
    CHECK(comparison_status(&r) == LC_FAILED, "a SLOWER backward: %s", lc_status_name(comparison_status(&r)));
    comparison_add_failed(&r, "w", "s1", COMPARISON_WRONG, "FAIL w", "w is wrong, not slow");
    CHECK(comparison_status(&r) == LC_FAILED, "and a WRONG row: %s", lc_status_name(comparison_status(&r)));
    comparison_add_failed(&r, "b", "s1", COMPARISON_ERROR, "its process sent no result", NULL);
    CHECK(comparison_status(&r) == LC_ERROR && lc_status_exit_code(comparison_status(&r)) == 4,
          "and an ERROR row: %s", lc_status_name(comparison_status(&r)));
    comparison_free(&r);
    comparison_init(&r, "m", "b.json", 1, 4);
    comparison_add_failed(&r, "w", "s1", COMPARISON_WRONG, "FAIL w", "w is wrong, not slow");
    CHECK(lc_status_exit_code(comparison_status(&r)) == 1, "a WRONG row alone: exit %d",
          lc_status_exit_code(comparison_status(&r)));
    comparison_free(&r);
    return 0;
}

/* What a comparison with this machine's entry leads to: a SLOWER or a
 * drift-blocked verdict is made again A/B against the entry's commit where
 * that commit can be rebuilt and the runner is built in; a SLOWER that
 * cannot be says why it stands; SAME, FASTER and a plain INCONCLUSIVE stand
 * silently. */
int test_comparison_recheck(void)
{
    baseline_entry e = {.reproducible = 1};
    snprintf(e.git_commit, sizeof e.git_commit, "96a2cbd8c3b45183d2470c85b6644f46b007badb");
    perf_comparison c = {0};
    c.fwd = verdict(VERDICT_SLOWER, 0.038, 0.033, 0.043, 0.033, "slower by 3.8%");
    c.bwd = verdict(VERDICT_SAME, -0.006, -0.015, 0.006, 0.031, "within");
    char note[COMPARISON_NOTE_MAX];
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_AB_FOR_SLOWER &&
              strstr(note, "96a2cbd8c3b4") && strstr(note, "fwd +3.8% [+3.3, +4.3] beyond 3.3%") &&
              !strstr(note, "bwd"), "a SLOWER is rechecked A/B, the note naming the commit and the slower phase: %s",
          note);
    CHECK(comparison_recheck_entry(&e, &c, 1, note, sizeof note) == COMPARISON_ENTRY_STANDS &&
              strstr(note, "not rechecked A/B: a plugin's runner"), "a plugin's SLOWER stands, saying why: %s", note);
    comparison_recheck_unmade(&e, &c, "unknown revision", note, sizeof note);
    CHECK(strstr(note, "96a2cbd8c3b4") && strstr(note, "fwd +3.8%") && strstr(note, "which stands") &&
              strstr(note, "(unknown revision)"), "an A/B not made: the SLOWER stands, its size and why: %s", note);
    snprintf(e.git_commit, sizeof e.git_commit, "96a2cbd-dirty");
    e.reproducible = 0;
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_ENTRY_STANDS &&
              strstr(note, "uncommitted changes"), "an entry of a dirty tree: its SLOWER stands, saying why: %s",
          note);
    snprintf(e.git_commit, sizeof e.git_commit, "main"); /* the reader marks it not reproducible */
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_ENTRY_STANDS &&
              strstr(note, "git_commit 'main' is no commit id"), "a commit that is no id: %s", note);
    snprintf(e.git_commit, sizeof e.git_commit, "96a2cbd8c3b45183d2470c85b6644f46b007badb");
    e.reproducible = 1;
    c.fwd = verdict(VERDICT_FASTER, -0.1, -0.12, -0.08, 0.03, "faster");
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_ENTRY_STANDS && !note[0],
          "FASTER stands, no note: %s", note);
    c.fwd = verdict(VERDICT_INCONCLUSIVE, 0.01, -0.05, 0.07, 0.03, "straddles");
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_ENTRY_STANDS && !note[0],
          "INCONCLUSIVE without drift stands: %s", note);
    c.fwd.control_drift = -0.375;
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_AB_FOR_DRIFT &&
              strstr(note, "-38%") && strstr(note, "96a2cbd8c3b4"), "drift past the guard: A/B, %s", note);
    e.reproducible = 0;
    CHECK(comparison_recheck_entry(&e, &c, 0, note, sizeof note) == COMPARISON_ENTRY_STANDS &&
              strstr(note, "-38%") && strstr(note, "not compared A/B instead: the entry says it is not reproducible"),
          "drift, but no commit to rebuild: stands (INCONCLUSIVE), saying why: %s", note);
    return 0;
}
