/* Names, exit codes and ranks of the outcomes (see status.h): each read
 * from the one list, base/status.def. */
#include "base/status.h"

#include <stdio.h>

#include "lstmcheck/runner.h"

/* The runner ABI (include/lstmcheck/runner.h) speaks three words of this
 * vocabulary by number: a plugin built against it must mean the same. */
_Static_assert(LSTMCHECK_OK == (int)LC_OK && LSTMCHECK_ERROR == (int)LC_ERROR &&
                   LSTMCHECK_UNSUPPORTED == (int)LC_UNSUPPORTED,
               "the runner ABI's status values must be lc_status values (base/status.def)");

typedef struct status_row {
    const char *name, *meaning;
    int exit_code, rank;
} status_row;

static const status_row rows[] = {
#define LC_STATUS(NAME, name, exit_code, rank, meaning) [LC_##NAME] = {name, meaning, exit_code, rank},
#include "base/status.def"
#undef LC_STATUS
};
#define NROWS (int)(sizeof rows / sizeof rows[0])

/* Out-of-range values (a plugin's stray number) read as an error. */
static const status_row *row(lc_status s)
{
    return (unsigned)s < (unsigned)NROWS ? &rows[s] : &rows[LC_ERROR];
}

const char *lc_status_name(lc_status s)
{
    return (unsigned)s < (unsigned)NROWS ? rows[s].name : "unknown";
}

int lc_status_exit_code(lc_status s)
{
    return row(s)->exit_code;
}

lc_status lc_status_from_exit_code(int code)
{
    for (int i = 0; i < NROWS; i++)
        if (rows[i].exit_code == code)
            return (lc_status)i;
    return LC_ERROR;
}

lc_status lc_status_worse(lc_status a, lc_status b)
{
    return row(b)->rank > row(a)->rank ? b : a;
}

void lc_status_exit_codes_text(char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "Exit codes (when several apply, the first of");
    int listed = 0;
    for (int rank = NROWS; rank > 0; rank--) /* the order of precedence, ok left out */
        for (int i = 0; i < NROWS; i++)
            if (rows[i].rank == rank && rows[i].meaning[0] && k < n)
                k += (size_t)snprintf(buf + k, n - k, "%s %d", listed++ ? "," : "", rows[i].exit_code);
    if (k < n)
        k += (size_t)snprintf(buf + k, n - k, " is the exit code):\n");
    for (int code = 0; code < 256; code++)
        for (int i = 0; i < NROWS; i++)
            if (rows[i].exit_code == code && rows[i].meaning[0] && k < n)
                k += (size_t)snprintf(buf + k, n - k, "  %d  %s\n", code, rows[i].meaning);
}
