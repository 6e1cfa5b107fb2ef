/* Memory statistics per runner, after torch_geometric.profile's profileit /
 * get_stats_summary: peak device memory the runner held (its own counted
 * allocations), device free/used as the driver reports it (cudaMemGetInfo,
 * absent without a device), the process's peak resident memory (getrusage),
 * and a summary over repeats: time mean/std and the maxima of memory. */
#ifndef LSTMCHECK_MEMSTATS_H
#define LSTMCHECK_MEMSTATS_H

#include <stddef.h>

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct memstats_device {
    int have;                 /* 0: no device (the figures are absent) */
    size_t free_bytes, total_bytes;
} memstats_device;

/* Device 0's free and total memory. Without a CUDA device (or in a build
 * without CUDA) out->have is 0 and 0 is returned; 1 with err when a CUDA
 * call fails. */
int memstats_device_query(memstats_device *out, lc_error *err);
/* The CUDA half (kernels/memstats_cuda.cu; a stub without CUDA). */
int memstats_cuda_mem_info(size_t *free_bytes, size_t *total_bytes, lc_error *err);

/* Peak resident set of this process so far (bytes; 0 if unknown). */
size_t memstats_peak_rss_bytes(void);

/* One repeat (one forward + backward iteration). */
typedef struct memstats_sample {
    double time_ms;           /* forward + backward */
    size_t peak_device_bytes; /* the runner's own peak allocation */
    size_t peak_rss_bytes;
    int have_device;
    size_t dev_free_bytes, dev_used_bytes;
} memstats_sample;

typedef struct memstats_summary {
    int n;
    double time_mean_ms, time_std_ms; /* std: unbiased (n-1), 0 for n < 2 */
    size_t max_peak_device_bytes, max_peak_rss_bytes;
    int have_device;                  /* any sample had device figures */
    size_t min_dev_free_bytes, max_dev_used_bytes;
} memstats_summary;

void memstats_summarize(const memstats_sample *s, int n, memstats_summary *out);

#ifdef __cplusplus
}
#endif
#endif
