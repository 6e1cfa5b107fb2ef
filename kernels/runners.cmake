# Names of the GPU runners (the cuBLAS ones are rows of kernels/runner_cublas.cu,
# the others kernels/runner_<name>.cu); a unit test checks this list against
# the runner table. Each becomes numerics and perf tests that report skipped
# where no CUDA device exists.
set(LSTMCHECK_CUDA_RUNNERS_CUBLAS aten py jit jit_premul jit_premul_bias jit_simple jit_multilayer jit_wgrad_all)
set(LSTMCHECK_CUDA_RUNNERS_CUDNN cudnn cudnn_tf32 cudnn_persist vl_cudnn vl_jit)
set(LSTMCHECK_CUDA_RUNNERS ${LSTMCHECK_CUDA_RUNNERS_CUBLAS} ${LSTMCHECK_CUDA_RUNNERS_CUDNN})
