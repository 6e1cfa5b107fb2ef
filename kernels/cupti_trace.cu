// GPU activity for the built-in trace (the CUDA half of src/device/gpu_trace.h):
// CUPTI's Activity API delivers kernel, memcpy, memset, NVTX marker and
// CUDA runtime API records in buffers; each completed buffer is turned into
// trace_events (kernel names demangled, API names without their _vNNNN).
// Every CUPTI call is checked; errors carry file:line into lc_error. Errors
// met inside CUPTI's callbacks (which cannot return one) are kept and
// reported by the next flush or stop.
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "device/gpu_trace.h"
#include "cuda_util.h"

#define CUPTI_CHECK(call)                                                           \
    do {                                                                            \
        CUptiResult cupti_check_rc_ = (call);                                       \
        if (cupti_check_rc_ != CUPTI_SUCCESS) {                                     \
            cupti_error(err, __LINE__, #call, cupti_check_rc_);                     \
            return 1;                                                               \
        }                                                                           \
    } while (0)

namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kAlign = 8;

struct open_marker {
    uint64_t start;
    std::string name;
    uint32_t tid;
};

std::mutex g_lock; // guards everything below
trace_buffer *g_trace = nullptr;
bool g_registered = false;
lc_error g_callback_err;
bool g_callback_failed = false;
std::unordered_map<uint32_t, open_marker> g_markers;

const CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_RUNTIME,
};

// "file:line: what: CUPTI's message for rc" into err.
void cupti_error(lc_error *err, int line, const char *what, CUptiResult rc)
{
    const char *msg = nullptr;
    cuptiGetResultString(rc, &msg);
    lc_error_set(err, "%s:%d: %s: %s", __FILE__, line, what, msg ? msg : "unknown CUPTI error");
}

void callback_error(const char *what, CUptiResult rc, int line)
{
    if (g_callback_failed)
        return;
    const char *msg = nullptr;
    cuptiGetResultString(rc, &msg);
    lc_error_set(&g_callback_err, "%s:%d: %s: %s", __FILE__, line, what, msg ? msg : "unknown");
    g_callback_failed = true;
}

const char *memcpy_name(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
    }
}

void name_stream(trace_buffer *t, uint32_t pid, uint32_t stream)
{
    char lane[48];
    snprintf(lane, sizeof lane, "stream %u", stream);
    trace_name_lane(t, pid, stream, lane);
}

// Work on a device stream: the event on lane (TRACE_PID_GPU + device,
// stream), whose name is written first.
void add_gpu_event(trace_buffer *t, trace_event *e, int kind, uint64_t start, uint64_t end,
                   uint32_t device, uint32_t stream)
{
    e->start_ns = start;
    e->end_ns = end;
    e->kind = kind;
    e->pid = TRACE_PID_GPU + device;
    e->tid = stream;
    name_stream(t, e->pid, e->tid);
    trace_add(t, e);
}

void record_kernel(trace_buffer *t, const CUpti_ActivityKernel10 *k)
{
    trace_event e;
    memset(&e, 0, sizeof e);
    e.launch = trace_launch{{k->gridX, k->gridY, k->gridZ}, {k->blockX, k->blockY, k->blockZ},
                            (unsigned)k->registersPerThread, k->staticSharedMemory + k->dynamicSharedMemory};
    char *readable = k->name ? abi::__cxa_demangle(k->name, nullptr, nullptr, nullptr) : nullptr;
    e.name = readable ? readable : k->name ? k->name : "kernel";
    add_gpu_event(t, &e, TRACE_KERNEL, k->start, k->end, k->deviceId, k->streamId);
    free(readable); // the buffer keeps its own copy
}

// A CUDA runtime call on the host thread that made it, named as the API
// calls it ("cudaLaunchKernel", CUPTI's "_v7000" left out).
void record_api(trace_buffer *t, const CUpti_ActivityAPI *a)
{
    const char *name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name) != CUPTI_SUCCESS || !name)
        name = "cuda runtime call";
    std::string shown(name);
    const size_t v = shown.rfind("_v");
    if (v != std::string::npos && v + 2 < shown.size() &&
        shown.find_first_not_of("0123456789", v + 2) == std::string::npos)
        shown.erase(v);
    trace_event e;
    memset(&e, 0, sizeof e);
    e.start_ns = a->start;
    e.end_ns = a->end;
    e.name = shown.c_str();
    e.kind = TRACE_API;
    e.pid = TRACE_PID_API;
    e.tid = a->threadId;
    trace_add(t, &e);
}

void record_memcpy(trace_buffer *t, const CUpti_ActivityMemcpy6 *m)
{
    trace_event e;
    memset(&e, 0, sizeof e);
    e.name = memcpy_name(m->copyKind);
    e.bytes = m->bytes;
    add_gpu_event(t, &e, TRACE_MEMCPY, m->start, m->end, m->deviceId, m->streamId);
}

void record_memset(trace_buffer *t, const CUpti_ActivityMemset4 *m)
{
    trace_event e;
    memset(&e, 0, sizeof e);
    e.name = "Memset";
    e.bytes = m->bytes;
    add_gpu_event(t, &e, TRACE_MEMSET, m->start, m->end, m->deviceId, m->streamId);
}

// NVTX push/pop and start/end ranges arrive as a START record (with the
// name) and an END record with the same id; an instantaneous mark alone.
// Caller holds g_lock.
void record_marker(trace_buffer *t, const CUpti_ActivityMarker2 *m)
{
    trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = TRACE_MARKER;
    e.pid = TRACE_PID_NVTX;
    uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        g_markers[m->id] = open_marker{m->timestamp, m->name ? m->name : "", tid};
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = g_markers.find(m->id);
        if (it == g_markers.end())
            return;
        e.start_ns = it->second.start;
        e.end_ns = m->timestamp;
        e.name = it->second.name.c_str();
        e.tid = it->second.tid;
        trace_add(t, &e);
        g_markers.erase(it);
    } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        e.start_ns = e.end_ns = m->timestamp;
        e.name = m->name ? m->name : "";
        e.tid = tid;
        trace_add(t, &e);
    }
}

// Caller holds g_lock and g_trace is set.
void record(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        record_kernel(g_trace, (const CUpti_ActivityKernel10 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        record_memcpy(g_trace, (const CUpti_ActivityMemcpy6 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        record_memset(g_trace, (const CUpti_ActivityMemset4 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MARKER:
        record_marker(g_trace, (const CUpti_ActivityMarker2 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        record_api(g_trace, (const CUpti_ActivityAPI *)rec);
        break;
    default:
        break;
    }
}

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = (uint8_t *)aligned_alloc(kAlign, kBufferBytes);
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0; // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)size;
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_trace && buffer) {
        CUpti_Activity *rec = nullptr;
        for (;;) {
            CUptiResult rc = cuptiActivityGetNextRecord(buffer, valid, &rec);
            if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED)
                break;
            if (rc != CUPTI_SUCCESS) {
                callback_error("cuptiActivityGetNextRecord", rc, __LINE__);
                break;
            }
            record(rec);
        }
        size_t dropped = 0;
        CUptiResult rc = cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
        if (rc != CUPTI_SUCCESS)
            callback_error("cuptiActivityGetNumDroppedRecords", rc, __LINE__);
        else if (dropped)
            trace_note_dropped(g_trace, dropped);
    }
    free(buffer);
}

// Take (and clear) the error a callback met.
int take_callback_error(lc_error *err)
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (!g_callback_failed)
        return 0;
    *err = g_callback_err;
    g_callback_failed = false;
    return 1;
}

// NVTX finds its tool through NVTX_INJECTION64_PATH at the process's first
// NVTX call: point it at the libcupti this process uses, unless a tool set
// it already (nsys does) or LSTMCHECK_TRACE_NVTX=0 asks not to.
void point_nvtx_at_cupti(void)
{
    const char *off = getenv("LSTMCHECK_TRACE_NVTX");
    if ((off && !strcmp(off, "0")) || getenv("NVTX_INJECTION64_PATH"))
        return;
    Dl_info info;
    if (dladdr((void *)&cuptiGetTimestamp, &info) && info.dli_fname && info.dli_fname[0])
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

} // namespace

extern "C" int gpu_trace_built(void) { return 1; }

extern "C" int gpu_trace_start(trace_buffer *t, lc_error *err)
{
    const int ready = lc_cuda_enter(err); // no device: LC_UNSUPPORTED, as for the runners
    if (ready != LC_OK)
        return ready;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        if (g_trace) {
            lc_error_set(err, "GPU trace: a collection is already running");
            return 1;
        }
    }
    point_nvtx_at_cupti();
    if (!g_registered) {
        CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
        g_registered = true;
    }
    {
        std::lock_guard<std::mutex> guard(g_lock);
        g_trace = t;
        g_markers.clear();
        g_callback_failed = false;
    }
    for (CUpti_ActivityKind kind : kKinds) {
        CUptiResult rc = cuptiActivityEnable(kind);
        if (rc != CUPTI_SUCCESS) {
            char what[48];
            snprintf(what, sizeof what, "cuptiActivityEnable(%d)", (int)kind);
            cupti_error(err, __LINE__, what, rc);
            for (CUpti_ActivityKind k : kKinds)
                cuptiActivityDisable(k);
            std::lock_guard<std::mutex> guard(g_lock);
            g_trace = nullptr;
            return 1;
        }
    }
    return 0;
}

// Forced: a plain flush delivers only full buffers, so the last
// iteration's kernels, still in a buffer that is not full, would be missing
// from the runner's window. The device is synchronized first, so that no
// record of unfinished work (no end time yet) is delivered.
extern "C" int gpu_trace_flush(lc_error *err)
{
    const cudaError_t sync = cudaDeviceSynchronize();
    if (sync != cudaSuccess) {
        lc_error_set(err, "%s:%d: cudaDeviceSynchronize before the trace flush: %s", __FILE__,
                     __LINE__, cudaGetErrorString(sync));
        return 1;
    }
    CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    return take_callback_error(err);
}

extern "C" int gpu_trace_stop(lc_error *err)
{
    int rc = 0;
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) {
        cupti_error(err, __LINE__, "cuptiActivityFlushAll", r);
        rc = 1;
    }
    for (CUpti_ActivityKind kind : kKinds) {
        r = cuptiActivityDisable(kind);
        if (r != CUPTI_SUCCESS && !rc) {
            char what[48];
            snprintf(what, sizeof what, "cuptiActivityDisable(%d)", (int)kind);
            cupti_error(err, __LINE__, what, r);
            rc = 1;
        }
    }
    if (!rc)
        rc = take_callback_error(err);
    std::lock_guard<std::mutex> guard(g_lock);
    g_trace = nullptr;
    g_markers.clear();
    return rc;
}

extern "C" int gpu_trace_timestamp(uint64_t *ns, lc_error *err)
{
    *ns = 0;
    if (lc_cuda_enter(err) != LC_OK)
        return 1;
    CUPTI_CHECK(cuptiGetTimestamp(ns));
    return 0;
}
