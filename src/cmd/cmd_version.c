/* lstmcheck --version: what this program is and what it computes and times
 * with, for a bug report or a result's provenance. The same facts as every
 * result's context (perf/context.h). */
#include "cmd/commands.h"
#include "cmd/session.h"
#include "perf/context.h"
#include "report/context_report.h"

#include <stdio.h>

lc_status cmd_version(void)
{
    run_context c;
    run_context_collect(&c, session_built_from(), NULL);
    report_version(stdout, &c);
    return LC_OK;
}
