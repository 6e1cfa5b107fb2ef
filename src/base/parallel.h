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

/* A team: threads that all run at once and meet at barriers, for work in
 * rounds where each round reads what every thread wrote in the one before
 * (the steps of a recurrence). Unlike lc_parallel_for's chunks, a member
 * never runs another's share: the team is as large as the threads that
 * could be started (at least the caller's), and fn learns its rank and the
 * size. Joined before lc_parallel_team returns. */
typedef struct lc_team lc_team;
typedef void (*lc_team_fn)(void *arg, lc_team *team, int rank, int size);
void lc_parallel_team(int threads, lc_team_fn fn, void *arg);
/* Returns when every member has called it (as often): what each wrote
 * before is then visible to all. Spins briefly, then yields the processor,
 * so that an oversubscribed host still makes progress. */
void lc_team_barrier(lc_team *team);

/* The rank of the calling thread in the team (or the chunk of
 * lc_parallel_for) that started it: 1.. for a started thread, 0 on the
 * caller's thread and outside any. What a trace names a thread's lane by. */
int lc_parallel_rank(void);

/* The processors this process may run on, within 1..LC_PARALLEL_MAX_THREADS. */
int lc_online_cpus(void);

#ifdef __cplusplus
}
#endif
#endif
