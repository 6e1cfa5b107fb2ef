/* lstmcheck profile: placeholder until the profiling layer lands. */
#include "commands.h"

#include <stdio.h>

int cmd_profile(const cli_options *o)
{
    (void)o;
    fprintf(stderr, "lstmcheck: profile is not built yet\n");
    return EXIT_USAGE;
}
