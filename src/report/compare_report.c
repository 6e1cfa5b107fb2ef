/* The results of one `baseline compare`, kept for reports (see
 * compare_report.h). */
#include "report/compare_report.h"

#include "base/paths.h"

#include "base/files.h"
#include "report/profiling.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void compare_report_init(compare_report *r, const char *machine, const char *baseline, int comparisons)
{
    memset(r, 0, sizeof *r);
    snprintf(r->machine, sizeof r->machine, "%s", machine ? machine : "");
    snprintf(r->baseline, sizeof r->baseline, "%s", baseline ? baseline : "");
    r->comparisons = comparisons;
}

void compare_report_free(compare_report *r)
{
    free(r->rows);
    free(r->skips);
    memset(r, 0, sizeof *r);
}

/* An array of n elements (rows, skips) with room for one more; NULL when
 * out of memory (the array is kept), which marks the report incomplete. */
static void *grow(compare_report *r, void *array, int n, size_t size)
{
    void *grown = realloc(array, (size_t)(n + 1) * size);
    r->incomplete |= !grown;
    return grown;
}

void compare_report_add(compare_report *r, const char *runner, const char *shape, const perf_comparison *c,
                        const ab_outcome *ab, const char *against)
{
    compare_row *rows = grow(r, r->rows, r->nrows, sizeof *rows);
    if (!rows)
        return;
    r->rows = rows;
    compare_row *row = &rows[r->nrows++];
    memset(row, 0, sizeof *row);
    snprintf(row->runner, sizeof row->runner, "%s", runner);
    snprintf(row->shape, sizeof row->shape, "%s", shape);
    snprintf(row->against, sizeof row->against, "%s", ab && against ? against : "");
    row->cmp = *c;
    row->noise_fwd = ab ? ab->process_noise_fwd : c->on_fwd.noise;
    row->noise_bwd = ab ? ab->process_noise_bwd : c->on_bwd.noise;
}

void compare_report_skip(compare_report *r, const char *runner, const char *shape, const char *reason)
{
    compare_skip *skips = grow(r, r->skips, r->nskips, sizeof *skips);
    if (!skips)
        return;
    r->skips = skips;
    compare_skip *s = &skips[r->nskips++];
    snprintf(s->runner, sizeof s->runner, "%s", runner);
    snprintf(s->shape, sizeof s->shape, "%s", shape);
    snprintf(s->reason, sizeof s->reason, "%s", reason);
}

compare_phase compare_row_phase(const compare_row *row, int backward)
{
    const perf_comparison *c = &row->cmp;
    if (backward)
        return (compare_phase){"backward", &c->bwd, &c->base_bwd, &c->cur_bwd, &c->on_bwd, row->noise_bwd};
    return (compare_phase){"forward", &c->fwd, &c->base_fwd, &c->cur_fwd, &c->on_fwd, row->noise_fwd};
}

lc_status compare_report_emit(const compare_report *r, const char *path, compare_report_writer write,
                              lc_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        write(f, r);
        fclose(f);
    }
    lc_status rc = LC_OK;
    if (!f || !text || r->incomplete) {
        lc_error_set(err, "%s: not written: out of host memory for the report", path);
        rc = LC_ERROR;
    } else if (!strcmp(path, "-")) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
            lc_error_set(err, "cannot write the report to stdout");
            rc = LC_ERROR;
        }
    } else if (file_write_atomic(path, text, len, err)) {
        rc = LC_ERROR;
    }
    free(text);
    return rc;
}

lc_status compare_report_write(const compare_report *r, const char *markdown, const char *plot, lc_error *err)
{
    lc_error why = {{0}};
    if (markdown && compare_report_markdown(r, markdown, &why)) {
        lc_error_set(err, "--markdown: %s", why.msg);
        return LC_ERROR;
    }
    if (plot && compare_report_svg(r, plot, &why)) {
        lc_error_set(err, "--plot: %s", why.msg);
        return LC_ERROR;
    }
    return LC_OK;
}
