/* The machine's limit for an LSTM, as bench's roofline columns and
 * tests/perf/cpu_peers give it: the best sustained FP32 GEMM rate this
 * device reaches now with the GEMM libraries lstmcheck has, over square
 * GEMMs and the LSTM's own GEMM shapes: OpenBLAS and oneDNN's dnnl_sgemm
 * (when the onednn runner is built) on a CPU, strict-FP32 cuBLAS on a GPU.
 * Both CPU libraries, since either may fall short of the core: OpenBLAS
 * 0.3.21 runs its Prescott kernels (SSE3) on CPUs it does not know, 4.7x
 * below oneDNN on an AVX-512 Xeon (docs/perf.md). A runner's time over the
 * time its GEMM FLOPs (lstm_gemm_flops) take at that rate is its multiple
 * of the limit: near 1 is as fast as the best BLAS goes; below 1 a runner
 * fuses or blocks better than the BLAS does on these shapes (or uses TF32). */
#ifndef LSTMCHECK_ROOFLINE_H
#define LSTMCHECK_ROOFLINE_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROOFLINE_MAX_LIBRARIES 2

/* One library's best rate over the GEMMs tried, or why it has none. */
typedef struct roofline_library {
    const char *name; /* "OpenBLAS", "oneDNN", "cuBLAS" (static) */
    double gflops;    /* 0: not measured, why says why */
    char why[200];
} roofline_library;

typedef struct roofline_limit {
    double gflops;       /* the best rate seen, GFLOP/s */
    const char *library; /* whose GEMM reached it (static) */
    int m, n, k;         /* the (m x k)(k x n) GEMM that reached it */
    int which;           /* its place among roofline_shapes (roofline_shape_name) */
    int threads;         /* a CPU's OpenBLAS threads (as the runners have; oneDNN's follow); 0 on a GPU */
    int libraries;       /* how many were tried, each one's best (or why none) in tried */
    roofline_library tried[ROOFLINE_MAX_LIBRARIES];
} roofline_limit;

/* The GEMM shapes tried on a device for shape s (squares, then the input
 * projection, a recurrent step, a weight gradient and the input gradient),
 * as {m, n, k} into shapes; how many (at most ROOFLINE_MAX_SHAPES). */
#define ROOFLINE_MAX_SHAPES 8
int roofline_shapes(lc_device device, const lstm_shape *s, int shapes[][3]);
/* What the GEMM at place which of roofline_shapes is: "a square", "the
 * input projection", ... */
const char *roofline_shape_name(int which);

/* Measure the limit now: LC_OK when some library was measured (one that
 * could not be says why in tried); LC_ERROR with err when none was (out of
 * memory, a CUDA error); LC_UNSUPPORTED without the device. Each GEMM's
 * rate, on every device and library alike: one call to warm up, then the
 * best of a few samples of as many calls as take about 10 ms; a GEMM that
 * takes longer than 0.25 s in one call is timed by that call. oneDNN runs
 * on OpenMP, whose threads would stay here (spinning under
 * OMP_WAIT_POLICY=ACTIVE, and hanging any child forked later that uses
 * OpenMP: device/openmp.h): its GEMMs are timed in a child process, unless
 * this process has started OpenMP threads through lstmcheck. That child
 * hangs where something else started them here (a plugin's loading code):
 * it has a deadline of its own, 10 s plus 4 times what the libraries
 * before it took, and the limit is then the others'. On a GPU this makes
 * CUDA calls in this process: a process that forks GPU runners afterwards
 * measures it in a child (check/isolate.h). */
lc_status roofline_measure(lc_device device, const lstm_shape *s, roofline_limit *out, lc_error *err);

/* A phase's rate, GFLOP/s, for flops done in ms milliseconds (0 when ms is not positive). */
double roofline_gflops(double flops, double ms);
/* How many times the time flops take at l's rate ms is (0 without a
 * limit: l NULL or its rate not positive). */
double roofline_multiple(const roofline_limit *l, double flops, double ms);

/* A device's half: one (m x k)(k x n) SGEMM's operands made (open), calls
 * of it timed back to back (time: seconds), and freed (close). roofline.c
 * decides how it is sampled; the CUDA half is kernels/roofline_cuda.cu
 * (device_nocuda.c without CUDA: open says LC_UNSUPPORTED). */
lc_status roofline_cuda_gemm_open(int m, int n, int k, void **gemm, lc_error *err);
lc_status roofline_cuda_gemm_time(void *gemm, int calls, double *seconds, lc_error *err);
void roofline_cuda_gemm_close(void *gemm);

#ifdef __cplusplus
}
#endif
#endif
