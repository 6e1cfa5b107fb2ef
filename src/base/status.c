/* Names of the outcomes (see status.h). */
#include "base/status.h"

const char *lc_status_name(lc_status s)
{
    static const char *const names[] = {
#define LC_STATUS(NAME, name, exit_code) [LC_##NAME] = name,
#include "base/status.def"
#undef LC_STATUS
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}
