/* lstmcheck baseline: placeholder until the perf layer lands. */
#include "commands.h"

#include <stdio.h>

int cmd_baseline(const cli_options *o)
{
    (void)o;
    fprintf(stderr, "lstmcheck: baseline is not built yet\n");
    return EXIT_USAGE;
}
