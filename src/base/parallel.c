/* Splitting a loop over threads (see parallel.h). */
#define _GNU_SOURCE /* sched_getaffinity: the processors this process may use */
#include "base/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

typedef struct parallel_chunk {
    lc_parallel_fn fn;
    void *arg;
    int begin, end;
} parallel_chunk;

static void *run_chunk(void *p)
{
    parallel_chunk *c = p;
    c->fn(c->arg, c->begin, c->end);
    return NULL;
}

static int chunks_for(int n, int threads)
{
    if (threads > LC_PARALLEL_MAX_THREADS)
        threads = LC_PARALLEL_MAX_THREADS;
    if (threads > n)
        threads = n;
    return threads > 1 ? threads : 1;
}

void lc_parallel_for(int n, int threads, lc_parallel_fn fn, void *arg)
{
    const int k = chunks_for(n, threads);
    parallel_chunk chunks[LC_PARALLEL_MAX_THREADS];
    pthread_t tid[LC_PARALLEL_MAX_THREADS];
    int started[LC_PARALLEL_MAX_THREADS] = {0};
    for (int c = 0; c < k; c++)
        chunks[c] = (parallel_chunk){fn, arg, (int)((long long)n * c / k), (int)((long long)n * (c + 1) / k)};
    for (int c = 1; c < k; c++)
        started[c] = pthread_create(&tid[c], NULL, run_chunk, &chunks[c]) == 0;
    run_chunk(&chunks[0]);
    for (int c = 1; c < k; c++) {
        if (started[c])
            pthread_join(tid[c], NULL);
        else
            run_chunk(&chunks[c]);
    }
}

int lc_online_cpus(void)
{
    /* those this process may run on (taskset, a container's cpuset), else those online */
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > LC_PARALLEL_MAX_THREADS ? LC_PARALLEL_MAX_THREADS : (int)n;
}
