/* Outcomes as process exit codes: the one place that makes them
 * (the exit column of base/status.def). */
#include "cmd/commands.h"

int lc_exit_code(lc_status s)
{
    static const int codes[] = {
#define LC_STATUS(NAME, name, exit_code) [LC_##NAME] = exit_code,
#include "base/status.def"
#undef LC_STATUS
    };
    return (unsigned)s < sizeof codes / sizeof codes[0] ? codes[s] : 1;
}
