/* Command-line parsing (see cli.h). One table row per flag carries its
 * name, the field it sets, how its value is read, the commands that take
 * it and its help line: parsing and --help both come from the table. */
#include "cmd/cli.h"

#include "base/text.h"
#include "perf/ab.h"
#include "perf/perf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
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
    o->device = CLI_DEVICE_AUTO;
    o->print_json = REPORT_JSON_NONE;
    o->sep = " ";
    o->seed = 17;
    o->time_budget_s = -1;
    o->child_timeout_s = -1;
    o->progress = -1;
    snprintf(o->tool, sizeof o->tool, "none");
    o->out_dir = ".";
    o->sleep_between_s = 1;
}

const char *cli_device_name(int device)
{
    return device == CLI_DEVICE_AUTO ? "auto" : lc_device_name((lc_device)device);
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

/* What strtol and strtod would skip or take that a number here may not
 * have: leading white space and a '+' (' 7' and '+7' are refused, not read
 * as 7). */
static int number_start_ok(const char *s)
{
    return s && *s && !isspace((unsigned char)*s) && *s != '+';
}

int cli_parse_int(const char *s, long lo, long hi, long *out)
{
    if (!number_start_ok(s))
        return 1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return 1;
    *out = v;
    return 0;
}

/* 1 when s is written -?D+(.D+)?: what strtod would also read (hex,
 * "inf", "nan", "1e3", "2.", ".5") is not a number here. */
static int decimal_text(const char *s)
{
    static const char digits[] = "0123456789";
    s += *s == '-';
    size_t n = strspn(s, digits);
    if (!n)
        return 0;
    s += n;
    if (*s == '.') {
        if (!(n = strspn(s + 1, digits)))
            return 0;
        s += 1 + n;
    }
    return *s == '\0';
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!number_start_ok(s) || !decimal_text(s) || (lo >= 0 && *s == '-')) /* "-0" is no seconds */
        return 1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    /* a subnormal (below 2.2e-308) is refused whether strtod calls it a range
     * error or not (it does not where the digits are exact): no shorter digits
     * would read back to it, so a child's command line could not carry it */
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi || fpclassify(v) == FP_SUBNORMAL)
        return 1;
    *out = v;
    return 0;
}

/* ---- the flags ---- */

typedef enum flag_kind {
    FLAG_INT,     /* an int field, within [lo, hi] */
    FLAG_SEED,    /* the uint64_t seed, within [lo, hi] */
    FLAG_SECONDS, /* a double field, 0..CLI_MAX_SECONDS */
    FLAG_TEXT,    /* a const char * field: the argument itself */
    FLAG_CHOICE,  /* a char[8] field: one of choices */
    FLAG_ENUM,    /* an int (or enum) field: lo + the position of the value among choices */
    FLAG_OPTIONAL_ENUM, /* FLAG_ENUM whose value may be left out (lo: the first choice) */
    FLAG_SWITCH,  /* an int field set to lo; takes no value */
    FLAG_RUNNERS, /* --rnns A B ...: one or more runner names */
    FLAG_LENGTHS, /* --lengths 3,4 5: one or more positive lengths */
    FLAG_PLUGINS, /* --plugin A.so B.so ...: one or more paths; repeatable */
} flag_kind;

/* What a flag marks besides its field. */
enum {
    MARK_SHAPE = 1,
    MARK_BATCH = 2,
    MARK_FREE_TEXT = 4,    /* a FLAG_TEXT that may be empty or a tab (--sep) */
    MARK_OUT_DIR = 8,      /* a folder the command writes into, made where missing */
    MARK_OUT_FILE = 16,    /* a file the command writes (atomically) */
    MARK_OUT_STDOUT = 32,  /* with MARK_OUT_FILE: '-' is stdout */
    MARK_OUT_DEFAULT = 64, /* written where the flag is not given too: its default place (NULL, the caller's) */
    MARK_HIDDEN = 128,     /* not in --help: lstmcheck writes it for its own children */
    MARK_OUT_NAMED = 256,  /* with MARK_OUT_DIR: the command writes one file of its own naming there, so
                            * another output may be inside it (never that file: its name is a date's) */
};

typedef struct cli_flag {
    const char *name;     /* normalized; --seqLength, --seq-length, --seq_length all name it */
    const char *shown;    /* as --help shows it */
    flag_kind kind;
    size_t field;         /* offsetof(cli_options, ...) */
    long lo, hi;
    const char *choices;  /* FLAG_CHOICE: space-separated */
    unsigned marks;
    const char *commands; /* the commands that take it, space-separated: "command", or
                           * "command:subcommand" where only that subcommand does */
    const char *help;     /* one line; or, where commands differ, "@command: text" per command */
    const char *writes;   /* an output (MARK_OUT_*): the commands that write it, "command" or
                           * "command:subcommand", space-separated */
} cli_flag;

/* FLAG_ENUM writes an int: the enums it fills are ints */
_Static_assert(sizeof(report_json_format) == sizeof(int), "print_json is an int");
_Static_assert(LC_DEVICE_CPU == CLI_DEVICE_AUTO + 1, "--device: auto, then the devices in their order");

#define F(member) offsetof(cli_options, member)
#define CLI_TEXT_OF(x) #x
#define CLI_TEXT(x) CLI_TEXT_OF(x)
#define SHAPE_CMDS "bench check baseline profile"
#define SIZE_CMDS SHAPE_CMDS " list" /* list gives each runner's sizes at the shape */
static const cli_flag flags[] = {
    {"seq-length", "--seqLength N", FLAG_INT, F(shape.seq_length), 1, LSTM_MAX_DIM, NULL, MARK_SHAPE, SIZE_CMDS,
     "sequence length T (default 100)", NULL},
    {"num-layers", "--numLayers N", FLAG_INT, F(shape.num_layers), 1, LSTM_MAX_DIM, NULL, MARK_SHAPE, SIZE_CMDS,
     "layers L (default 1)", NULL},
    {"input-size", "--inputSize N", FLAG_INT, F(shape.input_size), 1, LSTM_MAX_DIM, NULL, MARK_SHAPE, SIZE_CMDS,
     "input size I (default 512)", NULL},
    {"hidden-size", "--hiddenSize N", FLAG_INT, F(shape.hidden_size), 1, LSTM_MAX_DIM, NULL, MARK_SHAPE,
     SIZE_CMDS, "hidden size H (default 512)", NULL},
    {"mini-batch", "--miniBatch N", FLAG_INT, F(shape.batch), 1, LSTM_MAX_DIM, NULL, MARK_SHAPE | MARK_BATCH,
     SIZE_CMDS, "batch B (default 64)", NULL},
    {"device", "--device D", FLAG_ENUM, F(device), CLI_DEVICE_AUTO, 0, "auto" LC_DEVICE_WORDS, 0,
     "bench check list baseline profile",
     "auto | cpu | cuda (auto: cuda when a device exists)", NULL},
    {"rnns", "--rnns A B ...", FLAG_RUNNERS, F(rnns), 0, 0, NULL, 0, "bench check baseline profile",
     "runners (default: the device's group; see lstmcheck list)", NULL},
    {"variable-lstms", "--variable-lstms", FLAG_SWITCH, F(variable_lstms), 1, 0, NULL, 0, "bench check profile",
     "also run the variable-length group (lengths 30..99, seqLength ignored)", NULL},
    {"lengths", "--lengths L,L,...", FLAG_LENGTHS, F(lengths), 0, 0, NULL, 0, "bench check profile list",
     "explicit per-sequence lengths (sets miniBatch)", NULL},
    {"seed", "--seed N", FLAG_SEED, F(seed), 0, LSTM_MAX_SEED, NULL, 0, SHAPE_CMDS, "input seed (default 17)", NULL},
    {"warmup", "--warmup N", FLAG_INT, F(warmup), 0, 1000000, NULL, 0, "bench baseline",
     "@bench: warm-up iterations (default " CLI_TEXT(CLI_BENCH_WARMUP) ")"
     "@baseline: warm-up iterations of each round (default " CLI_TEXT(PERF_CPU_WARMUP) " on cpu, "
     CLI_TEXT(PERF_CUDA_WARMUP) " on cuda)", NULL},
    {"nloops", "--nloops N", FLAG_INT, F(nloops), 1, 1000000, NULL, 0, "bench baseline profile",
     "@bench: timed iterations (default " CLI_TEXT(CLI_BENCH_NLOOPS) ")"
     "@baseline: the most samples of a round (default " CLI_TEXT(PERF_CPU_MAX_SAMPLES) " on cpu, "
     CLI_TEXT(PERF_CUDA_MAX_SAMPLES) " on cuda; compare's A/B: " CLI_TEXT(AB_SAMPLES_PER_ROUND) ")"
     "@profile: profiled iterations (default " CLI_TEXT(CLI_PROFILE_NLOOPS) ")", NULL},
    {"sep", "--sep S", FLAG_TEXT, F(sep), 0, 0, NULL, MARK_FREE_TEXT, "bench", "column separator of the table (default ' ')", NULL},
    {"print-json", "--print-json [F]", FLAG_OPTIONAL_ENUM, F(print_json), REPORT_JSON_OSS, 0, REPORT_JSON_WORDS, 0,
     "bench",
     "JSON on stdout: oss (default), pep or full", NULL},
    {"time-budget", "--time-budget S", FLAG_SECONDS, F(time_budget_s), 0, 0, NULL, 0, "bench baseline",
     "@bench: seconds per runner before sampling stops (default " CLI_TEXT(CLI_BENCH_CPU_BUDGET_S)
     " on cpu, none on cuda)"
     "@baseline: seconds per round before sampling stops, once it has " CLI_TEXT(PERF_CPU_MIN_SAMPLES) " samples on "
     "cpu, " CLI_TEXT(PERF_CUDA_MIN_SAMPLES) " on cuda (default " CLI_TEXT(PERF_CPU_ROUND_BUDGET_S) " on cpu, "
     CLI_TEXT(PERF_CUDA_ROUND_BUDGET_S) " on cuda; 0: none)", NULL},
    {"dump", "--dump DIR", FLAG_TEXT, F(dump_dir), 0, 0, NULL, MARK_OUT_DIR, "check bench",
     "write inputs, reference and runner tensors as .npy files and index.json", "check bench"},
    {"trace", "--trace FILE", FLAG_TEXT, F(trace_path), 0, 0, NULL, MARK_OUT_FILE, "bench profile",
     "@bench: write a Chrome trace (Perfetto) of the timed runs: every runner in this process, one timeline "
     "(a plugin's crash or hang ends the command, --child-timeout does not apply)"
     "@profile: write the built-in trace (Chrome/Perfetto) to FILE instead of --out-dir's prof_... file",
     "bench profile"},
    {"csv", "--csv FILE", FLAG_TEXT, F(csv_path), 0, 0, NULL, MARK_OUT_FILE, "profile bench",
     "@bench: with --trace, also write the table of operations (each runner's, over its timed iterations) as CSV "
     "to FILE"
     "@profile: also write the table of operations (each runner's, over its profiled iterations) as CSV to FILE",
     "profile bench"},
    {"progress", "--progress", FLAG_SWITCH, F(progress), 1, 0, NULL, 0, "bench baseline",
     "progress on stderr (default: when it is a terminal)", NULL},
    {"no-progress", "--no-progress", FLAG_SWITCH, F(progress), 0, 0, NULL, 0, "bench baseline",
     "no progress on stderr", NULL},
    {"names", "--names", FLAG_SWITCH, F(names_only), 1, 0, NULL, 0, "list", "runner names only, one per line", NULL},
    {"shape-set", "--shape-set NAME", FLAG_TEXT, F(shape_set), 0, 0, NULL, 0, "baseline",
     "one shape set of the perf matrix (cpu: small, layers; cuda: default, small)", NULL},
    {"baseline-dir", "--baseline-dir DIR", FLAG_TEXT, F(baseline_dir), 0, 0, NULL, MARK_OUT_DIR | MARK_OUT_DEFAULT,
     "baseline", "where the baseline files are (default: the source tree's baselines/; installed: ./baselines)",
     "baseline:update"}, /* show and compare only read: a missing folder there is "no baseline" */
    {"json", "--json", FLAG_SWITCH, F(json), 1, 0, NULL, 0, "baseline:show baseline:compare baseline:history",
     "machine-readable output (show, compare, history)", NULL},
    {"max-seconds", "--max-seconds S", FLAG_SECONDS, F(max_seconds), 0, 0, NULL, 0, "baseline:compare",
     "compare: measuring budget per (runner, shape) (default 60)", NULL},
    {"against", "--against REV", FLAG_TEXT, F(against), 0, 0, NULL, 0, "baseline:compare",
     "compare: A/B against commit REV, built beside this build and measured now", NULL},
    {"ab", "--ab", FLAG_SWITCH, F(ab), 1, 0, NULL, 0, "baseline:compare",
     "compare: A/B against the commit of the newest committed baseline, even with a baseline here", NULL},
    {"markdown", "--markdown FILE", FLAG_TEXT, F(markdown_path), 0, 0, NULL, MARK_OUT_FILE | MARK_OUT_STDOUT,
     "baseline:compare baseline:history",
     "compare, history: also write the results as a markdown table to FILE ('-': stdout), for a pull request",
     "baseline:compare baseline:history"},
    {"plot", "--plot FILE.svg", FLAG_TEXT, F(plot_path), 0, 0, NULL, MARK_OUT_FILE,
     "baseline:compare baseline:history",
     "also draw, as SVG: compare: baseline and current distributions with the minimum effect; history: each "
     "runner's lines over the commits",
     "baseline:compare baseline:history"},
    {"baseline-file", "--baseline-file FILE", FLAG_TEXT, F(baseline_file), 0, 0, NULL, 0, "baseline:history",
     "history: the history of this baseline file (another machine's) instead of this machine's in --baseline-dir",
     NULL},
    {"plugin", "--plugin LIB.so ...", FLAG_PLUGINS, F(plugins), 0, 0, NULL, 0, "bench check list baseline",
     "load runners from shared libraries built against lstmcheck/runner.h (repeatable)", NULL},
    {"allow-dirty", "--allow-dirty", FLAG_SWITCH, F(allow_dirty), 1, 0, NULL, 0, "baseline:update",
     "update: record uncommitted changes to src/, kernels/, CMakeLists.txt (marked not reproducible)", NULL},
    {"keep-going", "--keep-going", FLAG_SWITCH, F(keep_going), 1, 0, NULL, 0, "baseline:update",
     "update: record the runners that pass and measure, report the others (the exit code is the worst of theirs)",
     NULL},
    {"tool", "--tool T", FLAG_CHOICE, F(tool), 0, 0, "nsys ncu none", 0, "profile",
     "run under an external profiler: nsys, ncu (each on PATH, with a GPU) or none (default none)", NULL},
    {"out-dir", "--out-dir DIR", FLAG_TEXT, F(out_dir), 0, 0, NULL, MARK_OUT_DIR | MARK_OUT_NAMED, "profile",
     "where prof_<rnns>_s<T>-l<L>-i<I>-h<H>-b<B>_<date>.<ext> goes, made if missing (default .)", "profile"},
    {"sleep-between-seconds", "--sleep-between-seconds S", FLAG_SECONDS, F(sleep_between_s), 0, 0, NULL, 0,
     "profile", "pause between runners (default 1)", NULL},
    {"internal-run", "--internal-run", FLAG_SWITCH, F(internal_run), 1, 0, NULL, MARK_HIDDEN, "profile",
     "(internal) run the runners here: the re-executed child of --tool", NULL},
#define CHILD_TIMEOUT_HELP(larger)                                                                        \
    "seconds a plugin's call (loading, available(), forward, ...) or the CUDA probe may take in a child "  \
    "before it is killed and its runner fails (default " CLI_TEXT(CLI_CHILD_TIMEOUT_S) larger "; 0: no limit)"
    {"child-timeout", "--child-timeout S", FLAG_SECONDS, F(child_timeout_s), 0, 0, NULL, 0,
     "bench check list baseline",
     "@bench: " CHILD_TIMEOUT_HELP(", or a larger --time-budget")
     "@check: " CHILD_TIMEOUT_HELP("")
     "@list: " CHILD_TIMEOUT_HELP("")
     "@baseline: " CHILD_TIMEOUT_HELP(", or a larger --time-budget or --max-seconds"), NULL},
#undef CHILD_TIMEOUT_HELP
    {"help", "--help", FLAG_SWITCH, F(help), 1, 0, NULL, 0, "bench check list baseline profile", "this text", NULL},
};
#undef F
#define NFLAGS (sizeof flags / sizeof flags[0])

/* ---- the commands ---- */

typedef struct cli_command {
    const char *name, *synopsis, *summary, *notes;
    const char *examples; /* command lines, one per line, each parsed by unit.cli_help_examples */
} cli_command;

static const cli_command commands[] = {
    {"bench", "bench [flags]", "check every runner against the reference, then time forward and backward",
     "Times are milliseconds on every device. The table goes to stderr. GFLOP/s counts the\n"
     "LSTM's GEMMs; x_limit is the time over what those FLOPs take at this machine's best\n"
     "SGEMM rate, measured by bench before the runners (docs/perf.md, Roofline).\n",
     "lstmcheck bench --device cpu --rnns cpu onednn\n"
     "lstmcheck bench --rnns cpu --seqLength 20 --hiddenSize 256 --nloops 20 --print-json full\n"},
    {"check", "check [flags]", "the numerics gate alone: exit 0 only if every runner passes",
     "Runs each runner once (forward and backward) on seeded inputs and compares every\n"
     "output and gradient with the reference (tolerance rule: docs/tolerance.md).\n",
     "lstmcheck check --device cpu\n"
     "lstmcheck check --rnns cpu --numLayers 2 --seed 3 --dump /tmp/lstm-dump\n"},
    {"list", "list [flags]", "the runners, what they support, their sizes at the shape, and whether they can run here",
     "params, param_mem and act_mem are the runner's model's parameters, their FP32 bytes and the\n"
     "activations a training step keeps (docs/profiling.md, Sizes); below the runners, each\n"
     "model's in bytes. A runner that cannot take the shape does not run here.\n",
     "lstmcheck list\n"
     "lstmcheck list --names --device cpu\n"
     "lstmcheck list --device cpu --numLayers 2 --hiddenSize 1024\n"},
    {"baseline", "baseline update|show|compare|history [flags]",
     "update | show | compare timings against committed per-machine baselines, and their history",
     "  update   gate, measure and write the baseline of this machine (atomically)\n"
     "  show     print the baseline entries of this machine\n"
     "  history  per runner and shape, the medians at each commit that changed this\n"
     "           machine's baseline file, and the verdict between consecutive entries;\n"
     "           exit 0 whatever the verdicts (they were committed)\n"
     "  compare  measure now and give the verdict against the baseline (as ctest -L perf);\n"
     "           without a baseline entry here, A/B against the commit of the newest\n"
     "           committed baseline of the device (docs/perf.md)\n"
     "update: a runner that cannot run here (SKIP) is no failure: exit 0 when every other was\n"
     "recorded; 3 when the host's noise kept an entry from being recorded now.\n",
     "lstmcheck baseline show --device cpu\n"
     "lstmcheck baseline compare --device cpu --rnns cpu --shape-set small --markdown report.md\n"
     "lstmcheck baseline update --device cpu --rnns cpu --shape-set small\n"
     "lstmcheck baseline history --device cpu --rnns cpu --plot history.svg\n"},
    {"profile", "profile [flags]", "run runners under nsys/ncu or with a built-in trace", "",
     "lstmcheck profile --device cpu --rnns cpu --seqLength 20 --trace trace.json\n"
     "lstmcheck profile --device cuda --rnns cudnn --tool nsys --out-dir prof\n"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char *const subcommands[] = {"update", "show", "compare", "history", NULL};

const char *cli_baseline_subcommands(void)
{
    static char words[64];
    size_t used = 0;
    for (int k = 0; subcommands[k]; k++)
        used += (size_t)snprintf(words + used, sizeof words - used, "%s%s", k ? ", " : "", subcommands[k]);
    return words;
}

/* The position of word among the space-separated words of list, or -1. */
static int word_index(const char *word, const char *list)
{
    const size_t n = strlen(word);
    int k = 0;
    for (const char *p = list + strspn(list, " "); *p; p += strspn(p, " "), k++) {
        const size_t len = strcspn(p, " ");
        if (len == n && !strncmp(p, word, n))
            return k;
        p += len;
    }
    return -1;
}

/* 1 when word is one of the space-separated words of list */
static int among(const char *word, const char *list)
{
    return word_index(word, list) >= 0;
}

/* 1 when the command (and subcommand, NULL: none) takes f. */
static int takes(const cli_flag *f, const char *command, const char *subcommand)
{
    char here[64];
    snprintf(here, sizeof here, "%s:%s", command, subcommand ? subcommand : "");
    return among(command, f->commands) || among(here, f->commands);
}

/* The subcommands of command that take f, as "show and compare", into buf;
 * "" when f is taken by no subcommand of it alone. */
static const char *subcommands_taking(const cli_flag *f, const char *command, char *buf, size_t n)
{
    const size_t len = strlen(command);
    size_t k = 0;
    buf[0] = '\0';
    for (const char *p = f->commands + strspn(f->commands, " "); *p; p += strspn(p, " ")) {
        const size_t w = strcspn(p, " ");
        if (w > len + 1 && !strncmp(p, command, len) && p[len] == ':' && k < n)
            k += (size_t)snprintf(buf + k, n - k, "%s%.*s", k ? " and " : "", (int)(w - len - 1), p + len + 1);
        p += w;
    }
    return buf;
}

static const cli_flag *find_flag(const char *name)
{
    for (size_t k = 0; k < NFLAGS; k++)
        if (!strcmp(flags[k].name, name))
            return &flags[k];
    return NULL;
}

/* ---- reading values ---- */

/* the cursor over argv while parsing */
typedef struct cli_args {
    int argc, i;
    char **argv;
    const char *inline_value; /* after '=' in --flag=value, or NULL */
    int given[NFLAGS];        /* flags seen so far (argv's index + 1): a second one is refused */
} cli_args;

/* 1 when arg is a flag ("--x", "-h"): never a value, even where one is due */
static int is_flag(const char *arg)
{
    return !strncmp(arg, "--", 2) || !strcmp(arg, "-h");
}

/* The next argument when it is not a flag, else NULL. */
static const char *next_word(cli_args *a)
{
    return a->i + 1 < a->argc && !is_flag(a->argv[a->i + 1]) ? a->argv[++a->i] : NULL;
}

/* Append word to a list of at most max words (--rnns, --plugin). */
static lc_status add_word(const char **list, int *n, int max, const cli_flag *f, const char *word, lc_error *err)
{
    if (*n == max) {
        lc_error_set(err, "too many values for --%s (at most %d)", f->name, max);
        return LC_BAD_INPUT;
    }
    list[(*n)++] = word;
    return LC_OK;
}

/* --rnns: a runner named twice would run twice. Names are [a-z0-9_]
 * (plugins: plugin:name), so a comma is a list written the way --lengths
 * takes it, not a name. (A plugin loaded twice is refused by the registry.) */
static lc_status add_runner_name(cli_options *o, const cli_flag *f, const char *word, lc_error *err)
{
    if (strchr(word, ',')) {
        lc_error_set(err, "--%s takes runner names separated by spaces, not commas: '%s'", f->name, word);
        return LC_BAD_INPUT;
    }
    for (int i = 0; i < o->nrnns; i++) {
        if (!strcmp(o->rnns[i], word)) {
            lc_error_set(err, "'%s' is given twice to --%s", word, f->name);
            return LC_BAD_INPUT;
        }
    }
    return add_word(o->rnns, &o->nrnns, CLI_MAX_RNNS, f, word, err);
}

/* One more length, the array grown by doubling (no fixed buffer: 1,401
 * lengths are 1,401 lengths). */
static lc_status push_length(cli_options *o, int x, lc_error *err)
{
    const int n = o->nlengths;
    if (n == LSTM_MAX_DIM) {
        lc_error_set(err, "--lengths gives more than %d lengths (the --miniBatch limit)", LSTM_MAX_DIM);
        return LC_BAD_INPUT;
    }
    if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) { /* full: 0, 8, 16, ... */
        int *grown = realloc(o->lengths, (size_t)(n ? 2 * n : 8) * sizeof *grown);
        if (!grown) {
            lc_error_set(err, "out of memory parsing --lengths");
            return LC_ERROR;
        }
        o->lengths = grown;
    }
    o->lengths[o->nlengths++] = x;
    return LC_OK;
}

/* "30,45,99" and separate arguments alike; an empty item (",", "3,,2",
 * "3,") is a mistake, not nothing. */
static lc_status add_lengths(cli_options *o, const char *v, lc_error *err)
{
    for (const char *p = v;; p++) {
        const size_t len = strcspn(p, ",");
        char num[24]; /* longer than any int: refused whole, never cut mid-digit */
        long x;
        if (len == 0) {
            lc_error_set(err, "--lengths has an empty item in '%s'", v);
            return LC_BAD_INPUT;
        }
        if (len < sizeof num) {
            memcpy(num, p, len);
            num[len] = '\0';
        }
        if (len >= sizeof num || cli_parse_int(num, 1, LSTM_MAX_DIM, &x)) {
            lc_error_set(err, "--lengths expects positive integers, got '%.*s'", (int)len, p);
            return LC_BAD_INPUT;
        }
        lc_status rc = push_length(o, (int)x, err);
        if (rc)
            return rc;
        p += len;
        if (!*p)
            return LC_OK;
    }
}

/* What every value must be: a runner name, a path, a revision or a number
 * is never empty (--sep may be), prints as it is (no control character,
 * C1 included, and valid UTF-8; --sep may be a tab: a value echoed to a
 * terminal could move the cursor or start a fake line, and a name that
 * holds one cannot be shown as given), and is never longer than a path. */
static lc_status check_value(const cli_flag *f, const char *v, lc_error *err)
{
    const int free_text = (f->marks & MARK_FREE_TEXT) != 0;
    const char *ctl = v;
    while ((ctl = text_find_unprintable(ctl)) && free_text && *ctl == '\t')
        ctl++;
    if (ctl) {
        lc_error_set(err, "--%s: a control character or invalid UTF-8 (byte %ld) in '%s'", f->name,
                     (long)(ctl - v), v);
        return LC_BAD_INPUT;
    }
    if (!*v && !free_text) {
        lc_error_set(err, "--%s has an empty value", f->name);
        return LC_BAD_INPUT;
    }
    if (f->kind != FLAG_LENGTHS && strlen(v) > CLI_VALUE_MAX) { /* --lengths: as many as --miniBatch */
        lc_error_set(err, "--%s: a value of %zu characters; at most %d", f->name, strlen(v), CLI_VALUE_MAX);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* --rnns, --lengths, --plugin: one or more values, inline or as separate words */
static lc_status read_list(const cli_flag *f, cli_args *a, cli_options *o, lc_error *err)
{
    int got = 0;
    lc_status rc = LC_OK;
    const char *v = a->inline_value ? a->inline_value : next_word(a);
    for (; v && !rc; v = next_word(a), got++) {
        if ((rc = check_value(f, v, err)))
            return rc;
        rc = f->kind == FLAG_RUNNERS   ? add_runner_name(o, f, v, err)
             : f->kind == FLAG_PLUGINS ? add_word(o->plugins, &o->nplugins, CLI_MAX_PLUGINS, f, v, err)
                                       : add_lengths(o, v, err);
    }
    if (!rc && !got) {
        lc_error_set(err, "--%s needs at least one value", f->name);
        rc = LC_BAD_INPUT;
    }
    return rc;
}

/* A value that must be there: inline or the next argument. A next
 * argument that starts with "--" is the next flag, not a value that was
 * forgotten (--trace --no-progress would write a file "--no-progress"):
 * such a value is written --flag=--value. */
static const char *required_value(const cli_flag *f, cli_args *a, lc_error *err)
{
    if (a->inline_value)
        return a->inline_value;
    if (a->i + 1 < a->argc && !is_flag(a->argv[a->i + 1]))
        return a->argv[++a->i];
    if (a->i + 1 < a->argc)
        lc_error_set(err, "flag '--%s' needs a value, not the flag '%s' (a value that starts with '--' is "
                     "written --%s=%s)", f->name, a->argv[a->i + 1], f->name, a->argv[a->i + 1]);
    else
        lc_error_set(err, "flag '--%s' needs a value", f->name);
    return NULL;
}

/* One of the flag's choices: its text (FLAG_CHOICE), or lo + its place. */
static lc_status read_choice(const cli_flag *f, const char *v, char *field, lc_error *err)
{
    if (!among(v, f->choices) || strlen(v) >= 8) {
        lc_error_set(err, "--%s expects one of %s, got '%s'", f->name, f->choices + strspn(f->choices, " "), v);
        return LC_BAD_INPUT;
    }
    if (f->kind == FLAG_CHOICE)
        snprintf(field, 8, "%s", v);
    else
        *(int *)field = (int)f->lo + word_index(v, f->choices);
    return LC_OK;
}

static lc_status read_value(const cli_flag *f, cli_args *a, cli_options *o, lc_error *err)
{
    char *field = (char *)o + f->field;
    if (f->kind == FLAG_RUNNERS || f->kind == FLAG_LENGTHS || f->kind == FLAG_PLUGINS)
        return read_list(f, a, o, err);
    if (f->kind == FLAG_SWITCH) {
        if (a->inline_value) {
            lc_error_set(err, "flag '--%s' takes no value", f->name);
            return LC_BAD_INPUT;
        }
        *(int *)field = (int)f->lo;
        return LC_OK;
    }
    const char *v;
    if (f->kind == FLAG_OPTIONAL_ENUM) {
        v = a->inline_value ? a->inline_value : next_word(a);
        if (!v) { /* left out: the first choice */
            *(int *)field = (int)f->lo;
            return LC_OK;
        }
    } else if (!(v = required_value(f, a, err))) {
        return LC_BAD_INPUT;
    }
    lc_status rc = check_value(f, v, err);
    if (rc)
        return rc;
    long x;
    double d;
    switch (f->kind) {
    case FLAG_INT:
    case FLAG_SEED:
        if (cli_parse_int(v, f->lo, f->hi, &x)) {
            lc_error_set(err, "--%s expects an integer in %ld..%ld, got '%s'", f->name, f->lo, f->hi, v);
            return LC_BAD_INPUT;
        }
        if (f->kind == FLAG_SEED) *(uint64_t *)field = (uint64_t)x;
        else *(int *)field = (int)x;
        return LC_OK;
    case FLAG_SECONDS:
        if (cli_parse_double(v, 0, CLI_MAX_SECONDS, &d)) {
            lc_error_set(err, "--%s expects seconds in 0..%d written as digits, or digits, a point and digits "
                         "(30, 0.5), got '%s'", f->name, CLI_MAX_SECONDS, v);
            return LC_BAD_INPUT;
        }
        *(double *)field = d;
        return LC_OK;
    case FLAG_CHOICE:
    case FLAG_ENUM:
    case FLAG_OPTIONAL_ENUM:
        return read_choice(f, v, field, err);
    default: /* FLAG_TEXT */
        *(const char **)field = v;
        return LC_OK;
    }
}

/* ---- parsing ---- */

static lc_status parse_command(int argc, char **argv, cli_options *o, int *next, lc_error *err)
{
    if (argc < 2) {
        lc_error_set(err, "missing command: one of bench, check, list, baseline, profile (see --help)");
        return LC_BAD_INPUT;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            o->command = commands[i].name;
    if (!o->command) {
        lc_error_set(err, "unknown command '%s': one of bench, check, list, baseline, profile", argv[1]);
        return LC_BAD_INPUT;
    }
    *next = 2;
    if (!strcmp(o->command, "baseline") && argc > 2 && argv[2][0] != '-') {
        for (int k = 0; subcommands[k]; k++)
            if (!strcmp(argv[2], subcommands[k]))
                o->subcommand = subcommands[k];
        if (!o->subcommand) {
            lc_error_set(err, "unknown baseline subcommand '%s': one of %s", argv[2], cli_baseline_subcommands());
            return LC_BAD_INPUT;
        }
        *next = 3;
    }
    return LC_OK;
}

/* A flag may be given once (--plugin: repeatable), and two flags that set
 * one field (--progress, --no-progress) exclude each other: a second value
 * is a mistake, not a reason to pick one. */
static lc_status once(cli_args *a, const cli_flag *f, const char *arg, lc_error *err)
{
    for (size_t k = 0; k < NFLAGS; k++) {
        if (!a->given[k] || flags[k].field != f->field || f->kind == FLAG_PLUGINS)
            continue;
        /* both as the line spells them, without their values */
        const char *first = a->argv[a->given[k] - 1];
        const int n1 = (int)strcspn(first, "="), n2 = (int)strcspn(arg, "=");
        if (&flags[k] == f)
            lc_error_set(err, "flag '%.*s' is given twice (again as '%.*s')", n1, first, n2, arg);
        else
            lc_error_set(err, "flags '%.*s' and '%.*s' exclude each other", n1, first, n2, arg);
        return LC_BAD_INPUT;
    }
    a->given[f - flags] = a->i + 1;
    return LC_OK;
}

static lc_status parse_flag(cli_args *a, cli_options *o, lc_error *err)
{
    const char *arg = a->argv[a->i];
    if (!strcmp(arg, "-h")) {
        o->help = 1;
        return LC_OK;
    }
    if (strncmp(arg, "--", 2) != 0) {
        lc_error_set(err, "unexpected argument '%s'", arg);
        return LC_BAD_INPUT;
    }
    char name[64];
    cli_normalize_flag(arg, name, sizeof name);
    /* exactly two dashes: normalizing would read ----rnns as --rnns */
    const cli_flag *f = arg[2] == '-' ? NULL : find_flag(name);
    if (!f) {
        lc_error_set(err, "unknown flag '%s' (see lstmcheck %s --help)", arg, o->command);
        return LC_BAD_INPUT;
    }
    if (!takes(f, o->command, o->subcommand)) {
        char subs[64];
        if (*subcommands_taking(f, o->command, subs, sizeof subs))
            lc_error_set(err, "--%s applies to %s %s only", f->name, o->command, subs);
        else
            lc_error_set(err, "flag '%s' does not apply to '%s'", arg, o->command);
        return LC_BAD_INPUT;
    }
    lc_status rc = once(a, f, arg, err);
    if (rc)
        return rc;
    const char *eq = strchr(arg, '=');
    a->inline_value = eq ? eq + 1 : NULL;
    o->shape_given |= (f->marks & MARK_SHAPE) != 0;
    o->batch_given |= (f->marks & MARK_BATCH) != 0;
    /* what is said of its value names the flag as this line spells it
     * (--hiddenSize, not --hidden-size) */
    char spelled[64];
    snprintf(spelled, sizeof spelled, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    cli_flag as_given = *f;
    as_given.name = spelled;
    return read_value(&as_given, a, o, err);
}

/* What no single flag can check. */
static lc_status check_together(cli_options *o, lc_error *err)
{
    if (o->nlengths && o->variable_lstms) {
        lc_error_set(err, "--lengths and --variable-lstms exclude each other");
        return LC_BAD_INPUT;
    }
    if (o->csv_path && !o->trace_path && o->command && !strcmp(o->command, "bench")) {
        lc_error_set(err, "--csv writes the table of operations of --trace: give --trace FILE too");
        return LC_BAD_INPUT;
    }
    if (o->json && o->markdown_path && !strcmp(o->markdown_path, "-")) {
        lc_error_set(err, "--json and --markdown - both want stdout: give --markdown a file");
        return LC_BAD_INPUT;
    }
    for (int b = 0; b < o->nlengths; b++) {
        if (o->lengths[b] > o->shape.seq_length) {
            lc_error_set(err, "length %d of sequence %d exceeds --seqLength %d", o->lengths[b], b,
                         o->shape.seq_length);
            return LC_BAD_INPUT;
        }
    }
    if (o->nlengths && o->nlengths != o->shape.batch) {
        if (o->batch_given) {
            lc_error_set(err, "--lengths gives %d lengths but --miniBatch is %d", o->nlengths, o->shape.batch);
            return LC_BAD_INPUT;
        }
        o->shape.batch = o->nlengths; /* explicit lengths set the batch */
    }
    return LC_OK;
}

/* After a parse error: whether stdout was to be JSON (--json,
 * --print-json anywhere on the line, also after the mistake), so that the
 * error is given as JSON too (cmd_fail). */
static void note_json_wanted(int argc, char **argv, cli_options *o)
{
    for (int i = 2; i < argc; i++) {
        char name[64];
        if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '-')
            continue;
        cli_normalize_flag(argv[i], name, sizeof name);
        if (!strcmp(name, "json"))
            o->json = 1;
        else if (!strcmp(name, "print-json") && o->print_json == REPORT_JSON_NONE)
            o->print_json = REPORT_JSON_OSS;
    }
}

int cli_wants_json(const cli_options *o)
{
    return o->json || o->print_json != REPORT_JSON_NONE;
}

lc_status cli_parse(int argc, char **argv, cli_options *o, lc_error *err)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        o->help = 1;
        o->command = NULL;
        return LC_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        if (argc > 2) {
            lc_error_set(err, "--version takes nothing after it, not '%s'", argv[2]);
            return LC_BAD_INPUT;
        }
        o->version = 1;
        return LC_OK;
    }
    cli_args a = {.argc = argc, .argv = argv};
    lc_status rc = parse_command(argc, argv, o, &a.i, err);
    for (; !rc && a.i < argc; a.i++)
        rc = parse_flag(&a, o, err);
    if (!rc)
        rc = check_together(o, err);
    if (rc)
        note_json_wanted(argc, argv, o);
    return rc;
}

static const void *field_of(const cli_options *o, const cli_flag *f)
{
    return (const char *)o + f->field;
}

/* ---- the outputs ---- */

/* 1 when o's command (and subcommand) is among a flag's writes. */
static int writes_here(const cli_flag *f, const cli_options *o)
{
    const cli_flag as_taken = {.commands = f->writes};
    return takes(&as_taken, o->command, o->subcommand);
}

int cli_outputs(const cli_options *o, cli_output *out, int max)
{
    int n = 0;
    for (size_t k = 0; o->command && k < NFLAGS && n < max; k++) {
        const cli_flag *f = &flags[k];
        const char *path = (f->marks & (MARK_OUT_DIR | MARK_OUT_FILE)) ? *(const char *const *)field_of(o, f) : NULL;
        if (!(f->marks & (MARK_OUT_DIR | MARK_OUT_FILE)) || !writes_here(f, o) ||
            (!path && !(f->marks & MARK_OUT_DEFAULT)))
            continue;
        /* profile's report goes to --out-dir unless --trace names its file; its
         * re-executed run (--internal-run) writes only what the parent named */
        if (f->field == offsetof(cli_options, out_dir) && (o->trace_path || o->internal_run))
            continue;
        out[n++] = (cli_output){.flag = f->name, .path = path, .is_dir = (f->marks & MARK_OUT_DIR) != 0,
                                .stdout_ok = (f->marks & MARK_OUT_STDOUT) != 0,
                                .holds_others = (f->marks & MARK_OUT_NAMED) != 0};
    }
    return n;
}

/* ---- writing a command line back ---- */

static lc_status out_of_memory(lc_error *err)
{
    lc_error_set(err, "out of memory writing a command line");
    return LC_ERROR;
}

lc_status cli_line_add(cli_line *line, const char *word, lc_error *err)
{
    if (line->n + 2 > line->cap) {
        const int cap = line->cap ? 2 * line->cap : 16;
        char **grown = realloc(line->words, (size_t)cap * sizeof *grown);
        if (!grown)
            return out_of_memory(err);
        line->words = grown;
        line->cap = cap;
    }
    if (!(line->words[line->n] = strdup(word)))
        return out_of_memory(err);
    line->words[++line->n] = NULL;
    return LC_OK;
}

void cli_line_free(cli_line *line)
{
    for (int i = 0; i < line->n; i++)
        free(line->words[i]);
    free(line->words);
    *line = (cli_line){0};
}

static int text_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int words_same(const char *const *a, const char *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i]))
            return 0;
    return 1;
}

/* 1 when f's field holds the same in a and b. */
static int field_same(const cli_flag *f, const cli_options *a, const cli_options *b)
{
    const void *x = field_of(a, f), *y = field_of(b, f);
    switch (f->kind) {
    case FLAG_SEED: return *(const uint64_t *)x == *(const uint64_t *)y;
    case FLAG_SECONDS: return *(const double *)x == *(const double *)y;
    case FLAG_TEXT: return text_same(*(const char *const *)x, *(const char *const *)y);
    case FLAG_CHOICE: return !strcmp((const char *)x, (const char *)y);
    case FLAG_RUNNERS: return a->nrnns == b->nrnns && words_same(a->rnns, b->rnns, a->nrnns);
    case FLAG_PLUGINS: return a->nplugins == b->nplugins && words_same(a->plugins, b->plugins, a->nplugins);
    case FLAG_LENGTHS:
        return a->nlengths == b->nlengths && (!a->nlengths || !memcmp(a->lengths, b->lengths,
                                                                     (size_t)a->nlengths * sizeof *a->lengths));
    default: return *(const int *)x == *(const int *)y; /* FLAG_INT, the enums, FLAG_SWITCH */
    }
}

int cli_options_same(const cli_options *a, const cli_options *b)
{
    if (!text_same(a->command, b->command) || !text_same(a->subcommand, b->subcommand) ||
        a->shape_given != b->shape_given || a->batch_given != b->batch_given || a->version != b->version)
        return 0;
    for (size_t k = 0; k < NFLAGS; k++)
        if (!field_same(&flags[k], a, b))
            return 0;
    return 1;
}

/* f's field in o set back to its default in d. */
static void field_reset(const cli_flag *f, cli_options *o, const cli_options *d)
{
    static const size_t size[] = {[FLAG_INT] = sizeof(int), [FLAG_SEED] = sizeof(uint64_t),
                                  [FLAG_SECONDS] = sizeof(double), [FLAG_TEXT] = sizeof(const char *),
                                  [FLAG_CHOICE] = sizeof o->tool, [FLAG_ENUM] = sizeof(int),
                                  [FLAG_OPTIONAL_ENUM] = sizeof(int), [FLAG_SWITCH] = sizeof(int)};
    if (f->kind == FLAG_RUNNERS)
        o->nrnns = 0;
    else if (f->kind == FLAG_PLUGINS)
        o->nplugins = 0;
    else if (f->kind == FLAG_LENGTHS)
        o->nlengths = 0, o->lengths = NULL; /* o is a copy: the array stays its owner's */
    else
        memcpy((char *)o + f->field, field_of(d, f), size[f->kind]);
}

void cli_drop_not_taken(cli_options *o)
{
    cli_options d;
    cli_defaults(&d);
    for (size_t k = 0; k < NFLAGS; k++)
        if (!takes(&flags[k], o->command, o->subcommand))
            field_reset(&flags[k], o, &d);
}

/* Whether f is written for o: its field differs from the default; a shape
 * flag also where the shape was given (a child given the default shape
 * must not fall back to its command's own choice of shapes), the batch
 * where it was given or lengths do not set it; a switch only as the flag
 * whose value its field holds (--progress, --no-progress). */
static int flag_written(const cli_flag *f, const cli_options *o, const cli_options *d)
{
    const int differs = !field_same(f, o, d);
    if (f->marks & MARK_BATCH)
        return o->batch_given || (differs && !o->nlengths);
    if (f->marks & MARK_SHAPE)
        return o->shape_given || differs;
    if (f->kind == FLAG_SWITCH)
        return differs && *(const int *)field_of(o, f) == (int)f->lo;
    return differs;
}

/* Appends "--name=value" (a value that starts with "--" stays a value). */
static lc_status add_valued(cli_line *line, const cli_flag *f, const char *value, lc_error *err)
{
    const size_t n = strlen(f->name) + strlen(value) + 4;
    char *word = malloc(n);
    if (!word)
        return out_of_memory(err);
    snprintf(word, n, "--%s=%s", f->name, value);
    const lc_status rc = cli_line_add(line, word, err);
    free(word);
    return rc;
}

/* Seconds as the decimal digits cli_parse_double reads back to v: the
 * fewest that do (0.1 is "0.1", not "0.10000000000000001"). */
static int seconds_text(double v, char *buf, size_t n)
{
    for (int digits = 0; digits <= 400; digits++) {
        double back;
        const int w = snprintf(buf, n, "%.*f", digits, v);
        if (w > 0 && (size_t)w < n && !cli_parse_double(buf, 0, CLI_MAX_SECONDS, &back) && back == v)
            return 0;
    }
    return 1;
}

static lc_status add_lengths_word(cli_line *line, const cli_flag *f, const cli_options *o, lc_error *err)
{
    const size_t n = (size_t)o->nlengths * 12 + 1;
    char *text = malloc(n);
    if (!text)
        return out_of_memory(err);
    size_t k = 0;
    for (int i = 0; i < o->nlengths; i++)
        k += (size_t)snprintf(text + k, n - k, "%s%d", i ? "," : "", o->lengths[i]);
    const lc_status rc = add_valued(line, f, text, err);
    free(text);
    return rc;
}

/* f's value in o, appended (flag_written said it is to be). */
static lc_status format_flag(const cli_flag *f, const cli_options *o, cli_line *line, lc_error *err)
{
    const void *x = field_of(o, f);
    char text[512];
    lc_status rc = LC_OK;
    switch (f->kind) {
    case FLAG_INT: snprintf(text, sizeof text, "%d", *(const int *)x); break;
    case FLAG_SEED: snprintf(text, sizeof text, "%llu", (unsigned long long)*(const uint64_t *)x); break;
    case FLAG_SECONDS:
        if (seconds_text(*(const double *)x, text, sizeof text)) {
            lc_error_set(err, "--%s: %g seconds cannot be written as a value it takes", f->name, *(const double *)x);
            return LC_BAD_INPUT;
        }
        break;
    case FLAG_TEXT: return add_valued(line, f, *(const char *const *)x, err);
    case FLAG_CHOICE: return add_valued(line, f, (const char *)x, err);
    case FLAG_ENUM:
    case FLAG_OPTIONAL_ENUM: {
        const char *p = f->choices + strspn(f->choices, " ");
        for (int k = *(const int *)x - (int)f->lo; k > 0 && *p; k--)
            p += strcspn(p, " "), p += strspn(p, " ");
        snprintf(text, sizeof text, "%.*s", (int)strcspn(p, " "), p);
        break;
    }
    case FLAG_SWITCH:
        snprintf(text, sizeof text, "--%s", f->name);
        return cli_line_add(line, text, err);
    case FLAG_RUNNERS:
        rc = add_valued(line, f, o->rnns[0], err);
        for (int i = 1; !rc && i < o->nrnns; i++)
            rc = cli_line_add(line, o->rnns[i], err);
        return rc;
    case FLAG_PLUGINS:
        for (int i = 0; !rc && i < o->nplugins; i++)
            rc = add_valued(line, f, o->plugins[i], err);
        return rc;
    case FLAG_LENGTHS: return add_lengths_word(line, f, o, err);
    }
    return add_valued(line, f, text, err);
}

/* The words of line from `from` as a command line of its own: what
 * cli_parse reads of it must be o. */
static lc_status reads_back(const cli_options *o, const cli_line *line, int from, lc_error *err)
{
    char **argv = malloc((size_t)(line->n - from + 2) * sizeof *argv);
    if (!argv)
        return out_of_memory(err);
    argv[0] = "lstmcheck";
    memcpy(argv + 1, line->words + from, (size_t)(line->n - from + 1) * sizeof *argv);
    cli_options back;
    lc_error why = {{0}};
    cli_defaults(&back);
    lc_status rc = cli_parse(line->n - from + 1, argv, &back, &why);
    if (rc == LC_OK && !cli_options_same(o, &back))
        rc = LC_BAD_INPUT;
    if (rc != LC_OK)
        lc_error_set(err, "the %s command line written does not read back%s%s", o->command ? o->command : "help",
                     why.msg[0] ? ": " : "", why.msg);
    cli_free(&back);
    free(argv);
    return rc;
}

lc_status cli_format(const cli_options *o, cli_line *line, lc_error *err)
{
    const int from = line->n;
    if (o->version) /* --version stands alone */
        return cli_line_add(line, "--version", err) ? LC_ERROR : reads_back(o, line, from, err);
    lc_status rc = o->command ? cli_line_add(line, o->command, err) : LC_OK;
    if (!rc && o->subcommand)
        rc = cli_line_add(line, o->subcommand, err);
    cli_options d;
    cli_defaults(&d);
    for (size_t k = 0; !rc && k < NFLAGS; k++) {
        const cli_flag *f = &flags[k];
        if (!flag_written(f, o, &d))
            continue;
        /* without a command, only --help: the line is `lstmcheck --help` */
        if (o->command ? !takes(f, o->command, o->subcommand) : f->field != offsetof(cli_options, help)) {
            lc_error_set(err, "--%s is set but does not apply to '%s': its command line would lose it", f->name,
                         o->command ? o->command : "help");
            return LC_BAD_INPUT;
        }
        rc = format_flag(f, o, line, err);
    }
    return rc ? rc : reads_back(o, line, from, err);
}

/* A value other than the default for the examples: the first choice
 * that differs. */
static const char *example_choice(const cli_flag *f, char *buf, size_t n)
{
    cli_options d;
    cli_defaults(&d);
    const char *p = f->choices + strspn(f->choices, " ");
    for (int k = 0; *p; k++, p += strcspn(p, " "), p += strspn(p, " ")) {
        snprintf(buf, n, "%.*s", (int)strcspn(p, " "), p);
        if (f->kind == FLAG_CHOICE ? strcmp(buf, (const char *)field_of(&d, f)) != 0
                                   : (int)f->lo + k != *(const int *)field_of(&d, f))
            return buf;
    }
    return buf;
}

int cli_flag_example(int i, const char *argv[8])
{
    if (i < 0 || (size_t)i >= NFLAGS)
        return 0;
    const cli_flag *f = &flags[i];
    static char command[16], subcommand[16], word[96], choice[16];
    cli_options d;
    cli_defaults(&d);
    const size_t w = strcspn(f->commands, " "), c = strcspn(f->commands, ": ");
    snprintf(command, sizeof command, "%.*s", (int)c, f->commands);
    snprintf(subcommand, sizeof subcommand, "%.*s", c < w ? (int)(w - c - 1) : 0, f->commands + c + (c < w));
    int k = 0;
    argv[k++] = "lstmcheck";
    argv[k++] = command;
    if (*subcommand)
        argv[k++] = subcommand;
    argv[k++] = word;
    switch (f->kind) {
    case FLAG_INT:
        snprintf(word, sizeof word, "--%s=%ld", f->name,
                 f->lo + 1 != *(const int *)field_of(&d, f) ? f->lo + 1 : f->hi);
        break;
    case FLAG_SEED: snprintf(word, sizeof word, "--%s=%ld", f->name, f->hi); break;
    case FLAG_SECONDS: snprintf(word, sizeof word, "--%s=0.1", f->name); break;
    case FLAG_TEXT: snprintf(word, sizeof word, "--%s=--a value", f->name); break;
    case FLAG_SWITCH: snprintf(word, sizeof word, "--%s", f->name); break;
    case FLAG_RUNNERS:
        snprintf(word, sizeof word, "--%s=cpu", f->name);
        argv[k++] = "onednn";
        argv[k++] = "some_plugin:runner";
        break;
    case FLAG_LENGTHS:
        snprintf(word, sizeof word, "--%s=3,4", f->name);
        argv[k++] = "5";
        break;
    case FLAG_PLUGINS:
        snprintf(word, sizeof word, "--%s=a.so", f->name);
        argv[k++] = "b c.so";
        break;
    default: /* the choices */
        snprintf(word, sizeof word, "--%s=%s", f->name, example_choice(f, choice, sizeof choice));
        break;
    }
    argv[k] = NULL;
    return 1;
}

/* ---- --help, from the tables ---- */

static char usage_text[16384];

static void append(size_t *used, const char *fmt, const char *a, const char *b)
{
    if (*used < sizeof usage_text)
        *used += (size_t)snprintf(usage_text + *used, sizeof usage_text - *used, fmt, a, b);
}

/* Every help ends with the exit codes, as base/status.def gives them. */
static const char *exit_codes(size_t *used)
{
    char codes[1024];
    lc_status_exit_codes_text(codes, sizeof codes);
    append(used, "%s%s", "\n", codes);
    return usage_text;
}

/* f's help line for command: its own part where the parts differ by command. */
static const char *flag_help(const cli_flag *f, const char *command, char *buf, size_t n)
{
    if (f->help[0] != '@')
        return f->help;
    const size_t len = strlen(command);
    for (const char *p = f->help; (p = strchr(p, '@')); p++) {
        if (!strncmp(p + 1, command, len) && p[1 + len] == ':') {
            const char *text = p + len + 2 + (p[len + 2] == ' ');
            snprintf(buf, n, "%.*s", (int)strcspn(text, "@"), text);
            return buf;
        }
    }
    return ""; /* unit.cli_help_examples: every command that takes f has its part */
}

/* "Flags also take ..." with one of the command's own flags as the example:
 * --seq-length is also --seqLength and --seq_length. */
static const char *spellings(const char *command, char *buf, size_t n)
{
    const cli_flag *f = NULL;
    for (size_t k = 0; k < NFLAGS && !f; k++)
        if (strchr(flags[k].name, '-') && !(flags[k].marks & MARK_HIDDEN) && takes(&flags[k], command, NULL))
            f = &flags[k];
    if (!f)
        return "";
    char camel[64], snake[64];
    size_t j = 0;
    for (const char *p = f->name; *p && j + 1 < sizeof camel; p++)
        camel[j++] = *p == '-' ? (char)toupper((unsigned char)*++p) : *p;
    camel[j] = '\0';
    snprintf(snake, sizeof snake, "%s", f->name);
    for (char *p = snake; *p; p++)
        *p = *p == '-' ? '_' : *p;
    snprintf(buf, n, "Flags take kebab-case, camelCase and snake_case alike: --%s, --%s, --%s.\n", f->name, camel,
             snake);
    return buf;
}

const char *cli_usage(const char *command)
{
    char subs[64], help[512];
    size_t used = 0;
    const cli_command *c = NULL;
    for (size_t i = 0; command && i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, command))
            c = &commands[i];
    if (!c) {
        append(&used, "%s%s", "usage: lstmcheck <command> [flags]\n       lstmcheck --version\n\ncommands:\n", "");
        for (size_t i = 0; i < NCOMMANDS; i++)
            append(&used, "  %-9s %s\n", commands[i].name, commands[i].summary);
        append(&used, "%s%s", "\nRun 'lstmcheck <command> --help' for its flags.\n", "");
        return exit_codes(&used);
    }
    append(&used, "usage: lstmcheck %s\n%s\n", c->synopsis, c->summary);
    for (size_t k = 0; k < NFLAGS; k++)
        if (!(flags[k].marks & MARK_HIDDEN) &&
            (takes(&flags[k], c->name, NULL) || *subcommands_taking(&flags[k], c->name, subs, sizeof subs)))
            append(&used, "  %-26s %s\n", flags[k].shown, flag_help(&flags[k], c->name, help, sizeof help));
    append(&used, "%s%s", spellings(c->name, help, sizeof help), c->notes);
    append(&used, "%s", "\nExamples:\n", "");
    for (const char *line = c->examples; *line; line += strcspn(line, "\n") + 1) {
        snprintf(help, sizeof help, "%.*s", (int)strcspn(line, "\n"), line);
        append(&used, "  %s\n%s", help, "");
    }
    return exit_codes(&used);
}
