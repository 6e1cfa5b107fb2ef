/* Memory statistics (see memstats.h). */
#include "device/memstats.h"

#include "device/device.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>

#ifndef LSTMCHECK_WITH_CUDA
int memstats_cuda_mem_info(size_t *free_bytes, size_t *total_bytes, lc_error *err)
{
    *free_bytes = *total_bytes = 0;
    lc_error_set(err, "device memory: lstmcheck was built without CUDA");
    return 1;
}
#endif

int memstats_device_query(memstats_device *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    lc_error why;
    if (device_cuda_count(&why) <= 0)
        return 0;
    if (memstats_cuda_mem_info(&out->free_bytes, &out->total_bytes, err))
        return 1;
    out->have = 1;
    return 0;
}

size_t memstats_peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * 1024; /* Linux reports kilobytes */
}

void memstats_summarize(const memstats_sample *s, int n, memstats_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n = n > 0 ? n : 0;
    if (n <= 0)
        return;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i].time_ms;
    out->time_mean_ms = sum / n;
    if (n > 1) {
        double ss = 0;
        for (int i = 0; i < n; i++)
            ss += (s[i].time_ms - out->time_mean_ms) * (s[i].time_ms - out->time_mean_ms);
        out->time_std_ms = sqrt(ss / (n - 1));
    }
    for (int i = 0; i < n; i++) {
        if (s[i].peak_device_bytes > out->max_peak_device_bytes)
            out->max_peak_device_bytes = s[i].peak_device_bytes;
        if (s[i].peak_rss_bytes > out->max_peak_rss_bytes)
            out->max_peak_rss_bytes = s[i].peak_rss_bytes;
        if (!s[i].have_device)
            continue;
        if (!out->have_device || s[i].dev_free_bytes < out->min_dev_free_bytes)
            out->min_dev_free_bytes = s[i].dev_free_bytes;
        if (s[i].dev_used_bytes > out->max_dev_used_bytes)
            out->max_dev_used_bytes = s[i].dev_used_bytes;
        out->have_device = 1;
    }
}
