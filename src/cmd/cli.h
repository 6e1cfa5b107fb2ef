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

/* --device auto (the default): cuda when a CUDA device exists, else cpu. */
#define CLI_DEVICE_AUTO (-1)

typedef struct cli_options {
    const char *command;     /* bench, check, list, baseline, profile */
    const char *subcommand;  /* baseline: update, show, compare */
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
    const char *markdown_path; /* compare: a markdown report here ("-": stdout) */
    const char *plot_path;   /* compare: an SVG plot of the distributions here */
    /* plugins: shared libraries of runners (runners/plugin.h), loaded before any work */
    const char *plugins[CLI_MAX_PLUGINS];
    int nplugins;
    /* profile / trace */
    char tool[8];            /* nsys, ncu, none */
    const char *out_dir;
    const char *trace_path;
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

/* Strict number parsing, 0 on success: the whole string, in [lo, hi].
 * An integer is an optional '-' and decimal digits; a double is digits
 * with an optional '.' and digits (a '-' only where lo < 0). Nothing else:
 * no white space, no '+', no exponent, hex, inf or nan, nothing after it. */
int cli_parse_int(const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* Flag name normalization: "--seqLength", "--seq_length" -> "seq-length". */
void cli_normalize_flag(const char *flag, char *out, size_t n);

const char *cli_usage(const char *command);

#ifdef __cplusplus
}
#endif
#endif
