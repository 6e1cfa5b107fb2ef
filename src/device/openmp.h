/* OpenMP's threads, which oneDNN's calls run on (the onednn runner, the
 * oneDNN half of the machine's limit). Two facts every caller needs:
 * their count follows OpenBLAS's, so that every CPU runner and limit of a
 * process uses as many threads (docs/perf.md); and libgomp is not
 * fork-safe: a child forked after this process started OpenMP threads
 * hangs in its first parallel region (seen here: bench's torch:lstm
 * child after an in-process onednn). So the process knows whether it has
 * started them. */
#ifndef LSTMCHECK_OPENMP_H
#define LSTMCHECK_OPENMP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Before a call that runs on OpenMP: its thread count set to OpenBLAS's
 * (omp_set_num_threads, looked up in the process: the OpenMP runtime
 * oneDNN was linked with, not linked here, where the fuzz build's clang
 * would bring another), and this process marked as one with OpenMP
 * threads. */
void openmp_match_blas_threads(void);

/* 1 once openmp_match_blas_threads ran in this process (inherited by a
 * forked child, whose copy of the pool is dead), else 0. */
int openmp_threads_started(void);

#ifdef __cplusplus
}
#endif
#endif
