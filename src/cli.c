/* Command-line parsing (see cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_defaults(cli_options *o)
{
    memset(o, 0, sizeof *o);
    /* the original's defaults */
    o->shape = (lstm_shape){.seq_length = 100, .batch = 64, .input_size = 512,
                            .hidden_size = 512, .num_layers = 1};
    o->warmup = -1; /* the command's default: bench 10 */
    o->nloops = 0;  /* the command's default: bench 100, profile 5 */
    snprintf(o->device, sizeof o->device, "auto");
    o->sep = " ";
    o->seed = 17;
    o->time_budget_s = -1;
    o->progress = -1;
    o->baseline_dir = NULL;
    o->max_seconds = 0;
    o->tool = "none";
    o->out_dir = ".";
    o->sleep_between_s = 1;
}

void cli_free(cli_options *o)
{
    free(o->lengths);
    o->lengths = NULL;
}

void cli_normalize_flag(const char *flag, char *out, size_t n)
{
    size_t k = 0;
    while (*flag == '-')
        flag++;
    for (; *flag && k + 2 < n; flag++) {
        if (*flag == '=')
            break;
        if (isupper((unsigned char)*flag)) {
            out[k++] = '-';
            out[k++] = (char)tolower((unsigned char)*flag);
        } else {
            out[k++] = *flag == '_' ? '-' : *flag;
        }
    }
    out[k] = '\0';
}

int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return 1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return 1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return 1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < lo || v > hi)
        return 1;
    *out = v;
    return 0;
}

typedef enum opt_kind { OPT_INT, OPT_DOUBLE, OPT_STR, OPT_FLAG, OPT_LIST, OPT_OPTIONAL } opt_kind;

typedef struct opt_spec {
    const char *name;     /* normalized */
    opt_kind kind;
    const char *commands; /* space-separated commands that take it */
} opt_spec;

#define SHAPE_CMDS "bench check baseline profile"
static const opt_spec options[] = {
    {"seq-length", OPT_INT, SHAPE_CMDS},
    {"num-layers", OPT_INT, SHAPE_CMDS},
    {"input-size", OPT_INT, SHAPE_CMDS},
    {"hidden-size", OPT_INT, SHAPE_CMDS},
    {"mini-batch", OPT_INT, SHAPE_CMDS},
    {"warmup", OPT_INT, "bench baseline"},
    {"nloops", OPT_INT, "bench baseline profile"},
    {"device", OPT_STR, "bench check list baseline profile"},
    {"rnns", OPT_LIST, "bench check baseline profile"},
    {"variable-lstms", OPT_FLAG, "bench check profile"},
    {"lengths", OPT_LIST, "bench check profile"},
    {"sep", OPT_STR, "bench"},
    {"print-json", OPT_OPTIONAL, "bench"},
    {"seed", OPT_INT, SHAPE_CMDS},
    {"time-budget", OPT_DOUBLE, "bench baseline"},
    {"dump", OPT_STR, "check bench"},
    {"names", OPT_FLAG, "list"},
    {"progress", OPT_FLAG, "bench baseline"},
    {"no-progress", OPT_FLAG, "bench baseline"},
    {"baseline-dir", OPT_STR, "baseline"},
    {"json", OPT_FLAG, "baseline"},
    {"shape-set", OPT_STR, "baseline"},
    {"max-seconds", OPT_DOUBLE, "baseline"},
    {"against", OPT_STR, "baseline"},
    {"ab", OPT_FLAG, "baseline"},
    {"allow-dirty", OPT_FLAG, "baseline"},
    {"tool", OPT_STR, "profile"},
    {"out-dir", OPT_STR, "profile"},
    {"trace", OPT_STR, "bench profile"},
    {"internal-run", OPT_FLAG, "profile"},
    {"sleep-between-seconds", OPT_DOUBLE, "profile"},
    {"help", OPT_FLAG, "bench check list baseline profile"},
};

static int takes(const opt_spec *o, const char *command)
{
    size_t n = strlen(command);
    for (const char *p = o->commands; (p = strstr(p, command)); p += n)
        if ((p == o->commands || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static const char *const commands[] = {"bench", "check", "list", "baseline", "profile", NULL};

static int set_int(const char *flag, const char *v, long lo, long hi, int *dst, lc_error *err)
{
    long x;
    if (cli_parse_int(v, lo, hi, &x)) {
        lc_error_set(err, "--%s expects an integer in %ld..%ld, got '%s'", flag, lo, hi, v ? v : "");
        return CLI_EXIT_USAGE;
    }
    *dst = (int)x;
    return 0;
}

static int add_lengths(cli_options *o, const char *v, lc_error *err)
{
    /* accepts "30,45,99" and separate arguments alike */
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        long x;
        if (cli_parse_int(tok, 1, LSTM_MAX_DIM, &x)) {
            lc_error_set(err, "--lengths expects positive integers, got '%s'", tok);
            return CLI_EXIT_USAGE;
        }
        int *grown = realloc(o->lengths, (size_t)(o->nlengths + 1) * sizeof *grown);
        if (!grown) {
            lc_error_set(err, "out of memory parsing --lengths");
            return CLI_EXIT_USAGE;
        }
        o->lengths = grown;
        o->lengths[o->nlengths++] = (int)x;
    }
    return 0;
}

int cli_parse(int argc, char **argv, cli_options *o, lc_error *err)
{
    if (argc < 2) {
        lc_error_set(err, "missing command: one of bench, check, list, baseline, profile (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        o->help = 1;
        o->command = NULL;
        return 0;
    }
    for (int i = 0; commands[i]; i++)
        if (!strcmp(argv[1], commands[i]))
            o->command = commands[i];
    if (!o->command) {
        lc_error_set(err, "unknown command '%s': one of bench, check, list, baseline, profile", argv[1]);
        return CLI_EXIT_USAGE;
    }
    int i = 2;
    if (!strcmp(o->command, "baseline")) {
        if (i < argc && argv[i][0] != '-') {
            const char *sub = argv[i++];
            if (strcmp(sub, "update") && strcmp(sub, "show") && strcmp(sub, "compare")) {
                lc_error_set(err, "unknown baseline subcommand '%s': one of update, show, compare", sub);
                return CLI_EXIT_USAGE;
            }
            o->subcommand = sub;
        }
    }
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h")) {
            o->help = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            lc_error_set(err, "unexpected argument '%s'", arg);
            return CLI_EXIT_USAGE;
        }
        char name[64];
        cli_normalize_flag(arg, name, sizeof name);
        const char *inline_value = strchr(arg, '=');
        if (inline_value)
            inline_value++;
        const opt_spec *spec = NULL;
        for (size_t k = 0; k < sizeof options / sizeof options[0]; k++)
            if (!strcmp(options[k].name, name))
                spec = &options[k];
        if (!spec) {
            lc_error_set(err, "unknown flag '%s' (see lstmcheck %s --help)", arg, o->command);
            return CLI_EXIT_USAGE;
        }
        if (!takes(spec, o->command)) {
            lc_error_set(err, "flag '%s' does not apply to '%s'", arg, o->command);
            return CLI_EXIT_USAGE;
        }
        const char *value = NULL;
        if (spec->kind == OPT_INT || spec->kind == OPT_DOUBLE || spec->kind == OPT_STR) {
            if (inline_value)
                value = inline_value;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                lc_error_set(err, "flag '%s' needs a value", arg);
                return CLI_EXIT_USAGE;
            }
        } else if (spec->kind == OPT_FLAG && inline_value) {
            lc_error_set(err, "flag '%s' takes no value", arg);
            return CLI_EXIT_USAGE;
        }
        int rc = 0;
        if (!strcmp(name, "seq-length") || !strcmp(name, "num-layers") || !strcmp(name, "input-size") ||
            !strcmp(name, "hidden-size") || !strcmp(name, "mini-batch"))
            o->shape_given = 1;
        if (!strcmp(name, "seq-length")) rc = set_int(name, value, 1, LSTM_MAX_DIM, &o->shape.seq_length, err);
        else if (!strcmp(name, "num-layers")) rc = set_int(name, value, 1, LSTM_MAX_DIM, &o->shape.num_layers, err);
        else if (!strcmp(name, "input-size")) rc = set_int(name, value, 1, LSTM_MAX_DIM, &o->shape.input_size, err);
        else if (!strcmp(name, "hidden-size")) rc = set_int(name, value, 1, LSTM_MAX_DIM, &o->shape.hidden_size, err);
        else if (!strcmp(name, "mini-batch")) {
            rc = set_int(name, value, 1, LSTM_MAX_DIM, &o->shape.batch, err);
            o->batch_given = 1;
        }
        else if (!strcmp(name, "warmup")) rc = set_int(name, value, 0, 1000000, &o->warmup, err);
        else if (!strcmp(name, "nloops")) rc = set_int(name, value, 1, 1000000, &o->nloops, err);
        else if (!strcmp(name, "device")) {
            if (strcmp(value, "auto") && strcmp(value, "cpu") && strcmp(value, "cuda")) {
                lc_error_set(err, "--device expects auto, cpu or cuda, got '%s'", value);
                return CLI_EXIT_USAGE;
            }
            snprintf(o->device, sizeof o->device, "%s", value);
        } else if (!strcmp(name, "rnns") || !strcmp(name, "lengths")) {
            int is_rnns = name[0] == 'r';
            int got = 0;
            if (inline_value && *inline_value) {
                got++;
                if (is_rnns) {
                    if (o->nrnns == CLI_MAX_RNNS) { lc_error_set(err, "too many runners"); return CLI_EXIT_USAGE; }
                    o->rnns[o->nrnns++] = inline_value;
                } else if ((rc = add_lengths(o, inline_value, err))) {
                    return rc;
                }
            }
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                got++;
                if (is_rnns) {
                    if (o->nrnns == CLI_MAX_RNNS) { lc_error_set(err, "too many runners"); return CLI_EXIT_USAGE; }
                    o->rnns[o->nrnns++] = argv[++i];
                } else if ((rc = add_lengths(o, argv[++i], err))) {
                    return rc;
                }
            }
            if (!got) {
                lc_error_set(err, "--%s needs at least one value", name);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(name, "variable-lstms")) o->variable_lstms = 1;
        else if (!strcmp(name, "sep")) o->sep = value;
        else if (!strcmp(name, "print-json")) {
            const char *fmt = inline_value;
            if (!fmt && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                fmt = argv[++i];
            if (!fmt)
                fmt = "oss";
            if (strcmp(fmt, "oss") && strcmp(fmt, "pep") && strcmp(fmt, "full")) {
                lc_error_set(err, "--print-json expects oss, pep or full, got '%s'", fmt);
                return CLI_EXIT_USAGE;
            }
            snprintf(o->print_json, sizeof o->print_json, "%s", fmt);
        } else if (!strcmp(name, "seed")) {
            long x;
            if (cli_parse_int(value, 0, 2147483647L, &x)) {
                lc_error_set(err, "--seed expects an integer in 0..2147483647, got '%s'", value);
                return CLI_EXIT_USAGE;
            }
            o->seed = (uint64_t)x;
        } else if (!strcmp(name, "time-budget") || !strcmp(name, "max-seconds") ||
                   !strcmp(name, "sleep-between-seconds")) {
            double x;
            if (cli_parse_double(value, 0, 1e6, &x)) {
                lc_error_set(err, "--%s expects seconds in 0..1e6, got '%s'", name, value);
                return CLI_EXIT_USAGE;
            }
            if (name[0] == 't') o->time_budget_s = x;
            else if (name[0] == 'm') o->max_seconds = x;
            else o->sleep_between_s = x;
        } else if (!strcmp(name, "dump")) o->dump_dir = value;
        else if (!strcmp(name, "names")) o->names_only = 1;
        else if (!strcmp(name, "progress")) o->progress = 1;
        else if (!strcmp(name, "no-progress")) o->progress = 0;
        else if (!strcmp(name, "baseline-dir")) o->baseline_dir = value;
        else if (!strcmp(name, "json")) o->json = 1;
        else if (!strcmp(name, "shape-set")) o->shape_set = value;
        else if (!strcmp(name, "against")) o->against = value;
        else if (!strcmp(name, "ab")) o->ab = 1;
        else if (!strcmp(name, "allow-dirty")) o->allow_dirty = 1;
        else if (!strcmp(name, "tool")) {
            if (strcmp(value, "nsys") && strcmp(value, "ncu") && strcmp(value, "none")) {
                lc_error_set(err, "--tool expects nsys, ncu or none, got '%s'", value);
                return CLI_EXIT_USAGE;
            }
            o->tool = value;
        } else if (!strcmp(name, "out-dir")) o->out_dir = value;
        else if (!strcmp(name, "trace")) o->trace_path = value;
        else if (!strcmp(name, "internal-run")) o->internal_run = 1;
        else if (!strcmp(name, "help")) o->help = 1;
        if (rc)
            return rc;
    }
    if (o->nlengths && o->variable_lstms) {
        lc_error_set(err, "--lengths and --variable-lstms exclude each other");
        return CLI_EXIT_USAGE;
    }
    if (o->nlengths && o->nlengths != o->shape.batch) {
        if (o->batch_given) {
            lc_error_set(err, "--lengths gives %d lengths but --miniBatch is %d", o->nlengths,
                         o->shape.batch);
            return CLI_EXIT_USAGE;
        }
        o->shape.batch = o->nlengths; /* explicit lengths set the batch */
    }
    return 0;
}

const char *cli_usage(const char *command)
{
    if (!command)
        return "usage: lstmcheck <command> [flags]\n"
               "\n"
               "commands:\n"
               "  bench     check every runner against the reference, then time forward and backward\n"
               "  check     the numerics gate alone: exit 0 only if every runner passes\n"
               "  list      the runners, what they support, and whether they can run here\n"
               "  baseline  update | show | compare timings against committed per-machine baselines\n"
               "  profile   run runners under nsys/ncu or with a built-in trace\n"
               "\n"
               "Run 'lstmcheck <command> --help' for its flags.\n";
    if (!strcmp(command, "bench"))
        return "usage: lstmcheck bench [flags]\n"
               "  --seqLength N      sequence length T (default 100)\n"
               "  --numLayers N      layers L (default 1)\n"
               "  --inputSize N      input size I (default 512)\n"
               "  --hiddenSize N     hidden size H (default 512)\n"
               "  --miniBatch N      batch B (default 64)\n"
               "  --warmup N         warm-up iterations (default 10)\n"
               "  --nloops N         timed iterations (default 100)\n"
               "  --device D         auto | cpu | cuda (auto: cuda when a device exists)\n"
               "  --rnns A B ...     runners (default: the device's group; see lstmcheck list)\n"
               "  --variable-lstms   also run the variable-length group (lengths 30..99, seqLength ignored)\n"
               "  --lengths L,L,...  explicit per-sequence lengths (sets miniBatch)\n"
               "  --sep S            column separator of the table (default ' ')\n"
               "  --print-json [F]   JSON on stdout: oss (default), pep or full\n"
               "  --seed N           input seed (default 17)\n"
               "  --time-budget S    seconds per runner before sampling stops (default 30 on cpu, none on cuda)\n"
               "  --dump DIR         write inputs, reference and runner tensors as .npy\n"
               "  --trace FILE       write a Chrome trace (Perfetto) of the timed runs\n"
               "  --progress | --no-progress   progress on stderr (default: when it is a terminal)\n"
               "Flags also take kebab-case (--seq-length) and snake_case (--seq_length).\n"
               "Times are milliseconds on every device. The table goes to stderr.\n";
    if (!strcmp(command, "check"))
        return "usage: lstmcheck check [shape flags] [--rnns A B ...] [--device D] [--seed N]\n"
               "                       [--variable-lstms | --lengths L,L,...] [--dump DIR]\n"
               "Runs each runner once (forward and backward) on seeded inputs and compares every\n"
               "output and gradient with the reference (tolerance rule: docs/tolerance.md).\n"
               "Exit 0: all passed; 1: a runner failed or errored; 3: none failed but some\n"
               "could not run here (skipped).\n";
    if (!strcmp(command, "list"))
        return "usage: lstmcheck list [--names] [--device D]\n"
               "Lists every runner: device, what it supports, and whether it can run here.\n";
    if (!strcmp(command, "baseline"))
        return "usage: lstmcheck baseline update|show|compare [flags]\n"
               "  update   gate, measure and write the baseline of this machine (atomically)\n"
               "  show     print the baseline entries of this machine\n"
               "  compare  measure now and give the verdict against the baseline (as ctest -L perf)\n"
               "  --rnns A B ...    runners (default: every runner of the device)\n"
               "  --shape-set NAME  one shape set of the perf matrix (cpu: small, layers; cuda: default, small)\n"
               "  shape flags       one explicit shape instead of the perf matrix\n"
               "  --device D  --seed N  --nloops N (samples per round)  --warmup N\n"
               "  --baseline-dir DIR  (default: the baselines/ folder of the source tree)\n"
               "  --json              machine-readable output (show, compare)\n"
               "  --max-seconds S     compare: measuring budget per (runner, shape) (default 60)\n"
               "  --against REV       compare: A/B against commit REV, built beside this build and\n"
               "                      measured now in alternating processes (no baseline file used)\n"
               "  --ab                compare: A/B against the commit of the newest committed baseline\n"
               "                      of the device, even where this machine has a baseline\n"
               "  --allow-dirty       update: record a tree with uncommitted changes to src/, kernels/\n"
               "                      or CMakeLists.txt (the entries are marked not reproducible)\n"
               "compare without a baseline entry for this machine is an A/B comparison against the\n"
               "commit of the newest committed baseline of the device (docs/perf.md).\n"
               "Exit: 0 all SAME or FASTER; 1 SLOWER, or numerics failed; 2 bad input or an\n"
               "unusable baseline file; 3 not comparable here, or INCONCLUSIVE within the budget.\n";
    if (!strcmp(command, "profile"))
        return "usage: lstmcheck profile [flags]\n"
               "  --rnns A B ...  shape flags  --nloops N (default 5)  --sleep-between-seconds S\n"
               "  --tool nsys|ncu|none   run under an external profiler (default none)\n"
               "  --out-dir DIR          where prof_<rnns>_s<T>-l<L>-i<I>-h<H>-b<B>_<date>.<ext> goes\n"
               "  --trace FILE.json      built-in Chrome trace with GPU utilization and GEMM share\n";
    return "";
}
