/* cublas_math [--reps N] [--seqLength T --miniBatch B --inputSize I --hiddenSize H]:
 * every GEMM shape the cuBLAS runners launch (row-major M x N x K with the
 * runners' transposes, default shape T100 B64 I512 H512) timed with
 * CUBLAS_PEDANTIC_MATH and CUBLAS_DEFAULT_MATH on the same random data,
 * and the largest difference between the two results. The question it
 * answers (issue 11): may the runners drop PEDANTIC (kernels/cuda_context.cu,
 * lc_cublas_math) without losing speed or the gate? Exit 77 without a
 * CUDA device. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "model/inputs.h"
#include "perf/stats.h"

#define SKIP 77

typedef struct gemm_shape {
    const char *what; /* which runner call */
    int m, n, k, trans_a, trans_b;
    float beta;
} gemm_shape;

typedef struct dims {
    int T, B, I, H;
} dims;

/* Row-major C (M x N) = op(A) op(B) + beta C, as kernels/lstm_gpu_common.cu's lc_gemm. */
static int n_shapes(const dims *d, gemm_shape *s)
{
    const int G = 4 * d->H, TB = d->T * d->B;
    const gemm_shape all[] = {
        {"fwd per step: x_t W_ih^T", d->B, G, d->I, 0, 1, 0.0f},
        {"fwd per step: h W_hh^T", d->B, G, d->H, 0, 1, 0.0f},
        {"fwd premul: x W_ih^T, all steps", TB, G, d->I, 0, 1, 0.0f},
        {"bwd per step: dh = dgates W_hh", d->B, d->H, G, 0, 0, 0.0f},
        {"bwd per step: dx_t = dgates W_ih", d->B, d->I, G, 0, 0, 0.0f},
        {"bwd per step: dW_hh += dgates^T h", G, d->H, d->B, 1, 0, 1.0f},
        {"bwd per step: dW_ih += dgates^T x_t", G, d->I, d->B, 1, 0, 1.0f},
        {"bwd all steps: dW_hh += dgates^T h", G, d->H, TB, 1, 0, 1.0f},
        {"bwd all steps: dx = dgates W_ih", TB, d->I, G, 0, 0, 0.0f},
    };
    const int n = (int)(sizeof all / sizeof all[0]);
    memcpy(s, all, sizeof all);
    return n;
}

#define CK(call)                                                                       \
    do {                                                                               \
        cudaError_t ck_ = (call);                                                      \
        if (ck_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorString(ck_));                                          \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)
#define BK(call)                                                                       \
    do {                                                                               \
        cublasStatus_t bk_ = (call);                                                   \
        if (bk_ != CUBLAS_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cublasGetStatusString(bk_));                                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static float *device_random(size_t count, int kind)
{
    float *host = malloc(count * sizeof *host), *dev = NULL;
    if (!host) {
        fprintf(stderr, "cublas_math: out of host memory\n");
        exit(1);
    }
    lc_rng rng;
    lc_rng_init(&rng, 17, kind, -1);
    for (size_t i = 0; i < count; i++)
        host[i] = (float)(2.0 * lc_rng_uniform(&rng) - 1.0);
    CK(cudaMalloc((void **)&dev, count * sizeof *dev));
    CK(cudaMemcpy(dev, host, count * sizeof *dev, cudaMemcpyHostToDevice));
    free(host);
    return dev;
}

/* One call, mapped to column-major as lc_gemm does (operands swapped). */
static void gemm(cublasHandle_t h, const gemm_shape *s, const float *A, const float *B, float *C)
{
    const float one = 1.0f;
    const int lda = s->trans_a ? s->m : s->k, ldb = s->trans_b ? s->k : s->n;
    BK(cublasSgemm(h, s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                   s->n, s->m, s->k, &one, B, ldb, A, lda, &s->beta, C, s->n));
}

/* What every measured call uses: the handle, operands large enough for
 * every shape (random, the same for both modes), the events that time it,
 * and the number of timed calls. */
typedef struct gemm_bench {
    cublasHandle_t h;
    const float *A, *B;
    float *C;
    cudaEvent_t e0, e1;
    int reps;
} gemm_bench;

/* Median microseconds per call over reps calls, each timed by events. */
static double time_us(const gemm_bench *b, const gemm_shape *s)
{
    double *us = malloc((size_t)b->reps * sizeof *us);
    if (!us)
        exit(1);
    for (int i = 0; i < 5; i++)
        gemm(b->h, s, b->A, b->B, b->C); /* warm-up: kernel selection, clocks */
    for (int i = 0; i < b->reps; i++) {
        CK(cudaEventRecord(b->e0, 0));
        gemm(b->h, s, b->A, b->B, b->C);
        CK(cudaEventRecord(b->e1, 0));
        CK(cudaEventSynchronize(b->e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, b->e0, b->e1));
        us[i] = 1000.0 * ms;
    }
    sample_summary sum;
    stats_summarize(us, b->reps, &sum);
    free(us);
    return sum.median;
}

/* Largest |default - pedantic| relative to the largest |pedantic| of one call (beta = 0). */
static double mode_difference(const gemm_bench *b, const gemm_shape *s)
{
    const size_t cn = (size_t)s->m * s->n;
    gemm_shape once = *s;
    once.beta = 0.0f;
    float *r[2];
    for (int m = 0; m < 2; m++) {
        BK(cublasSetMathMode(b->h, m ? CUBLAS_DEFAULT_MATH : CUBLAS_PEDANTIC_MATH));
        gemm(b->h, &once, b->A, b->B, b->C);
        r[m] = malloc(cn * sizeof(float));
        if (!r[m])
            exit(1);
        CK(cudaMemcpy(r[m], b->C, cn * sizeof(float), cudaMemcpyDeviceToHost));
    }
    double diff = 0, scale = 0;
    for (size_t i = 0; i < cn; i++) {
        diff = fmax(diff, fabs((double)r[1][i] - (double)r[0][i]));
        scale = fmax(scale, fabs((double)r[0][i]));
    }
    free(r[0]);
    free(r[1]);
    return scale > 0 ? diff / scale : diff;
}

static int parse(int argc, char **argv, dims *d, int *reps)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int *dst = !strcmp(argv[i], "--reps")         ? reps
                   : !strcmp(argv[i], "--seqLength")  ? &d->T
                   : !strcmp(argv[i], "--miniBatch")  ? &d->B
                   : !strcmp(argv[i], "--inputSize")  ? &d->I
                   : !strcmp(argv[i], "--hiddenSize") ? &d->H
                                                      : NULL;
        char *end;
        long v = dst ? strtol(argv[i + 1], &end, 10) : 0;
        if (!dst || *end || v < 1 || v > 100000) {
            fprintf(stderr, "cublas_math: bad argument %s %s\n", argv[i], argv[i + 1]);
            return 1;
        }
        *dst = (int)v;
    }
    if (argc % 2 == 0) {
        fprintf(stderr, "cublas_math: %s needs a value\n", argv[argc - 1]);
        return 1;
    }
    return 0;
}

/* Elements of the largest operand (A, B or C) of any of the n shapes. */
static size_t largest_operand(const gemm_shape *shapes, int n)
{
    size_t most = 0;
    for (int i = 0; i < n; i++) {
        const size_t sizes[3] = {(size_t)shapes[i].m * shapes[i].k, (size_t)shapes[i].k * shapes[i].n,
                                 (size_t)shapes[i].m * shapes[i].n};
        for (int j = 0; j < 3; j++)
            most = sizes[j] > most ? sizes[j] : most;
    }
    return most;
}

/* One row per shape: both modes timed on the same operands, and how far
 * their results differ. */
static void print_mode_rows(const gemm_bench *b, const gemm_shape *shapes, int n)
{
    for (int i = 0; i < n; i++) {
        const gemm_shape *s = &shapes[i];
        BK(cublasSetMathMode(b->h, CUBLAS_PEDANTIC_MATH));
        const double ped = time_us(b, s);
        BK(cublasSetMathMode(b->h, CUBLAS_DEFAULT_MATH));
        const double def = time_us(b, s);
        const double diff = mode_difference(b, s);
        char shape[48];
        snprintf(shape, sizeof shape, "%dx%dx%d", s->m, s->n, s->k);
        printf("%-40s %16s %10.2f %10.2f %8.3f %10.2e\n", s->what, shape, ped, def, def / ped, diff);
    }
}

int main(int argc, char **argv)
{
    dims d = {100, 64, 512, 512};
    int reps = 200;
    if (parse(argc, argv, &d, &reps))
        return 2;
    lc_error why;
    const device_cuda_state dev = device_cuda_probe(&why);
    if (dev != DEVICE_CUDA_READY) {
        printf("%s: %s\n", dev == DEVICE_CUDA_NONE ? "SKIP" : "ERROR", why.msg);
        return dev == DEVICE_CUDA_NONE ? SKIP : 1;
    }
    gemm_shape shapes[16];
    const int n = n_shapes(&d, shapes);
    const size_t most = largest_operand(shapes, n);
    float *A = device_random(most, INPUT_X), *B = device_random(most, INPUT_W_IH),
          *C = device_random(most, INPUT_DY);
    gemm_bench b = {.A = A, .B = B, .C = C, .reps = reps};
    BK(cublasCreate(&b.h));
    CK(cudaEventCreate(&b.e0));
    CK(cudaEventCreate(&b.e1));
    printf("cuBLAS math modes at T=%d B=%d I=%d H=%d, %d calls each, median us per call\n", d.T,
           d.B, d.I, d.H, reps);
    printf("%-40s %16s %10s %10s %8s %10s\n", "GEMM (row-major M x N x K)", "shape", "pedantic",
           "default", "ratio", "rel diff");
    print_mode_rows(&b, shapes, n);
    cublasDestroy(b.h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return 0;
}
