/* ab_noisy_side: a host whose noise a side cannot measure through is the
 * host's state, never an error of the build; a real error of side B still
 * is one. The noise is planted, so the outcome is the same on any host:
 * fault noisy_rounds (src/runners/faults.def) makes one round in five of
 * every measuring process 10x slower, so the rounds' medians spread ~140%,
 * beyond the 100% a baseline file holds (as a host whose load varies made
 * them, issue #19).
 *   ab_noisy_side EXE update  `EXE baseline update` of a noisy process
 *                             exits 3 (not here now), its reason naming the
 *                             noise; before: exit 1, an error
 *   ab_noisy_side EXE ab      an A/B whose side B is noisy is INCONCLUSIVE
 *                             with that reason, and no error (LC_OK);
 *                             before: LC_ERROR ("side B ... exited 1")
 *   ab_noisy_side EXE wrong   side B with wrong numerics (fault gate_order)
 *                             is LC_FAILED (the row is WRONG: exit 1 of
 *                             side B is a finding, 4 its error); before:
 *                             LC_ERROR
 * EXE: the test build of lstmcheck (tests/perf: lstmcheck_faults). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "perf/ab.h"

#define NOISY "LSTMCHECK_TEST_FAULT=noisy_rounds"

/* What each process measures: the cpu runner at the perf set `small`, few
 * samples per round: quick. */
static const char *const measure[] = {"baseline",         "update",           "--device=cpu",
                                      "--rnns=cpu",       "--seq-length=20",  "--num-layers=1",
                                      "--input-size=128", "--hidden-size=128", "--mini-batch=16",
                                      "--seed=17",        "--nloops=20",      NULL};

static int fail(const char *what)
{
    printf("FAIL: %s\n", what);
    return 1;
}

/* The log's line that names the noise, into buf; 0 when there is none. */
static int noise_line(const char *log, char *buf, size_t n)
{
    FILE *f = fopen(log, "r");
    int found = 0;
    while (f && !found && fgets(buf, (int)n, f))
        found = strstr(buf, "run-to-run noise") && strstr(buf, "beyond the 100%");
    if (f)
        fclose(f);
    return found;
}

/* `baseline update` of one noisy process: exit 3, the noise in its reason. */
static int check_update(const char *exe)
{
    char dir[] = "/tmp/lstmcheck-noisy-XXXXXX", log[64], line[1024];
    if (!mkdtemp(dir))
        return fail("mkdtemp");
    snprintf(log, sizeof log, "%s/log", dir);
    char *argv[] = {(char *)exe, "baseline", "update", "--rnns", "cpu", "--shape-set", "small", "--nloops", "20",
                    "--allow-dirty", "--no-progress", "--baseline-dir", dir, NULL};
    proc_io io = {.extra_env = NOISY, .log_path = log};
    lc_error err = {{0}};
    const int status = proc_run(argv, &io, &err);
    const int named = noise_line(log, line, sizeof line);
    if (!named)
        proc_log_last_line(log, line, sizeof line);
    proc_remove_dir(dir);
    printf("update exited %d: %s%s", status, line, named ? "" : "\n");
    if (status != 3)
        return fail("a noise beyond what a baseline holds must exit 3 (not here now), not as an error");
    return named ? 0 : fail("the reason does not name the measured noise");
}

/* An A/B of the test build against itself, side B with env planted. */
static lc_status compare(const char *exe, const char *env, ab_outcome *out, lc_error *err)
{
    const ab_side sides[2] = {{.exe = exe, .allow_dirty = 1}, {.exe = exe, .env = env, .allow_dirty = 1}};
    perf_settings s;
    perf_default_settings(LC_DEVICE_CPU, &s);
    return ab_compare(sides, measure, &s, 4, out, err);
}

static int check_ab_noisy(const char *exe)
{
    ab_outcome out;
    lc_error err = {{0}};
    const lc_status st = compare(exe, NOISY, &out, &err);
    printf("A/B with a noisy side B: %s; %d blocks left out\n", lc_status_name(st), out.blocks_left_out);
    if (st != LC_OK)
        return printf("  %s\n", err.msg), fail("a side the host's noise kept from measuring is no error");
    printf("  fwd %s: %s\n  bwd %s: %s\n", verdict_name(out.cmp.fwd.kind), out.cmp.fwd.reason,
           verdict_name(out.cmp.bwd.kind), out.cmp.bwd.reason);
    if (out.cmp.fwd.kind != VERDICT_INCONCLUSIVE || out.cmp.bwd.kind != VERDICT_INCONCLUSIVE)
        return fail("not INCONCLUSIVE");
    if (!strstr(out.cmp.fwd.reason, "side B (exit 3)") || !strstr(out.cmp.fwd.reason, "run-to-run noise"))
        return fail("the verdict does not carry the side's reason");
    return out.blocks_left_out == 3 ? 0 : fail("expected 3 blocks left out in a row, then a stop");
}

static int check_ab_wrong(const char *exe)
{
    ab_outcome out;
    lc_error err = {{0}};
    const lc_status st = compare(exe, "LSTMCHECK_TEST_FAULT=gate_order", &out, &err);
    printf("A/B with side B wrong: %s: %s\n", lc_status_name(st), err.msg);
    return st == LC_FAILED && strstr(err.msg, "side B") && strstr(err.msg, "WRONG")
               ? 0
               : fail("a wrong side B is a finding (LC_FAILED), not an error");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ab_noisy_side EXE update|ab|wrong\n");
        return 2;
    }
    perf_prepare_device(LC_DEVICE_CPU);
    if (!strcmp(argv[2], "update"))
        return check_update(argv[1]);
    if (!strcmp(argv[2], "ab"))
        return check_ab_noisy(argv[1]);
    if (!strcmp(argv[2], "wrong"))
        return check_ab_wrong(argv[1]);
    fprintf(stderr, "ab_noisy_side: unknown check '%s'\n", argv[2]);
    return 2;
}
