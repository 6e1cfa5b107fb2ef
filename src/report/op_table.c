/* The table of operations as text and as CSV (see op_table.h). */
#include "report/op_table.h"
#include "base/text.h"
#include "report/markup.h"

#include <string.h>

/* The name column's width; a longer name is cut at a character's end. */
#define NAME_COLUMN 40

static double share_of(const trace_op_table *t, const trace_op_row *row)
{
    return t->window_ns ? (double)row->total_ns / (double)t->window_ns : 0;
}

static double mean_us(const trace_op_row *row)
{
    return (double)row->total_ns / 1e3 / (double)row->calls;
}

/* The name, printable and cut to the column ("..." where cut). */
static void print_name(FILE *f, const char *name)
{
    char safe[512];
    text_printable(name, safe, sizeof safe);
    if (strlen(safe) > NAME_COLUMN) {
        const size_t keep = text_cut_length(safe, NAME_COLUMN - 3);
        fprintf(f, "%.*s...%*s", (int)keep, safe, (int)(NAME_COLUMN - 3 - keep), "");
    } else {
        fprintf(f, "%-*s", NAME_COLUMN, safe);
    }
}

static void print_one(FILE *f, const prof_op_table *t)
{
    const trace_op_table *ops = &t->ops;
    char who[128];
    text_printable(t->runner, who, sizeof who);
    fprintf(f, "%s (%s): %d timed iterations, %.3f ms\n", who, runner_group_name(t->group), t->iterations,
            (double)ops->window_ns / 1e6);
    if (ops->n == 0) {
        fprintf(f, "  no operations recorded (a runner that marks none of its own, and no GPU activity)\n");
        return;
    }
    fprintf(f, "  %-*s %-6s %9s %12s %12s %8s %5s\n", NAME_COLUMN, "operation", "kind", "calls", "total_ms", "mean_us",
            "share", "lanes");
    const size_t shown = ops->n < OP_TABLE_TEXT_ROWS ? ops->n : OP_TABLE_TEXT_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const trace_op_row *row = &ops->rows[i];
        fputs("  ", f);
        print_name(f, row->name);
        fprintf(f, " %-6s %9llu %12.3f %12.3f %7.1f%% %5u\n", trace_kind_name(row->kind),
                (unsigned long long)row->calls, (double)row->total_ns / 1e6,
                mean_us(row), 100.0 * share_of(ops, row), row->lanes);
    }
    if (ops->n > shown)
        fprintf(f, "  ... %zu more operations (--csv FILE writes every one)\n", ops->n - shown);
    if (ops->main_covered_ns)
        fprintf(f, "  the calling thread's operations cover %.1f%% of the timed wall time\n",
                100.0 * (double)ops->main_covered_ns / (double)ops->window_ns);
}

void op_table_print(FILE *f, const prof_op_report *r)
{
    fprintf(f, "\noperations over each runner's timed iterations, by total time (share: of the timed wall time; "
               "operations on several threads or streams at once add up past 100%%; lanes: threads or streams)\n");
    for (int i = 0; i < r->n; i++)
        print_one(f, &r->tables[i]);
}

/* A CSV field: as it is, or quoted (quotes doubled) where it holds a
 * separator, a quote or a line end. */
static void csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void op_table_csv(FILE *f, const void *report)
{
    const prof_op_report *r = report;
    fputs("runner,group,kind,operation,calls,total_ms,mean_us,share,lanes,window_ms,iterations\r\n", f);
    for (int i = 0; i < r->n; i++) {
        const prof_op_table *t = &r->tables[i];
        for (size_t k = 0; k < t->ops.n; k++) {
            const trace_op_row *row = &t->ops.rows[k];
            csv_field(f, t->runner);
            fprintf(f, ",%s,%s,", runner_group_name(t->group), trace_kind_name(row->kind));
            csv_field(f, row->name);
            fprintf(f, ",%llu,%.6f,%.3f,%.6f,%u,%.6f,%d\r\n", (unsigned long long)row->calls,
                    (double)row->total_ns / 1e6, mean_us(row),
                    share_of(&t->ops, row), row->lanes, (double)t->ops.window_ns / 1e6, t->iterations);
        }
    }
}

lc_status op_table_report(prof_session *p, FILE *f, const char *csv_path, lc_error *err)
{
    prof_op_report r;
    if (prof_op_report_make(p, &r, err))
        return LC_ERROR;
    op_table_print(f, &r);
    fflush(f);
    const lc_status rc = csv_path ? report_emit(csv_path, op_table_csv, &r, 0, err) : LC_OK;
    prof_op_report_free(&r);
    return rc;
}
