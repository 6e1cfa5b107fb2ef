/* The GPU runners built when CUDA is enabled: their tables, and the list
 * that registry.c splices into the runner table. One file per runner in
 * kernels/; add the name to LSTMCHECK_CUDA_RUNNERS in CMakeLists.txt too. */
#ifndef LSTMCHECK_GPU_RUNNERS_H
#define LSTMCHECK_GPU_RUNNERS_H

#include "../src/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuBLAS + own-kernel runners (kernels/runner_<name>.cu) */
#define LSTMCHECK_GPU_RUNNERS_CUBLAS

/* cuDNN and variable-length runners */
#define LSTMCHECK_GPU_RUNNERS_CUDNN

#ifdef __cplusplus
}
#endif

#define LSTMCHECK_GPU_RUNNER_LIST LSTMCHECK_GPU_RUNNERS_CUBLAS LSTMCHECK_GPU_RUNNERS_CUDNN

#endif
