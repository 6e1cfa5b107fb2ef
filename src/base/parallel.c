/* Splitting a loop over threads (see parallel.h). */
#define _GNU_SOURCE /* sched_getaffinity: the processors this process may use */
#include "base/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct parallel_chunk {
    lc_parallel_fn fn;
    void *arg;
    int begin, end;
} parallel_chunk;

/* The rank of the thread in the team or loop that runs it (0: the caller's
 * thread, or none). */
static _Thread_local int thread_rank;

int lc_parallel_rank(void)
{
    return thread_rank;
}

static void *run_chunk(void *p)
{
    parallel_chunk *c = p;
    c->fn(c->arg, c->begin, c->end);
    return NULL;
}

typedef struct started_chunk {
    parallel_chunk chunk;
    int rank;
} started_chunk;

static void *run_started_chunk(void *p)
{
    started_chunk *c = p;
    thread_rank = c->rank;
    return run_chunk(&c->chunk);
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
    started_chunk chunks[LC_PARALLEL_MAX_THREADS];
    pthread_t tid[LC_PARALLEL_MAX_THREADS];
    int started[LC_PARALLEL_MAX_THREADS] = {0};
    for (int c = 0; c < k; c++)
        chunks[c] = (started_chunk){{fn, arg, (int)((long long)n * c / k), (int)((long long)n * (c + 1) / k)}, c};
    for (int c = 1; c < k; c++)
        started[c] = pthread_create(&tid[c], NULL, run_started_chunk, &chunks[c]) == 0;
    run_chunk(&chunks[0].chunk);
    for (int c = 1; c < k; c++) {
        if (started[c])
            pthread_join(tid[c], NULL);
        else
            run_chunk(&chunks[c].chunk);
    }
}

struct lc_team {
    int size;
    atomic_int arrived, round;
    atomic_int go; /* 1 once size and every member's rank are set */
    lc_team_fn fn;
    void *arg;
};

typedef struct team_member {
    lc_team *team;
    int rank;
} team_member;

/* Waits until *flag differs from seen: spinning first (a barrier of a busy
 * team lasts microseconds), then yielding. */
static void wait_changed(atomic_int *flag, int seen)
{
    for (long spins = 0; atomic_load_explicit(flag, memory_order_acquire) == seen; spins++) {
        if (spins > 4000)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

void lc_team_barrier(lc_team *team)
{
    if (team->size < 2)
        return;
    const int round = atomic_load_explicit(&team->round, memory_order_acquire);
    if (atomic_fetch_add_explicit(&team->arrived, 1, memory_order_acq_rel) == team->size - 1) {
        atomic_store_explicit(&team->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&team->round, 1, memory_order_acq_rel);
        return;
    }
    wait_changed(&team->round, round);
}

static void *run_member(void *p)
{
    team_member *m = p;
    wait_changed(&m->team->go, 0);
    thread_rank = m->rank;
    m->team->fn(m->team->arg, m->team, m->rank, m->team->size);
    return NULL;
}

void lc_parallel_team(int threads, lc_team_fn fn, void *arg)
{
    const int k = chunks_for(threads, threads); /* threads within 1..LC_PARALLEL_MAX_THREADS */
    lc_team team = {.size = 1, .fn = fn, .arg = arg};
    team_member members[LC_PARALLEL_MAX_THREADS];
    pthread_t tid[LC_PARALLEL_MAX_THREADS];
    int started = 0;
    for (int c = 1; c < k; c++) {
        members[started] = (team_member){&team, 0};
        if (pthread_create(&tid[started], NULL, run_member, &members[started]) == 0)
            started++;
    }
    /* ranks and the size are set before any member reads them (go) */
    for (int c = 0; c < started; c++)
        members[c].rank = c + 1;
    team.size = started + 1;
    atomic_store_explicit(&team.go, 1, memory_order_release);
    fn(arg, &team, 0, team.size);
    for (int c = 0; c < started; c++)
        pthread_join(tid[c], NULL);
}

int lc_online_cpus(void)
{
    /* those this process may run on (taskset, a container's cpuset), else those online */
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > LC_PARALLEL_MAX_THREADS ? LC_PARALLEL_MAX_THREADS : (int)n;
}
