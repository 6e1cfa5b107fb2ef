/* Names of the outcomes (see status.h). */
#include "base/status.h"

#include "lstmcheck/runner.h"

/* The runner ABI (include/lstmcheck/runner.h) speaks three words of this
 * vocabulary by number: a plugin built against it must mean the same. */
_Static_assert(LSTMCHECK_OK == (int)LC_OK && LSTMCHECK_ERROR == (int)LC_ERROR &&
                   LSTMCHECK_UNSUPPORTED == (int)LC_UNSUPPORTED,
               "the runner ABI's status values must be lc_status values (base/status.def)");

const char *lc_status_name(lc_status s)
{
    static const char *const names[] = {
#define LC_STATUS(NAME, name, exit_code) [LC_##NAME] = name,
#include "base/status.def"
#undef LC_STATUS
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}
