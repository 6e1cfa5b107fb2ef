/* The GPU runners built when CUDA is enabled: their tables, and the list
 * that registry.c splices into the runner table. The cuBLAS runners are rows
 * of kernels/runner_cublas.cu; the others one file each. Add a name to
 * kernels/runners.cmake too (unit.runner_table_matches_cmake checks). */
#ifndef LSTMCHECK_GPU_RUNNERS_H
#define LSTMCHECK_GPU_RUNNERS_H

#include "../src/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuBLAS + own-kernel runners (kernels/runner_cublas.cu, one row each) */
extern const runner_ops runner_aten_ops;
extern const runner_ops runner_py_ops;
extern const runner_ops runner_jit_ops;
extern const runner_ops runner_jit_premul_ops;
extern const runner_ops runner_jit_premul_bias_ops;
extern const runner_ops runner_jit_simple_ops;
extern const runner_ops runner_jit_multilayer_ops;
extern const runner_ops runner_jit_wgrad_all_ops;
#define LSTMCHECK_GPU_RUNNERS_CUBLAS \
    &runner_aten_ops, &runner_py_ops, &runner_jit_ops, &runner_jit_premul_ops, \
    &runner_jit_premul_bias_ops, &runner_jit_simple_ops, &runner_jit_multilayer_ops, \
    &runner_jit_wgrad_all_ops,

/* cuDNN and variable-length runners (kernels/runner_<name>.cu) */
extern const runner_ops runner_cudnn_ops;
extern const runner_ops runner_cudnn_tf32_ops;
extern const runner_ops runner_cudnn_persist_ops;
extern const runner_ops runner_vl_cudnn_ops;
extern const runner_ops runner_vl_jit_ops;
#define LSTMCHECK_GPU_RUNNERS_CUDNN &runner_cudnn_ops, &runner_cudnn_tf32_ops, &runner_cudnn_persist_ops, &runner_vl_cudnn_ops, &runner_vl_jit_ops,

#ifdef __cplusplus
}
#endif

#define LSTMCHECK_GPU_RUNNER_LIST LSTMCHECK_GPU_RUNNERS_CUBLAS LSTMCHECK_GPU_RUNNERS_CUDNN

#endif
