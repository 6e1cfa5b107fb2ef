/* The machine's limit for an LSTM (see roofline.h): OpenBLAS and oneDNN
 * here, cuBLAS in kernels/roofline_cuda.cu. */
#include "device/roofline.h"

#include "base/files.h"
#include "base/proc.h"
#include "device/openmp.h"
#include "device/timer.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef LSTMCHECK_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

int openblas_get_num_threads(void);

/* One sample is as many calls as take this long: one call of a small
 * GEMM is too short to time. */
#define ROOFLINE_SAMPLE_S 0.01
#define ROOFLINE_SAMPLES 5
/* a GEMM slower than this in one call is timed by that call alone: the
 * limit of a huge shape must not cost more than its runners' timing */
#define ROOFLINE_ONE_CALL_S 0.25

/* the LSTM's GEMMs, in roofline_shapes' order after the squares */
#define ROOFLINE_SQUARES 3
static const char *const lstm_gemm_names[] = {"the input projection", "a recurrent step", "a weight gradient",
                                              "the input gradient"};

const char *roofline_shape_name(int which)
{
    if (which >= ROOFLINE_SQUARES && which < ROOFLINE_SQUARES + 4)
        return lstm_gemm_names[which - ROOFLINE_SQUARES];
    return which >= 0 && which < ROOFLINE_SQUARES ? "a square" : "?";
}

int roofline_shapes(lc_device device, const lstm_shape *s, int shapes[][3])
{
    const int TB = s->seq_length * s->batch, H4 = 4 * s->hidden_size, in = s->input_size, hid = s->hidden_size;
    /* a GPU reaches its rate on larger squares than a core does */
    const int square = device == LC_DEVICE_CUDA ? 1024 : 256;
    int n = 0;
    for (int side = square; n < ROOFLINE_SQUARES; side *= 2, n++)
        shapes[n][0] = shapes[n][1] = shapes[n][2] = side;
    const int lstm[][3] = {{TB, H4, in}, {s->batch, H4, hid}, {H4, hid, TB}, {TB, in, H4}};
    for (int i = 0; i < 4; i++, n++)
        for (int j = 0; j < 3; j++)
            shapes[n][j] = lstm[i][j];
    return n;
}

/* ---- the CPU halves: OpenBLAS, and oneDNN's dnnl_sgemm ---- */

typedef struct cpu_gemm {
    int m, n, k;
    float *a, *b, *c;
} cpu_gemm;

static void cpu_gemm_close(void *gemm)
{
    cpu_gemm *g = gemm;
    if (!g)
        return;
    free(g->a);
    free(g->b);
    free(g->c);
    free(g);
}

static lc_status cpu_gemm_open(int m, int n, int k, void **gemm, lc_error *err)
{
    cpu_gemm *g = calloc(1, sizeof *g);
    if (g) {
        *g = (cpu_gemm){.m = m, .n = n, .k = k, .a = malloc((size_t)m * k * sizeof(float)),
                        .b = malloc((size_t)k * n * sizeof(float)), .c = malloc((size_t)m * n * sizeof(float))};
    }
    if (!g || !g->a || !g->b || !g->c) {
        cpu_gemm_close(g);
        lc_error_set(err, "out of host memory for a %dx%dx%d SGEMM", m, n, k);
        return LC_ERROR;
    }
    for (size_t i = 0; i < (size_t)m * k; i++)
        g->a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < (size_t)k * n; i++)
        g->b[i] = (float)(i % 5) * 0.1f;
    *gemm = g;
    return LC_OK;
}

static lc_status openblas_gemm_time(void *gemm, int calls, double *seconds, lc_error *err)
{
    (void)err;
    const cpu_gemm *g = gemm;
    const double t0 = wall_seconds();
    for (int i = 0; i < calls; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f,
                    g->c, g->n);
    *seconds = wall_seconds() - t0;
    return LC_OK;
}

#ifdef LSTMCHECK_WITH_ONEDNN
static lc_status onednn_gemm_time(void *gemm, int calls, double *seconds, lc_error *err)
{
    const cpu_gemm *g = gemm;
    openmp_match_blas_threads();
    const double t0 = wall_seconds();
    for (int i = 0; i < calls; i++) {
        const dnnl_status_t st = dnnl_sgemm('N', 'N', g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c,
                                            g->n);
        if (st != dnnl_success) {
            lc_error_set(err, "oneDNN's dnnl_sgemm %dx%dx%d: status %d", g->m, g->n, g->k, (int)st);
            return LC_ERROR;
        }
    }
    *seconds = wall_seconds() - t0;
    return LC_OK;
}
#endif

/* ---- the sampling, one for every device and library ---- */

typedef struct gemm_half {
    const char *library;
    int openmp; /* runs on OpenMP's threads: timed in a child (roofline.h) */
    lc_status (*open)(int m, int n, int k, void **gemm, lc_error *err);
    lc_status (*time)(void *gemm, int calls, double *seconds, lc_error *err);
    void (*close)(void *gemm);
} gemm_half;

static const gemm_half openblas_half = {"OpenBLAS", 0, cpu_gemm_open, openblas_gemm_time, cpu_gemm_close};
#ifdef LSTMCHECK_WITH_ONEDNN
static const gemm_half onednn_half = {"oneDNN", 1, cpu_gemm_open, onednn_gemm_time, cpu_gemm_close};
#define ONEDNN_HALF &onednn_half,
#else
#define ONEDNN_HALF
#endif
static const gemm_half cublas_half = {"cuBLAS", 0, roofline_cuda_gemm_open, roofline_cuda_gemm_time,
                                      roofline_cuda_gemm_close};

/* each device's libraries, NULL-terminated */
static const gemm_half *const halves[LC_DEVICE_COUNT][ROOFLINE_MAX_LIBRARIES + 1] = {
    [LC_DEVICE_CPU] = {&openblas_half, ONEDNN_HALF NULL},
    [LC_DEVICE_CUDA] = {&cublas_half, NULL},
};

/* The sustained rate of one (m x k)(k x n) SGEMM, GFLOP/s: one call to warm
 * up, one to size a sample, then the best of the samples. */
static lc_status gemm_rate(const gemm_half *h, int m, int n, int k, double *gflops, lc_error *err)
{
    void *gemm = NULL;
    lc_status rc = h->open(m, n, k, &gemm, err);
    double once = 0, t = 0;
    if (!rc && !(rc = h->time(gemm, 1, &once, err)))
        rc = h->time(gemm, 1, &once, err);
    const double flops = 2.0 * m * (double)n * k;
    const int calls = once >= ROOFLINE_SAMPLE_S ? 1 : (int)(ROOFLINE_SAMPLE_S / (once > 1e-7 ? once : 1e-7)) + 1;
    double best = rc || once <= 0 ? 0 : flops / once;
    for (int r = 0; !rc && once < ROOFLINE_ONE_CALL_S && r < ROOFLINE_SAMPLES; r++)
        if (!(rc = h->time(gemm, calls, &t, err)) && t > 0 && flops * calls / t > best)
            best = flops * calls / t;
    if (gemm)
        h->close(gemm);
    *gflops = best / 1e9;
    return rc;
}

/* One library's best over the shapes, into best (its library named). */
typedef struct library_job {
    const gemm_half *h;
    int n;
    const int (*shapes)[3];
    roofline_limit best;
    lc_status rc;
    lc_error err;
} library_job;

static void library_best(library_job *j)
{
    j->best = (roofline_limit){.library = j->h->library};
    j->rc = LC_OK;
    for (int i = 0; i < j->n && !j->rc; i++) {
        double g = 0;
        const int *s = j->shapes[i];
        j->rc = gemm_rate(j->h, s[0], s[1], s[2], &g, &j->err);
        if (!j->rc && g > j->best.gflops)
            j->best = (roofline_limit){
                .gflops = g, .library = j->h->library, .m = s[0], .n = s[1], .k = s[2], .which = i};
    }
}

static int library_child(void *arg, int fd)
{
    library_job *j = arg;
    char phase[PROC_PHASE_MAX];
    snprintf(phase, sizeof phase, "%s's SGEMM", j->h->library);
    proc_foreign_begin(phase); /* the deadline's phase */
    library_best(j);
    proc_foreign_end();
    return fd_write_all(fd, j, sizeof *j);
}

static int library_parent(void *arg, int fd, lc_error *err)
{
    library_job *j = arg, got;
    if (fd_read_all(fd, &got, sizeof got)) {
        lc_error_set(err, "no rate came back");
        return 1;
    }
    j->best = got.best;
    j->rc = got.rc;
    j->err = got.err;
    j->err.msg[sizeof j->err.msg - 1] = '\0';
    return 0;
}

/* library_best, in a child with a deadline (timeout_s) when the library
 * runs on OpenMP and this process has started no OpenMP threads
 * (device/openmp.h); what went wrong into j->err. */
static lc_status library_measure(library_job *j, double timeout_s)
{
    if (!j->h->openmp || openmp_threads_started()) {
        library_best(j);
        return j->rc;
    }
    proc_outcome how;
    lc_error why = {{0}};
    if (proc_fork_within(PROC_CHILD_WORK, library_child, library_parent, j, timeout_s, &how, &why) == 0)
        return j->rc;
    char text[160];
    if (!how.started)
        lc_error_set(&j->err, "%s", why.msg);
    else if (how.exit_status != 0)
        lc_error_set(&j->err, "its measuring process %s", proc_outcome_text(&how, text, sizeof text));
    else
        lc_error_set(&j->err, "its measuring process: %s", why.msg);
    return LC_ERROR;
}

/* A child's deadline: generous against what the libraries before it took
 * on the same GEMMs, bounded where its OpenMP hangs (roofline.h). */
#define ROOFLINE_CHILD_BASE_S 10.0
#define ROOFLINE_CHILD_FACTOR 4.0

lc_status roofline_measure(lc_device device, const lstm_shape *s, roofline_limit *out, lc_error *err)
{
    int shapes[ROOFLINE_MAX_SHAPES][3];
    const int n = roofline_shapes(device, s, shapes);
    *out = (roofline_limit){.threads = device == LC_DEVICE_CPU ? openblas_get_num_threads() : 0};
    roofline_limit best = {0};
    const char *first_why = NULL;
    lc_status first_rc = LC_OK;
    const double t0 = wall_seconds();
    for (int l = 0; halves[device][l]; l++) {
        library_job j = {.h = halves[device][l], .n = n, .shapes = (const int(*)[3])shapes};
        const double deadline = ceil(ROOFLINE_CHILD_BASE_S + ROOFLINE_CHILD_FACTOR * (wall_seconds() - t0));
        roofline_library *tried = &out->tried[out->libraries++];
        *tried = (roofline_library){.name = j.h->library};
        const lc_status rc = library_measure(&j, deadline);
        if (rc != LC_OK) {
            snprintf(tried->why, sizeof tried->why, "%s", j.err.msg[0] ? j.err.msg : "unknown why");
            if (!first_why) {
                first_why = tried->why;
                first_rc = rc;
            }
            continue;
        }
        tried->gflops = j.best.gflops;
        if (j.best.gflops > best.gflops)
            best = j.best;
    }
    if (best.gflops <= 0) {
        lc_error_set(err, "%s", first_why ? first_why : "no SGEMM could be timed");
        return first_why ? first_rc : LC_ERROR;
    }
    out->gflops = best.gflops;
    out->library = best.library;
    out->m = best.m;
    out->n = best.n;
    out->k = best.k;
    out->which = best.which;
    return LC_OK;
}

double roofline_gflops(double flops, double ms)
{
    return ms > 0 ? flops / (ms * 1e6) : 0;
}

double roofline_multiple(const roofline_limit *l, double flops, double ms)
{
    return l && l->gflops > 0 && flops > 0 ? ms / (flops / (l->gflops * 1e9) * 1e3) : 0;
}
