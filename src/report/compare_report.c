/* The files of one `baseline compare` (markdown, SVG): written whole, to a
 * temporary name and renamed, or to stdout (see compare_report.h). */
#include "report/compare_report.h"

#include "base/paths.h"

#include "base/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lc_status compare_report_emit(const comparison_result *r, const char *path, compare_report_writer write,
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
        lc_error_set(err, "%s: not written: out of host memory for the report", strcmp(path, "-") ? path : "stdout");
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

lc_status compare_report_write(const comparison_result *r, const char *markdown, const char *plot, lc_error *err)
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
