/* The machine's limit for an LSTM (see roofline.h): OpenBLAS here, cuBLAS
 * in kernels/roofline_cuda.cu. */
#include "device/roofline.h"

#include "device/timer.h"

#include <cblas.h>
#include <stdlib.h>

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

static double sgemm_calls(int m, int n, int k, const float *a, const float *b, float *c, int calls)
{
    const double t0 = wall_seconds();
    for (int i = 0; i < calls; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    return wall_seconds() - t0;
}

/* The sustained rate of one (m x k)(k x n) SGEMM; 0 without memory. */
static double cpu_sgemm_gflops(int m, int n, int k)
{
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b),
          *c = malloc((size_t)m * n * sizeof *c);
    double best = 0;
    if (a && b && c) {
        for (size_t i = 0; i < (size_t)m * k; i++)
            a[i] = (float)(i % 7) * 0.1f;
        for (size_t i = 0; i < (size_t)k * n; i++)
            b[i] = (float)(i % 5) * 0.1f;
        const double once = sgemm_calls(m, n, k, a, b, c, 1);
        const int calls = once >= ROOFLINE_SAMPLE_S ? 1 : (int)(ROOFLINE_SAMPLE_S / (once > 1e-7 ? once : 1e-7)) + 1;
        const double flops = 2.0 * m * (double)n * k;
        best = flops / once;
        for (int r = 0; once < ROOFLINE_ONE_CALL_S && r < ROOFLINE_SAMPLES; r++) {
            const double rate = flops * calls / sgemm_calls(m, n, k, a, b, c, calls);
            if (rate > best)
                best = rate;
        }
    }
    free(a);
    free(b);
    free(c);
    return best / 1e9;
}

lc_status roofline_measure(lc_device device, const lstm_shape *s, roofline_limit *out, lc_error *err)
{
    int shapes[ROOFLINE_MAX_SHAPES][3];
    const int n = roofline_shapes(device, s, shapes);
    *out = (roofline_limit){.threads = device == LC_DEVICE_CPU ? openblas_get_num_threads() : 0};
    for (int i = 0; i < n; i++) {
        double g = 0;
        if (device == LC_DEVICE_CPU) {
            g = cpu_sgemm_gflops(shapes[i][0], shapes[i][1], shapes[i][2]);
        } else {
            const lc_status rc = roofline_cuda_sgemm_gflops(shapes[i][0], shapes[i][1], shapes[i][2], &g, err);
            if (rc)
                return rc;
        }
        if (g > out->gflops)
            *out = (roofline_limit){g, shapes[i][0], shapes[i][1], shapes[i][2], i, out->threads};
    }
    if (out->gflops <= 0) {
        lc_error_set(err, "no SGEMM could be timed (out of host memory?)");
        return LC_ERROR;
    }
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
