/* OpenMP's threads (see openmp.h). */
#include "device/openmp.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

int openblas_get_num_threads(void);

static atomic_int started;
static pthread_once_t looked_up = PTHREAD_ONCE_INIT;
static void (*set_threads)(int);

static void look_up(void)
{
    void *self = dlopen(NULL, RTLD_LAZY);
    if (self)
        *(void **)&set_threads = dlsym(self, "omp_set_num_threads");
}

void openmp_match_blas_threads(void)
{
    pthread_once(&looked_up, look_up);
    atomic_store(&started, 1);
    if (set_threads)
        set_threads(openblas_get_num_threads());
}

int openmp_threads_started(void)
{
    return atomic_load(&started);
}
