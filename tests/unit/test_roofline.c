/* The roofline: the GEMM FLOPs an LSTM does, the machine's limit measured
 * on this CPU, and the multiple of it that bench prints. */
#include "unit.h"

#include "base/proc.h"
#include "device/openmp.h"
#include "device/roofline.h"
#include "model/lstm.h"
#include "report/report.h"
#include "runners/runner.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int openblas_get_num_threads(void);
void openblas_set_num_threads(int threads);

/* bench's lines of these limits, for 1 GFLOP forward and 2 backward (malloc'd; NULL without memory) */
static char *limit_lines(const report_limit limits[LC_DEVICE_COUNT])
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    report_limit_lines(f, limits, (const double[2]){1e9, 2e9});
    fclose(f);
    return text;
}

int test_roofline_flops_and_limit(void)
{
    /* per row and layer: 2 * 4H * (I_l + H); the backward twice that */
    double flops[2];
    const lstm_shape one = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1};
    lstm_gemm_flops(&one, NULL, flops);
    CHECK(flops[0] == 100.0 * 64 * 2 * 2048 * 1024 && flops[1] == 2 * flops[0], "default shape: %.17g, %.17g",
          flops[0], flops[1]);
    const lstm_shape three = {.seq_length = 5, .batch = 3, .input_size = 7, .hidden_size = 2, .num_layers = 3};
    lstm_gemm_flops(&three, NULL, flops);
    CHECK(flops[0] == 15.0 * (2 * 8 * 9 + 2 * (2 * 8 * 4)), "three layers: %g", flops[0]);
    const int lengths[3] = {5, 1, 2}; /* rows that run: 8, not 15 */
    lstm_gemm_flops(&three, lengths, flops);
    CHECK(flops[0] == 8.0 * (2 * 8 * 9 + 2 * (2 * 8 * 4)) && flops[1] == 2 * flops[0], "lengths: %g, %g", flops[0],
          flops[1]);

    /* the limit, measured here: a positive rate, reached by one of the GEMMs tried, on OpenBLAS's threads */
    const lstm_shape small = {.seq_length = 10, .batch = 16, .input_size = 64, .hidden_size = 32, .num_layers = 1};
    roofline_limit l;
    lc_error err = {{0}};
    CHECK(roofline_measure(LC_DEVICE_CPU, &small, &l, &err) == LC_OK && l.gflops > 0, "%s", err.msg);
    int shapes[ROOFLINE_MAX_SHAPES][3], found = 0;
    const int n = roofline_shapes(LC_DEVICE_CPU, &small, shapes);
    for (int i = 0; i < n; i++)
        found |= shapes[i][0] == l.m && shapes[i][1] == l.n && shapes[i][2] == l.k;
    CHECK(found && l.threads == openblas_get_num_threads(), "limit from %dx%dx%d on %d threads", l.m, l.n, l.k,
          l.threads);
    CHECK(shapes[l.which][0] == l.m && shapes[l.which][1] == l.n && shapes[l.which][2] == l.k,
          "which %d names another GEMM", l.which);
    CHECK(!strcmp(roofline_shape_name(0), "a square") && !strcmp(roofline_shape_name(3), "the input projection") &&
              !strcmp(roofline_shape_name(6), "the input gradient"), "the GEMMs' names");
    CHECK(n == 7 && shapes[3][0] == 160 && shapes[3][1] == 128 && shapes[3][2] == 64, "the input projection: %dx%dx%d",
          shapes[3][0], shapes[3][1], shapes[3][2]);

    /* a runner taking exactly its FLOPs' time at the limit is 1x; twice that, 2x; GFLOP/s is flops / time */
    const roofline_limit at = {.gflops = 100};
    CHECK_NEAR(roofline_multiple(&at, 1e9, 10.0), 1.0, 1e-12);
    CHECK_NEAR(roofline_multiple(&at, 1e9, 20.0), 2.0, 1e-12);
    CHECK_NEAR(roofline_gflops(1e9, 20.0), 50.0, 1e-12);
    CHECK(roofline_multiple(NULL, 1e9, 10.0) == 0 && roofline_gflops(1e9, 0) == 0, "no limit, no time: 0");

    /* a line per device asked: one measured, one that could not be (it says why) */
    report_limit limits[LC_DEVICE_COUNT] = {[LC_DEVICE_CUDA] = {.asked = 1, .status = LC_UNSUPPORTED,
                                                               .why = "no CUDA device"}};
    limits[LC_DEVICE_CPU] = (report_limit){.asked = 1, .status = LC_OK, .limit = l};
    char *text = limit_lines(limits);
    CHECK(text, "open_memstream");
    const int said = strstr(text, "cuda SGEMM limit: not measured (no CUDA device)") != NULL &&
                     strstr(text, "cpu SGEMM limit: ") == text && strstr(text, "1 GFLOP forward, 2 backward") != NULL;
    CHECK(said, "%s", text);
    free(text);
    return 0;
}

/* The threads of this process, from /proc/self/task; -1 where it cannot be read. */
static int threads_here(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int no_work(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    return 0;
}

/* The CPU's limit is the best of its libraries, each one's best kept, and
 * oneDNN's (OpenMP) is timed elsewhere: no OpenMP thread is left in this
 * process, where it would spin or hang a later child (device/openmp.h). */
int test_roofline_libraries(void)
{
    lc_error err = {{0}};
    const int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(2); /* an OpenMP pool of 2 would add a thread here */
    /* OpenBLAS stops its threads when this process forks (and starts them
     * at its next call): counted after a fork, as the limit's last step is */
    proc_outcome how;
    CHECK(proc_fork(PROC_CHILD_WORK, no_work, NULL, NULL, &how, &err) == 0, "a child: %s", err.msg);
    const int before = threads_here();
    const lstm_shape small = {.seq_length = 10, .batch = 16, .input_size = 64, .hidden_size = 32, .num_layers = 1};
    roofline_limit l;
    const lc_status rc = roofline_measure(LC_DEVICE_CPU, &small, &l, &err);
    const int after = threads_here();
    openblas_set_num_threads(blas_threads);
    CHECK(rc == LC_OK, "%s", err.msg);
    const runner_ops *onednn = registry_find("onednn");
    lstmcheck_error why = {{0}};
    const int want = 1 + (onednn && onednn->available(&why) == 0);
    /* with oneDNN the limit's last step is its child (without, OpenBLAS's threads may still run) */
    CHECK(want == 1 || (before > 0 && after == before && !openmp_threads_started()),
          "threads here: %d before, %d after", before, after);

    CHECK(l.libraries == want && !strcmp(l.tried[0].name, "OpenBLAS") &&
              (want == 1 || !strcmp(l.tried[1].name, "oneDNN")),
          "%d libraries measured, %d expected", l.libraries, want);
    double best = 0;
    for (int i = 0; i < l.libraries; i++) {
        CHECK(l.tried[i].gflops > 0 && !l.tried[i].why[0], "%s: %g GFLOP/s (%s)", l.tried[i].name,
              l.tried[i].gflops, l.tried[i].why);
        if (l.tried[i].gflops > best)
            best = l.tried[i].gflops;
    }
    int named = 0;
    for (int i = 0; i < l.libraries; i++)
        named |= l.tried[i].name == l.library && l.tried[i].gflops == l.gflops;
    CHECK(l.gflops == best && named, "the limit %g (%s) is not the best library's %g", l.gflops,
          l.library ? l.library : "none", best);

    /* bench's line names the library that reached it and the others' best */
    report_limit limits[LC_DEVICE_COUNT] = {[LC_DEVICE_CPU] = {.asked = 1, .status = LC_OK, .limit = l}};
    char *text = limit_lines(limits);
    CHECK(text, "open_memstream");
    char said[64];
    snprintf(said, sizeof said, "GFLOP/s (%s ", l.library);
    const int ok = strstr(text, said) && (want == 1 || strstr(text, "'s best "));
    CHECK(ok, "%s", text);
    free(text);
    return 0;
}
