/* The files of one `baseline compare` (markdown, SVG), each where a path
 * is given: written whole by report_emit (markup.h), to a temporary name
 * and renamed, or to stdout (see compare_report.h). */
#include "report/compare_report.h"

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
