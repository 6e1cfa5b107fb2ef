/* Splitting a loop over threads, for work whose pieces are independent:
 * each index is done by exactly one thread, so a result that does not
 * depend on how indices are grouped is the same bit for bit whatever the
 * thread count. Threads are joined before lc_parallel_for returns: no pool
 * outlives the call (a later fork() copies no running thread). */
#ifndef LSTMCHECK_PARALLEL_H
#define LSTMCHECK_PARALLEL_H

#ifdef __cplusplus
extern "C" {
#endif

#define LC_PARALLEL_MAX_THREADS 64

/* Does indices [begin, end). */
typedef void (*lc_parallel_fn)(void *arg, int begin, int end);

/* Runs fn over [0, n) in contiguous chunks, as many as threads (at most n
 * and LC_PARALLEL_MAX_THREADS), one thread each (the caller's thread does
 * the first). A thread that
 * cannot be started leaves its chunk to the caller's thread: never an error. */
void lc_parallel_for(int n, int threads, lc_parallel_fn fn, void *arg);

/* The processors this process may run on, within 1..LC_PARALLEL_MAX_THREADS. */
int lc_online_cpus(void);

#ifdef __cplusplus
}
#endif
#endif
