/* Reports of `baseline compare` (src/report/compare_report.h) from fixed
 * results: the markdown's rows to the letter, the SVG's panels, and the
 * refusals. tests/report/ checks a real run against its --json and renders
 * the SVG this test draws (report_writers, LSTMCHECK_REPORT_OUT=DIR). */
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/compare_report.h"

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

/* Two entries: a confirmed SLOWER forward against a baseline entry, and an
 * A/B entry with an INCONCLUSIVE forward (a '|' in its reason) and a
 * FASTER backward whose current whisker runs far past the rest; one skip. */
static void fixed_report(compare_report *r)
{
    compare_report_init(r, "cpu_model=<test> & co", "baselines/test.json", 8);
    perf_comparison c = {0};
    c.fwd = verdict(VERDICT_SLOWER, 0.0512, 0.0421, 0.0603, 0.03, "slower by 5.1%, confirmed by an independent round");
    c.bwd = verdict(VERDICT_SAME, 0.004, -0.006, 0.012, 0.03, "within +-3.0%");
    c.base_fwd.median = 12.3456, c.cur_fwd.median = 12.9781, c.base_bwd.median = 20.5, c.cur_bwd.median = 20.6;
    c.on_fwd = (perf_decided_on){box(1.0, 0.01, 75), box(1.0512, 0.01, 60), 0.004};
    c.on_bwd = (perf_decided_on){box(1.7, 0.02, 75), box(1.707, 0.02, 60), 0.005};
    compare_report_add(r, "cpu", "s20-l1-i128-h128-b16", &c, NULL, NULL);
    perf_comparison a = {0};
    a.fwd = verdict(VERDICT_INCONCLUSIVE, 0.02, -0.01, 0.05, 0.03, "interval straddles | the minimum effect");
    a.bwd = verdict(VERDICT_FASTER, -0.1, -0.12, -0.08, 0.03, "faster by 10.0%: run 'lstmcheck baseline update'");
    a.base_fwd.median = 1.25, a.cur_fwd.median = 1.275, a.base_bwd.median = 2.5, a.cur_bwd.median = 2.25;
    a.on_fwd = (perf_decided_on){box(0.5, 0.01, 8), box(0.51, 0.01, 8), 0};
    a.on_bwd = (perf_decided_on){box(1.0, 0.01, 8), box(0.9, 0.01, 8), 0};
    a.on_bwd.cur.max = 3.0; /* one process 3x slower: cut at the plot's edge */
    ab_outcome ab = {.process_noise_fwd = 0.0123, .process_noise_bwd = 0.0045};
    compare_report_add(r, "example:cpu_lstm", "s20-l1-i128-h128-b16", &a, &ab, "0123456789abcdef0123");
    compare_report_skip(r, "ref", "s20-l1-i128-h128-b16", "not in the perf matrix");
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

/* Where a test's file goes: into LSTMCHECK_REPORT_OUT (kept), or into a
 * fresh temporary folder (removed by remove_out). 0 on success. */
typedef struct out_file {
    char tmp[64], path[4096];
    const char *dir;
} out_file;

static int open_out(out_file *o, const char *name)
{
    snprintf(o->tmp, sizeof o->tmp, "/tmp/lstmcheck-report-XXXXXX");
    o->dir = getenv("LSTMCHECK_REPORT_OUT");
    if (!o->dir)
        o->dir = mkdtemp(o->tmp);
    snprintf(o->path, sizeof o->path, "%s/%s", o->dir ? o->dir : ".", name);
    return o->dir == NULL;
}

static void remove_out(const out_file *o)
{
    if (!getenv("LSTMCHECK_REPORT_OUT")) {
        unlink(o->path);
        rmdir(o->dir);
    }
}

int test_report_markdown_rows(void)
{
    compare_report r;
    fixed_report(&r);
    out_file out;
    CHECK(!open_out(&out, "report_markdown_rows.md"), "a folder for the file");
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
    CHECK(strstr(md, "1 slower, 1 faster, 1 same, 1 inconclusive; 1 not compared here."), "the counts:\n%s", md);
    CHECK(count(md, "\n- `") == 4, "a reason for each verdict but SAME, and the skip:\n%s", md);
    CHECK(strstr(md, "straddles \\| the minimum"), "a '|' in a reason is escaped:\n%s", md);
    compare_report_free(&r);
    remove_out(&out);
    return 0;
}

int test_report_writers(void)
{
    compare_report r;
    fixed_report(&r);
    out_file out;
    CHECK(!open_out(&out, "report_writers.svg"), "a folder for the file");
    lc_error err = {{0}};
    CHECK(compare_report_write(&r, NULL, out.path, &err) == LC_OK, "%s", err.msg);
    const char *svg = read_text(out.path);
    CHECK(svg && !strncmp(svg, "<?xml", 5) && strstr(svg, "</svg>\n"), "an SVG document");
    CHECK(count(svg, ">change</text>") == 4, "one panel per entry and phase");
    CHECK(count(svg, "fill=\"#e6e6e6\"") == 4, "a minimum-effect band in each panel");
    CHECK(strstr(svg, "cpu_model=&lt;test&gt; &amp; co"), "text is escaped");
    CHECK(strstr(svg, "fill=\"#c0392b\">SLOWER +5.1% [+4.2%, +6.0%]"), "the SLOWER caption, in red");
    CHECK(strstr(svg, ">max +200%</text>"), "the whisker cut at the edge says where it ends");
    compare_report_free(&r);
    remove_out(&out);
    return 0;
}

int test_report_refusals(void)
{
    lc_error err = {{0}};
    compare_report r;
    fixed_report(&r);
    r.incomplete = 1; /* as after an allocation failed */
    CHECK(compare_report_markdown(&r, "/tmp/lstmcheck-never-written.md", &err) == LC_ERROR &&
              access("/tmp/lstmcheck-never-written.md", F_OK) != 0, "an incomplete report is not written");
    compare_report_free(&r);
    return 0;
}

/* A reason quoting a plugin's words (HTML, markdown, CR, ESC, a C1 CSI,
 * invalid UTF-8) is shown as it reads: no markup, no control character. */
int test_report_markdown_hostile_text(void)
{
    compare_report r;
    compare_report_init(&r, "cpu`<img src=x>`", "/tmp/md`<b>`/x.json", 2);
    compare_report_skip(&r, "cpu", "s20-l1-i128-h128-b16",
                        "<img src=x onerror=alert(1)> & **bold** [a](javascript:x) `c` _i_ #h\r\x1b[31m"
                        "\xc2\x9b" "2J \xff\xfe end");
    out_file out;
    CHECK(!open_out(&out, "report_markdown_hostile_text.md"), "a folder for the file");
    lc_error err = {{0}};
    CHECK(compare_report_markdown(&r, out.path, &err) == LC_OK, "%s", err.msg);
    const char *md = read_text(out.path);
    CHECK(md, "the file was written");
    const char *want = "&lt;img src=x onerror=alert(1)&gt; &amp; \\*\\*bold\\*\\* \\[a\\](javascript:x) \\`c\\` "
                       "\\_i\\_ \\#h\\r\\x1b\\[31m\\u009b2J \\xff\\xfe end\n";
    CHECK(strstr(md, want), "the reason escaped as\n%s\nin:\n%s", want, md);
    CHECK(strstr(md, "Machine: cpu\\`&lt;img src=x&gt;\\`  \n") && strstr(md, "Against: /tmp/md\\`&lt;b&gt;\\`/x.json  \n"),
          "machine and folder escaped, not quoted:\n%s", md);
    for (const unsigned char *c = (const unsigned char *)md; *c; c++)
        CHECK(*c >= 0x20 || *c == '\n', "a control character 0x%02x at byte %ld", *c, (long)(c - (const unsigned char *)md));
    compare_report_free(&r);
    remove_out(&out);
    return 0;
}
