/* wrong_not_slow BASELINE_DIR: a perf comparison of a runner whose numerics
 * are broken (a planted fault, test build) must fail as WRONG before any
 * timing, not pass or fail as slow. Exit 0 when it does. */
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "runners/faults.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: wrong_not_slow BASELINE_DIR\n");
        return 2;
    }
    cli_options o;
    cli_defaults(&o);
    o.command = "baseline";
    o.subcommand = "compare";
    o.baseline_dir = argv[1];
    o.device = LC_DEVICE_CPU;
    o.rnns[0] = "cpu";
    o.nrnns = 1;
    o.shape_set = "small";
    lstm_active_fault = FAULT_MISSING_BIAS;
    fflush(stdout);
    lc_status rc = cmd_baseline(&o);
    printf("baseline compare of a cpu runner without b_hh: exit %d (expected %d, numerics failed)\n",
           lc_status_exit_code(rc), lc_status_exit_code(LC_FAILED));
    return rc == LC_FAILED ? 0 : 1;
}
