/* What decides a figure besides the code measured: when and on what it was
 * measured, with which build, libraries and threads (google-benchmark's
 * context, asv's machine.json). One value per run, collected once before
 * the runners; bench --print-json full, baseline compare --json and
 * --markdown, and lstmcheck --version print it (report/context_report.h).
 * docs/baselines.md says what each field means. */
#ifndef LSTMCHECK_CONTEXT_H
#define LSTMCHECK_CONTEXT_H

#include "device/device.h"
#include "device/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The context's text fields, X(member, size, json key, label): one list for
 * the struct, the JSON keys and the markdown rows. */
#define RUN_CONTEXT_TEXTS(X)                                                  \
    X(date, 32, "date", "date (UTC)")                                         \
    X(lstmcheck_version, 16, "lstmcheck_version", "lstmcheck")                \
    X(commit, 48, "commit", "commit built")                                   \
    X(build_type, 32, "build_type", "build type")                             \
    X(c_compiler, 64, "c_compiler", "C compiler")                             \
    X(cuda_compiler, 96, "cuda_compiler", "CUDA compiler")                    \
    X(openblas, 512, "openblas", "OpenBLAS")                                  \
    X(onednn, 256, "onednn", "oneDNN")                                        \
    X(cuda, 160, "cuda", "CUDA")                                              \
    X(cudnn, 96, "cudnn", "cuDNN")

/* The environment variables that change what is measured, X(name): thread
 * counts, the GPU seen, and lstmcheck's own (the cpu runner's kernels,
 * cuBLAS's math, GPU runners in a child or not, NVTX ranges in a trace).
 * Recorded as given (unset is not the same as empty). */
#define RUN_CONTEXT_ENV(X)      \
    X(OPENBLAS_NUM_THREADS)     \
    X(OMP_NUM_THREADS)          \
    X(OMP_WAIT_POLICY)          \
    X(CUDA_VISIBLE_DEVICES)     \
    X(LSTMCHECK_CPU_KERNELS)    \
    X(LSTMCHECK_CUBLAS_MATH)    \
    X(LSTMCHECK_ISOLATE)        \
    X(LSTMCHECK_TRACE_NVTX)

#define RUN_CONTEXT_ENV_MAX 512

enum {
#define RUN_CONTEXT_ENV_ID(name) RUN_CONTEXT_ENV_##name,
    RUN_CONTEXT_ENV(RUN_CONTEXT_ENV_ID)
#undef RUN_CONTEXT_ENV_ID
    RUN_CONTEXT_ENVS
};

/* The machine key of a device the run's runners use (device/machine.h), or
 * why it could not be read (no CUDA device). */
typedef struct run_context_machine {
    int asked;        /* the run has runners on this device */
    int known;        /* key holds it; else why says why not */
    machine_key key;
    char why[256];
} run_context_machine;

typedef enum run_context_tree {
    RUN_TREE_UNKNOWN = -1, /* not built in a git checkout */
    RUN_TREE_DIRTY = 0,    /* built with uncommitted changes */
    RUN_TREE_CLEAN = 1,
} run_context_tree;

typedef struct run_context {
#define RUN_CONTEXT_MEMBER(member, size, key, label) char member[size];
    RUN_CONTEXT_TEXTS(RUN_CONTEXT_MEMBER)
#undef RUN_CONTEXT_MEMBER
    run_context_tree tree;
    int cpus_online, cpus_allowed; /* the machine's, and this process's affinity */
    int openblas_threads;          /* what OpenBLAS (and every CPU runner's team) runs with */
    int env_set[RUN_CONTEXT_ENVS];
    char env[RUN_CONTEXT_ENVS][RUN_CONTEXT_ENV_MAX]; /* a longer value is cut, ending in "..." */
    run_context_machine machine[LC_DEVICE_COUNT];
} run_context;

/* Fill c for a run on the devices marked in asked (indexed by lc_device;
 * NULL: none). built_from: the commit the build was made from, as
 * cmake/build_commit.cmake writes it ("<sha>", "<sha>-dirty" or
 * "unknown"). A GPU's key is read in a child where this process must stay
 * free of CUDA (check/isolate.h), so a bench may still fork its GPU runners. */
void run_context_collect(run_context *c, const char *built_from, const int asked[LC_DEVICE_COUNT]);

/* The name of environment variable i (RUN_CONTEXT_ENV's order). */
const char *run_context_env_name(int i);

/* "clean", "with uncommitted changes" or "unknown (not built in a git checkout)". */
const char *run_context_tree_name(run_context_tree tree);

#ifdef __cplusplus
}
#endif
#endif
