/* The formats others read, byte for byte: bench's oss, pep and full JSON
 * and the Chrome trace, made from fixed values and compared with the texts
 * committed in tests/unit/golden/. Those texts were written by the code
 * before the JSON writer (base/json.h) replaced the hand-formatting, so a
 * pass proves the output unchanged. LSTMCHECK_WRITE_GOLDEN=1 rewrites them
 * (only for a deliberate change of a format). */
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/trace.h"
#include "report/report.h"

#define GOLDEN_DIR LSTMCHECK_SOURCE_DIR "/tests/unit/golden/"

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* 0 when text equals the golden file name; else says where they part. */
static int same_as_golden(const char *name, const char *text, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, GOLDEN_DIR "%s", name);
    const char *write = getenv("LSTMCHECK_WRITE_GOLDEN");
    if (write && !strcmp(write, "1")) {
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(text, 1, len, f) == len;
        if (f)
            ok = fclose(f) == 0 && ok;
        fprintf(stderr, "wrote %s\n", path);
        return !ok;
    }
    size_t glen = 0;
    char *golden = read_all(path, &glen);
    if (!golden) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    size_t i = 0;
    while (i < len && i < glen && text[i] == golden[i])
        i++;
    int same = i == len && i == glen;
    if (!same)
        fprintf(stderr, "%s differs at byte %zu of %zu (golden %zu):\n  got:    %.80s\n  golden: %.80s\n", name,
                i, len, glen, text + (i > 20 ? i - 20 : 0), golden + (i > 20 ? i - 20 : 0));
    free(golden);
    return !same;
}

/* Numbers of every form the formats print: shortest repr, exponents both
 * ways, integers as floats, negative zero, infinity. */
static double fwd_a[] = {0.1, 1e-05, 1.5e+16};
static double bwd_a[] = {100.0, 2.5, 1.0 / 3.0};
static double fwd_b[] = {12.5, 7e-07, 1e22, 123.456};
static double bwd_b[] = {0.30000000000000004, 5e-324, 2.0, 1234567.0};
static double ctl_b[] = {1.75, 1.8, 1.7, 1.9};
static double fwd_c[] = {-0.0, 3.0};
static double bwd_c[] = {0.25, 4.0};

static void timed(bench_entry *e, double *fwd, double *bwd, double *ctl, int n)
{
    e->timed = 1;
    e->res.n = n;
    e->res.fwd_ms = fwd;
    e->res.bwd_ms = bwd;
    e->res.ctl_ms = ctl;
    stats_summarize(fwd, n, &e->res.fwd);
    stats_summarize(bwd, n, &e->res.bwd);
    if (ctl) {
        stats_summarize(ctl, n, &e->res.ctl);
        snprintf(e->res.control_name, sizeof e->res.control_name, "OpenBLAS sgemm 384^3");
    }
}

#define NENTRIES 6

/* Two groups, every gate outcome, with and without control, memory and
 * trace figures. */
static void fixed_entries(bench_entry *e, runner_ops *ops)
{
    static const char *const names[NENTRIES] = {"cpu", "ref", "jit", "aten", "vl_cudnn", "cpu"};
    memset(e, 0, NENTRIES * sizeof *e);
    for (int i = 0; i < NENTRIES; i++) {
        ops[i] = (runner_ops){.name = names[i]};
        e[i].runner = &ops[i];
        e[i].group = i < 4 ? RUNNER_GROUP_LSTM : RUNNER_GROUP_VL_LSTM;
    }
    e[0].gate.status = LC_OK;
    e[0].gate.worst.ratio = 0.03125;
    timed(&e[0], fwd_a, bwd_a, NULL, 3);
    e[0].res.warmup_done = 1;
    e[0].res.budget_hit = 1;
    e[0].res.checked = 2;
    e[0].peak_rss_bytes = 123456789;
    e[1].gate.status = LC_FAILED;
    e[1].gate.worst.ratio = INFINITY;
    e[2].gate.status = LC_UNSUPPORTED; /* full carries why: escaped */
    snprintf(e[2].gate.reason, sizeof e[2].gate.reason, "no CUDA device: \"none\"\tfound");
    e[3].gate.status = LC_ERROR;
    e[4].gate.status = LC_OK;
    e[4].gate.worst.ratio = 0.5;
    timed(&e[4], fwd_b, bwd_b, ctl_b, 4);
    e[4].res.warmup_done = 10;
    e[4].res.checked = 1;
    e[4].res.peak_device_bytes = (size_t)1 << 30;
    e[4].peak_rss_bytes = 2048;
    e[4].dev_used_before = 1000;
    e[4].dev_used_after = 5000;
    e[4].have_trace_stats = 1;
    e[4].gpu_utilization = 0.75;
    e[4].gemm_share = 2.0 / 3.0;
    e[5].gate.status = LC_OK;
    e[5].gate.worst.ratio = 1e-17;
    timed(&e[5], fwd_c, bwd_c, NULL, 2);
}

/* The roofline of every timed entry and every entry's sizes, as bench
 * computes them (its group's shape; the last entry's model is none). */
static const int vl_lengths[2] = {30, 99};
static const lstm_shape vl = {.seq_length = 99, .batch = 2, .input_size = 512, .hidden_size = 512, .num_layers = 1};

static void fixed_roofline(bench_entry *e, const report_run *run)
{
    lc_error err = {{0}};
    for (int i = 0; i < NENTRIES; i++) {
        const int fixed = e[i].group == RUNNER_GROUP_LSTM;
        lstm_gemm_flops(fixed ? &run->shape : &vl, fixed ? NULL : vl_lengths, e[i].gemm_flops);
        e[i].have_sizes = i < NENTRIES - 1 && !lstm_model_sizes(fixed ? &run->shape : &vl, fixed ? NULL : vl_lengths,
                                                                e[i].runner->model, &e[i].sizes, &err);
        const double ms[2] = {e[i].res.fwd.median, e[i].res.bwd.median};
        for (int p = 0; e[i].timed && p < 2; p++) {
            e[i].gflops[p] = roofline_gflops(e[i].gemm_flops[p], ms[p]);
            e[i].x_limit[p] = roofline_multiple(&run->limit[LC_DEVICE_CUDA].limit, e[i].gemm_flops[p], ms[p]);
        }
    }
}

typedef struct captured {
    char *text;
    size_t len;
    FILE *f;
} captured;

static int capture_begin(captured *c)
{
    memset(c, 0, sizeof *c);
    c->f = open_memstream(&c->text, &c->len);
    return c->f == NULL;
}

static void capture_end(captured *c)
{
    fclose(c->f);
}

/* A context with every kind of field: a GPU whose key was read, a CPU
 * whose was not, set and unset variables, a text with quotes. */
static void fixed_context(run_context *c)
{
    memset(c, 0, sizeof *c);
#define FIXED_TEXT(member, size, key, label) snprintf(c->member, sizeof c->member, "<%s>", key);
    RUN_CONTEXT_TEXTS(FIXED_TEXT)
#undef FIXED_TEXT
    snprintf(c->date, sizeof c->date, "2026-11-27T12:00:00Z");
    snprintf(c->lstmcheck_version, sizeof c->lstmcheck_version, "0.1.0");
    snprintf(c->commit, sizeof c->commit, "0123456789abcdef0123456789abcdef01234567");
    snprintf(c->c_compiler, sizeof c->c_compiler, "GNU \"12\"");
    c->cuda_compiler[0] = '\0'; /* built without CUDA: null */
    c->tree = RUN_TREE_DIRTY;
    c->cpus_online = 16;
    c->cpus_allowed = 8;
    c->openblas_threads = 8;
    c->env_set[RUN_CONTEXT_ENV_OMP_NUM_THREADS] = 1;
    snprintf(c->env[RUN_CONTEXT_ENV_OMP_NUM_THREADS], sizeof c->env[0], "8");
    c->env_set[RUN_CONTEXT_ENV_CUDA_VISIBLE_DEVICES] = 1; /* set, empty */
    c->machine[LC_DEVICE_CPU] = (run_context_machine){.asked = 1, .why = "no /proc/cpuinfo"};
    run_context_machine *gpu = &c->machine[LC_DEVICE_CUDA];
    *gpu = (run_context_machine){.asked = 1, .known = 1, .key = {.device = LC_DEVICE_CUDA, .nfields = 2}};
    snprintf(gpu->key.names[0], sizeof gpu->key.names[0], "gpu_name");
    snprintf(gpu->key.values[0], sizeof gpu->key.values[0], "NVIDIA H100 80GB HBM3");
    snprintf(gpu->key.names[1], sizeof gpu->key.names[1], "sm_count");
    snprintf(gpu->key.values[1], sizeof gpu->key.values[1], "132");
    machine_key_make_slug(&gpu->key);
}

int test_report_json_golden(void)
{
    bench_entry e[NENTRIES];
    runner_ops ops[NENTRIES];
    fixed_entries(e, ops);
    run_context context;
    fixed_context(&context);
    const report_run run = {.context = &context,
                            .vl_shape = &vl, .vl_lengths = vl_lengths,
                            .shape = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512,
                                      .num_layers = 1},
                            .seed = 17,
                            .device = LC_DEVICE_CUDA,
                            .limit = {[LC_DEVICE_CPU] = {.asked = 1, .status = LC_ERROR, .why = "no \"SGEMM\""},
                                      [LC_DEVICE_CUDA] = {.asked = 1, .status = LC_OK,
                                                          .limit = {.gflops = 50000, .library = "cuBLAS", .m = 4096,
                                                                    .n = 4096, .k = 4096, .which = 2, .libraries = 1,
                                                                    .tried = {{"cuBLAS", 50000}}}}}};
    fixed_roofline(e, &run);
    captured oss, pep, full;
    CHECK(!capture_begin(&oss) && !capture_begin(&pep) && !capture_begin(&full), "open_memstream");
    CHECK(!report_json(oss.f, REPORT_JSON_OSS, e, NENTRIES, &run) &&
              !report_json(pep.f, REPORT_JSON_PEP, e, NENTRIES, &run) &&
              !report_json(full.f, REPORT_JSON_FULL, e, NENTRIES, &run), "out of memory");
    capture_end(&oss);
    capture_end(&pep);
    capture_end(&full);
    int rc = same_as_golden("bench_oss.json", oss.text, oss.len);
    rc |= same_as_golden("bench_pep.txt", pep.text, pep.len);
    rc |= same_as_golden("bench_full.json", full.text, full.len);
    free(oss.text);
    free(pep.text);
    free(full.text);
    return rc;
}

/* Every lane kind, metadata, open ranges, args, escaped names. */
int test_trace_json_golden(void)
{
    lc_error err;
    trace_buffer *t = trace_create("cupti", &err);
    CHECK(t, "%s", err.msg);
    long runner = trace_host_push(t, "runner \"cpu\"\\x\n\t", 1000);
    trace_host_push(t, "cpu iteration 0", 1500);
    trace_host_push(t, "forward", 1600);
    trace_host_pop(t, 2601);
    trace_host_pop(t, 4700);
    trace_host_pop(t, 5000);
    trace_set_args(t, runner, "{\"timed_iterations\": 1}");
    const trace_event events[] = {
        {.start_ns = 3000, .end_ns = 3500, .name = "ampere_sgemm_32x32_nn", .kind = TRACE_KERNEL,
         .pid = TRACE_PID_GPU, .tid = 7},
        {.start_ns = 1200, .end_ns = 1250, .name = "Memcpy HtoD", .bytes = 4096, .kind = TRACE_MEMCPY,
         .pid = TRACE_PID_GPU + 1, .tid = 13},
        {.start_ns = 1300, .end_ns = 1310, .name = "Memset", .bytes = 64, .kind = TRACE_MEMSET,
         .pid = TRACE_PID_GPU + 1, .tid = 13},
        {.start_ns = 1100, .end_ns = 4000, .name = "step 0", .kind = TRACE_MARKER, .pid = TRACE_PID_NVTX,
         .tid = 4242},
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK(trace_add(t, &events[i]) == 0, "add");
    trace_name_lane(t, TRACE_PID_GPU, 7, "stream 7");
    trace_name_lane(t, TRACE_PID_NVTX, 4242, "thread \"main\"");
    trace_note_dropped(t, 2);
    trace_host_push(t, "left open", 5100);
    size_t len = 0;
    char *text = trace_to_json(t, &len, &err);
    CHECK(text, "%s", err.msg);
    int rc = same_as_golden("trace.json", text, len);
    free(text);
    trace_destroy(t);

    /* a kernel's launch, as cupti_trace.cu formatted it before the writer */
    t = trace_create("cupti", &err);
    CHECK(t, "%s", err.msg);
    const trace_event k = {.start_ns = 10, .end_ns = 20, .name = "k", .kind = TRACE_KERNEL, .pid = TRACE_PID_GPU,
                           .launch = {{1, 2, 3}, {128, 1, 1}, 40, 4096}};
    CHECK(trace_add(t, &k) == 0, "add");
    text = trace_to_json(t, &len, &err);
    CHECK(text, "%s", err.msg);
    CHECK(strstr(text, ", \"args\": {\"grid\": [1, 2, 3], \"block\": [128, 1, 1], \"registers\": 40, "
                       "\"shared_bytes\": 4096}}"), "%s", text);
    free(text);
    trace_destroy(t);

    t = trace_create("CLOCK_MONOTONIC", &err);
    CHECK(t, "%s", err.msg);
    text = trace_to_json(t, &len, &err);
    CHECK(text, "%s", err.msg);
    rc |= same_as_golden("trace_empty.json", text, len);
    free(text);
    trace_destroy(t);
    return rc;
}
