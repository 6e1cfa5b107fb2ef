/* Command-line parsing for `lstmcheck`. Flags follow the original
 * bench.py (--seqLength ...); kebab-case and snake_case spellings are
 * accepted too (--seq-length, --seq_length), always with exactly two
 * dashes. Each flag is given once (--plugin is repeatable); list flags
 * take several values after one flag (--rnns a b, --lengths 3,4 5).
 * Parsing never exits: errors come back as one line and usage exit code 2. */
#ifndef LSTMCHECK_CLI_H
#define LSTMCHECK_CLI_H

#include "device/device.h"
#include "model/lstm.h"
#include "report/report.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLI_MAX_RNNS 64
#define CLI_MAX_PLUGINS 16
/* the longest value of a flag: a path (PATH_MAX less its NUL) */
#define CLI_VALUE_MAX 4095
/* the most seconds a flag takes (--time-budget, --max-seconds, ...) */
#define CLI_MAX_SECONDS 1000000

/* --child-timeout's default, in seconds, where no budget is larger: far
 * above any call of a correct runner at a shape a machine holds (the
 * reference's forward and backward at the default shape take 9-10 s on one
 * core), and a hang still ends a CI job long before its own limit. */
#define CLI_CHILD_TIMEOUT_S 300

/* The commands' own defaults for the measuring flags (--help quotes them):
 * the original's bench.py and profile.py, and a time budget per runner on a
 * CPU (the reference alone takes about 15 s an iteration at the default
 * shape on 2 cores). baseline's are perf/perf.h's. */
#define CLI_BENCH_WARMUP 10
#define CLI_BENCH_NLOOPS 100
#define CLI_BENCH_CPU_BUDGET_S 30
#define CLI_PROFILE_NLOOPS 5

/* --device auto (the default): cuda when a CUDA device exists, else cpu. */
#define CLI_DEVICE_AUTO (-1)

typedef struct cli_options {
    const char *command;     /* bench, check, list, baseline, profile */
    const char *subcommand;  /* baseline: update, show, compare, history (cli_baseline_subcommands) */
    lstm_shape shape;
    int batch_given;
    int shape_given;         /* any of the five shape flags was given */
    const char *shape_set;   /* baseline: a named shape set of the perf matrix */
    int warmup, nloops;      /* -1 / 0: the command's default */
    int device;              /* an lc_device, or CLI_DEVICE_AUTO */
    const char *rnns[CLI_MAX_RNNS];
    int nrnns;
    int variable_lstms;
    int *lengths;            /* --lengths (malloc'ed), nlengths entries */
    int nlengths;
    const char *sep;
    report_json_format print_json; /* REPORT_JSON_NONE without --print-json */
    uint64_t seed;
    double time_budget_s;    /* < 0: the device's default */
    const char *dump_dir;
    int help;
    int version;             /* lstmcheck --version */
    int names_only;          /* list --names */
    int progress;            /* -1 auto (stderr is a terminal), 0 off, 1 on */
    /* baseline / perf */
    const char *baseline_dir;
    int json;
    double max_seconds;      /* perf: budget for one comparison */
    double child_timeout_s;  /* < 0: the default (cmd/session.h: session_child_timeout) */
    const char *against;     /* compare: A/B against this revision */
    int ab;                  /* compare: A/B even where this machine has a baseline */
    int allow_dirty;         /* update: record a modified tree (marked not reproducible) */
    int keep_going;          /* update: record what passed when other runners fail */
    const char *markdown_path; /* compare, history: a markdown report here ("-": stdout) */
    const char *plot_path;   /* compare, history: an SVG plot here */
    const char *baseline_file; /* history: this baseline file instead of this machine's */
    /* plugins: shared libraries of runners (runners/plugin.h), loaded before any work */
    const char *plugins[CLI_MAX_PLUGINS];
    int nplugins;
    /* profile / trace */
    char tool[8];            /* nsys, ncu, none */
    const char *out_dir;
    const char *trace_path;
    const char *csv_path;    /* profile, bench --trace: the table of operations as CSV here */
    double sleep_between_s;
    int internal_run;        /* profile: run the runners here (the re-executed child) */
} cli_options;

/* "auto", or the device's name. */
const char *cli_device_name(int device);

void cli_defaults(cli_options *o);
void cli_free(cli_options *o);

/* argv (argv[0] the program, argv[1] the command) into o, which
 * cli_defaults() prepared: LC_OK; LC_BAD_INPUT with a one-line message in
 * err; LC_ERROR when out of memory. It only parses: it never exits,
 * prints, touches files or devices, or loads anything, so a fuzzer can
 * call it alone; checks that need the machine (paths, memory, runners)
 * come after it (cmd/session.h). o's strings point into argv; cli_free(o)
 * after, whatever it returned. */
lc_status cli_parse(int argc, char **argv, cli_options *o, lc_error *err);
/* 1 when stdout is to be JSON (baseline --json, bench --print-json); after
 * a parse error, when either was anywhere on the command line. */
int cli_wants_json(const cli_options *o);

/* An output path a command line writes: its flag's name, the path (NULL:
 * the flag's default place, which the caller knows), and how. */
typedef struct cli_output {
    const char *flag;
    const char *path;
    int is_dir;    /* a folder written into, made where missing; else a file */
    int stdout_ok; /* '-' is stdout */
    int holds_others; /* a folder given one file of its own naming (profile's prof_...): others may be in it */
} cli_output;
/* The outputs o's command writes, from the flag table's output marks, into
 * out (at most max); how many. Checked before any work (cmd/session.h). */
int cli_outputs(const cli_options *o, cli_output *out, int max);
#define CLI_MAX_OUTPUTS 8

/* A command line being built: words, NULL-terminated, each its own
 * allocation (cli_line_free frees them). */
typedef struct cli_line {
    char **words;
    int n, cap;
} cli_line;
/* Append a word (copied); LC_ERROR when out of memory. */
lc_status cli_line_add(cli_line *line, const char *word, lc_error *err);
void cli_line_free(cli_line *line);

/* The command line that gives o back: o's command (and subcommand), then
 * through the flag table each flag whose field differs from cli_defaults
 * (shape flags also where the shape was given), appended to line without
 * the program's name. cli_parse of it gives o again (cli_options_same);
 * so a child command is o's copy with what the child changes, written
 * here, and no flag is left behind. LC_BAD_INPUT when a field differs
 * that o's command does not take (the child would lose it), or a value
 * cannot be written back. */
lc_status cli_format(const cli_options *o, cli_line *line, lc_error *err);
/* Every field of o that its command (and subcommand) does not take, set
 * back to its default: a child of another subcommand is o's copy, its
 * subcommand changed, then this (a list array is left to its owner). */
void cli_drop_not_taken(cli_options *o);
/* 1 when a and b say the same: command, subcommand, every field of the
 * flag table and what the parser derives (shape and batch given). */
int cli_options_same(const cli_options *a, const cli_options *b);
/* For tests: a command line that gives the i-th flag of the table a value
 * other than its default, {"lstmcheck", command, flag[, values]..., NULL}
 * into argv (at most 8 words; the strings are static); 0 past the last
 * flag. */
int cli_flag_example(int i, const char *argv[8]);

/* Strict number parsing, 0 on success: the whole string, in [lo, hi].
 * An integer is an optional '-' and decimal digits; a double is digits
 * with an optional '.' and digits (a '-' only where lo < 0). Nothing else:
 * no white space, no '+', no exponent, hex, inf or nan, nothing after it. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* Flag name normalization: "--seqLength", "--seq_length" -> "seq-length". */
void cli_normalize_flag(const char *flag, char *out, size_t n);

const char *cli_usage(const char *command);
/* The baseline subcommands, as a message lists them: "update, show, ...". */
const char *cli_baseline_subcommands(void);

#ifdef __cplusplus
}
#endif
#endif
