/* lstmcheck --version: what this program is and what it computes and times
 * with, for a bug report or a result's provenance. */
#include "build_config.h" /* generated: perf/build_config.h.in */
#include "cmd/commands.h"
#include "device/machine.h"
#include "lstmcheck/runner.h"
#include "runners/runner.h"

#include <stdio.h>
#include <string.h>

lc_status cmd_version(const char *built_from)
{
    char blas[512], onednn[256], cuda[160], cudnn[96];
    machine_blas_version(blas, sizeof blas);
    onednn_describe_version(onednn, sizeof onednn);
    machine_cuda_versions(cuda, sizeof cuda, cudnn, sizeof cudnn);
    const char *dirty = strstr(built_from, "-dirty");
    printf("lstmcheck %s\n", LSTMCHECK_VERSION);
    printf("commit:     %.*s%s\n", dirty ? (int)(dirty - built_from) : (int)strlen(built_from), built_from,
           dirty ? " with uncommitted changes" : !strcmp(built_from, "unknown") ? " (not built in a git checkout)" : "");
    printf("build:      %s, %s%s%s%s\n", LSTMCHECK_BUILD_TYPE[0] ? LSTMCHECK_BUILD_TYPE : "no build type",
           LSTMCHECK_C_COMPILER_NAME, device_cuda_built() ? ", nvcc " LSTMCHECK_CUDA_COMPILER_VERSION : "",
           device_cuda_built() ? " for sm_" : "", device_cuda_built() ? LSTMCHECK_CUDA_ARCHITECTURES : "");
    printf("runner ABI: %d (include/lstmcheck/runner.h)\n", LSTMCHECK_RUNNER_ABI_VERSION);
    printf("OpenBLAS:   %s\n", blas);
    printf("oneDNN:     %s\n", onednn);
    printf("CUDA:       %s\n", cuda);
    printf("cuDNN:      %s\n", cudnn);
    return LC_OK;
}
