/* Command-line parsing: the original's flags, spellings, and bad input. */
#include "unit.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/text.h"
#include "cmd/baseline_cmd.h"
#include "cmd/cli.h"
#include "cmd/session.h"

static int parse(cli_options *o, lc_error *err, int argc, const char **argv)
{
    cli_defaults(o);
    return cli_parse(argc, (char **)argv, o, err);
}

int test_cli_flags(void)
{
    cli_options o;
    lc_error err;
    const char *a[] = {"lstmcheck", "bench", "--seqLength", "7", "--num-layers=2", "--input_size", "9",
                       "--hiddenSize", "11", "--miniBatch", "3", "--rnns", "cpu", "ref", "--print-json",
                       "--nloops", "5", "--sep", ",", "--device", "cpu"};
    CHECK(parse(&o, &err, (int)(sizeof a / sizeof a[0]), a) == 0, "%s", err.msg);
    CHECK(o.shape.seq_length == 7 && o.shape.num_layers == 2 && o.shape.input_size == 9 &&
              o.shape.hidden_size == 11 && o.shape.batch == 3, "shape");
    CHECK(o.nrnns == 2 && !strcmp(o.rnns[0], "cpu") && !strcmp(o.rnns[1], "ref"), "rnns");
    CHECK(o.print_json == REPORT_JSON_OSS, "bare --print-json is oss, got %d", o.print_json);
    CHECK(o.nloops == 5 && !strcmp(o.sep, ",") && o.device == LC_DEVICE_CPU, "others");
    cli_free(&o);
    const char *b[] = {"lstmcheck", "bench", "--print-json", "pep", "--lengths", "3,4", "5"};
    CHECK(parse(&o, &err, 7, b) == 0, "%s", err.msg);
    CHECK(o.print_json == REPORT_JSON_PEP && o.nlengths == 3 && o.lengths[2] == 5 && o.shape.batch == 3,
          "pep / lengths");
    cli_free(&o);
    /* 1,401 lengths (past the 4096 bytes a fixed buffer held): every one kept */
    static char many[1401 * 3 + 1];
    size_t k = 0;
    for (int i = 0; i < 1401; i++)
        k += (size_t)snprintf(many + k, sizeof many - k, "%s%d", i ? "," : "", 10 + i % 90);
    const char *c[] = {"lstmcheck", "bench", "--lengths", many};
    CHECK(parse(&o, &err, 4, c) == 0, "%s", err.msg);
    CHECK(o.nlengths == 1401 && o.shape.batch == 1401 && o.lengths[1400] == 10 + 1400 % 90, "%d lengths",
          o.nlengths);
    cli_free(&o);
    /* a value that starts with "--" is written inline; --sep may be a tab */
    const char *d[] = {"lstmcheck", "bench", "--trace=--no-progress", "--sep", "\t"};
    CHECK(parse(&o, &err, 5, d) == 0, "%s", err.msg);
    CHECK(!strcmp(o.trace_path, "--no-progress") && !strcmp(o.sep, "\t"), "inline value / tab");
    cli_free(&o);
    char norm[64];
    cli_normalize_flag("--variable_lstms", norm, sizeof norm);
    CHECK(!strcmp(norm, "variable-lstms"), "%s", norm);
    cli_normalize_flag("--sleepBetweenSeconds", norm, sizeof norm);
    CHECK(!strcmp(norm, "sleep-between-seconds"), "%s", norm);
    return 0;
}

/* Each bad command line gets exit code 2 and a message naming the problem. */
int test_cli_errors(void)
{
    static char longest[CLI_VALUE_MAX + 2]; /* one character too many for any value */
    memset(longest, 'a', sizeof longest - 1);
    struct { const char *argv[6]; int argc; const char *msg; } cases[] = {
        {{"lstmcheck"}, 1, "missing command"},
        {{"lstmcheck", "fly"}, 2, "unknown command"},
        /* a value's error names the flag as the line spells it */
        {{"lstmcheck", "bench", "--seqLength", "0"}, 4, "--seqLength expects an integer"},
        {{"lstmcheck", "bench", "--hiddenSize", "-3"}, 4, "--hiddenSize expects"},
        {{"lstmcheck", "bench", "--mini_batch", "12x"}, 4, "--mini_batch expects"},
        {{"lstmcheck", "bench", "--input-size=99999999999999999999"}, 3, "--input-size expects"},
        {{"lstmcheck", "bench", "--hiddenSize=0"}, 3, "--hiddenSize expects an integer in 1.."},
        {{"lstmcheck", "bench", "--timeBudget", "x"}, 4, "--timeBudget expects seconds"},
        {{"lstmcheck", "--version", "now"}, 3, "--version takes nothing after it"},
        {{"lstmcheck", "bench", "--frobnicate"}, 3, "unknown flag"},
        {{"lstmcheck", "bench", "--device", "tpu"}, 4, "--device"},
        {{"lstmcheck", "bench", "--nloops"}, 3, "needs a value"},
        {{"lstmcheck", "bench", "--print-json", "xml"}, 4, "--print-json"},
        {{"lstmcheck", "bench", "--rnns"}, 3, "at least one"},
        {{"lstmcheck", "list", "--seed", "3"}, 4, "does not apply"},
        {{"lstmcheck", "bench", "--lengths", "3,0"}, 4, "positive"},
        {{"lstmcheck", "bench", "--time-budget", "nan"}, 4, "seconds"},
        {{"lstmcheck", "baseline", "erase"}, 3, "subcommand"},
        {{"lstmcheck", "bench", "stray"}, 3, "unexpected argument"},
        /* strict numbers: the whole argument, nothing strtol would skip */
        {{"lstmcheck", "bench", "--hiddenSize", " 7"}, 4, "--hiddenSize expects"},
        {{"lstmcheck", "bench", "--hiddenSize", "+7"}, 4, "--hiddenSize expects"},
        {{"lstmcheck", "bench", "--hiddenSize", "7 "}, 4, "--hiddenSize expects"},
        {{"lstmcheck", "bench", "--hiddenSize", "\t7"}, 4, "--hiddenSize: a control character"},
        {{"lstmcheck", "bench", "--hiddenSize", ""}, 4, "--hiddenSize has an empty value"},
        {{"lstmcheck", "bench", "--hiddenSize", "0x10"}, 4, "--hiddenSize expects"},
        {{"lstmcheck", "bench", "--time-budget", " 1"}, 4, "seconds"},
        {{"lstmcheck", "bench", "--time-budget", "0x10"}, 4, "seconds"},
        {{"lstmcheck", "bench", "--time-budget", "inf"}, 4, "seconds"},
        /* a flag spelled with more dashes, given twice, or two that set one field */
        {{"lstmcheck", "bench", "----rnns", "cpu"}, 4, "unknown flag '----rnns'"},
        {{"lstmcheck", "bench", "---seqLength", "3"}, 4, "unknown flag"},
        {{"lstmcheck", "bench", "--rnns", "cpu", "--rnns", "cpu"}, 6, "'--rnns' is given twice"},
        {{"lstmcheck", "bench", "--seqLength", "3", "--seq-length=4"}, 5, "'--seqLength' is given twice (again as '--seq-length')"},
        {{"lstmcheck", "bench", "--progress", "--no-progress"}, 4, "exclude each other"},
        {{"lstmcheck", "bench", "--rnns", "cpu", "ref", "cpu"}, 6, "'cpu' is given twice to --rnns"},
        {{"lstmcheck", "bench", "--rnns", "cpu,cpu"}, 4, "separated by spaces, not commas"},
        /* --lengths: no empty items, each within 1..seqLength */
        {{"lstmcheck", "bench", "--lengths", ","}, 4, "empty item"},
        {{"lstmcheck", "bench", "--lengths", ""}, 4, "empty value"},
        {{"lstmcheck", "bench", "--lengths="}, 3, "empty value"},
        {{"lstmcheck", "bench", "--lengths", "3,,2"}, 4, "empty item in '3,,2'"},
        {{"lstmcheck", "bench", "--lengths", "3,"}, 4, "empty item"},
        {{"lstmcheck", "bench", "--lengths", "3, 2"}, 4, "got ' 2'"},
        {{"lstmcheck", "bench", "--lengths", "3,123456789012345678901234567890"}, 4,
         "got '123456789012345678901234567890'"},
        {{"lstmcheck", "bench", "--seqLength", "4", "--lengths", "5,2"}, 6, "exceeds --seqLength 4"},
        {{"lstmcheck", "bench", "--lengths", "3,2", "--miniBatch", "3"}, 6, "gives 2 lengths"},
        {{"lstmcheck", "bench", "--rnns", ""}, 4, "empty value"},
        /* a missing value does not swallow the next flag (--trace --no-progress wrote "--no-progress") */
        {{"lstmcheck", "bench", "--trace", "--no-progress"}, 4, "not the flag '--no-progress'"},
        {{"lstmcheck", "baseline", "show", "--baseline-dir", "--no-progress"}, 5, "--baseline-dir=--no-progress"},
        {{"lstmcheck", "baseline", "compare", "--markdown", "--no-progress"}, 5, "needs a value, not the flag"},
        {{"lstmcheck", "bench", "--dump", "--seqLength", "3"}, 5, "needs a value, not the flag '--seqLength'"},
        {{"lstmcheck", "bench", "--sep", "--print-json"}, 4, "needs a value"},
        /* no empty path or directory (--baseline-dir '' read /cpu-....json), nothing longer than a path */
        {{"lstmcheck", "baseline", "show", "--baseline-dir", ""}, 5, "--baseline-dir has an empty value"},
        {{"lstmcheck", "bench", "--trace="}, 3, "--trace has an empty value"},
        {{"lstmcheck", "baseline", "compare", "--against", longest}, 5, "at most 4095"},
        /* seconds are digits with a decimal point, as the README says */
        {{"lstmcheck", "bench", "--time-budget", "1e3"}, 4, "got '1e3'"},
        {{"lstmcheck", "bench", "--time-budget", "2."}, 4, "got '2.'"},
        {{"lstmcheck", "bench", "--time-budget", ".5"}, 4, "got '.5'"},
        {{"lstmcheck", "bench", "--time-budget", "1-2"}, 4, "got '1-2'"},
        /* control characters: refused, and escaped where the message echoes them */
        {{"lstmcheck", "check", "--rnns", "cp\nu"}, 4, "invalid UTF-8 (byte 2) in 'cp\\nu'"},
        {{"lstmcheck", "bench", "--trace", "t\x1b[31m.json"}, 4, "'t\\x1b[31m.json'"},
        {{"lstmcheck", "bench", "--sep", "\r"}, 4, "control character"},
        {{"lstmcheck", "bench", "--sep", "\xc2\x9b"}, 4, "(byte 0) in '\\u009b'"}, /* a C1 CSI */
        {{"lstmcheck", "bench", "--trace", "t\xff.json"}, 4, "invalid UTF-8 (byte 1) in 't\\xff.json'"},
        /* -h is a flag too, not a file name; seconds have no sign, not even -0 */
        {{"lstmcheck", "bench", "--trace", "-h"}, 4, "not the flag '-h'"},
        {{"lstmcheck", "bench", "--time-budget", "-0"}, 4, "got '-0'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_options o;
        lc_error err = {{0}};
        int rc = parse(&o, &err, cases[i].argc, cases[i].argv);
        CHECK(rc == LC_BAD_INPUT, "case %zu: exit %d", i, rc);
        CHECK(strstr(err.msg, cases[i].msg) != NULL, "case %zu: message '%s' lacks '%s'", i, err.msg,
              cases[i].msg);
        CHECK(text_find_control(err.msg) == NULL, "case %zu: a control character in the message", i);
        cli_free(&o);
    }
    return 0;
}

/* A parse error under --json or --print-json, wherever on the line, is
 * told as JSON too (cmd_fail reads cli_wants_json). */
int test_cli_json_after_error(void)
{
    struct { const char *argv[5]; int argc; int json; } cases[] = {
        {{"lstmcheck", "baseline", "show", "--json", "--bogus"}, 5, 1},
        {{"lstmcheck", "baseline", "show", "--bogus", "--json"}, 5, 1},
        {{"lstmcheck", "bench", "--print-json", "--rnns"}, 4, 1},
        {{"lstmcheck", "bench", "--rnns", "a,b", "--print-json=pep"}, 5, 1},
        {{"lstmcheck", "bench", "--bogus"}, 3, 0},
        {{"lstmcheck", "bench", "--trace=--json", "--bogus"}, 4, 0}, /* a value, not the flag */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_options o;
        lc_error err = {{0}};
        CHECK(parse(&o, &err, cases[i].argc, cases[i].argv) == LC_BAD_INPUT, "case %zu: parsed", i);
        CHECK(cli_wants_json(&o) == cases[i].json, "case %zu: wants JSON %d", i, cli_wants_json(&o));
        cli_free(&o);
    }
    return 0;
}

/* Entries of dir besides . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* Output paths are checked before any work, and the check leaves nothing. */
int test_cli_output_paths(void)
{
    char dir[] = "/tmp/lstmcheck-paths-XXXXXX", path[128], file[128];
    lc_error err = {{0}};
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/new/deeper", dir);
    snprintf(file, sizeof file, "%s/f", dir);
    CHECK(path_check_writable_dir(dir, 0, &err) == LC_OK, "%s", err.msg);
    CHECK(path_check_writable_dir(path, 1, &err) == LC_OK, "%s", err.msg);
    CHECK(path_check_writable_dir(path, 0, &err) == LC_BAD_INPUT, "must exist");
    CHECK(entries(dir) == 0, "the checks left something in %s", dir);
    FILE *f = fopen(file, "w");
    CHECK(f && fclose(f) == 0, "a file");
    CHECK(path_check_writable_dir(file, 1, &err) == LC_BAD_INPUT && strstr(err.msg, "not a directory"), "%s",
          err.msg);
    snprintf(path, sizeof path, "%s/f/sub", dir);
    CHECK(path_check_writable_dir(path, 1, &err) == LC_BAD_INPUT, "under a file");
    CHECK(path_check_writable_file(path, &err) == LC_BAD_INPUT, "a file under a file");
    CHECK(path_check_writable_file(dir, &err) == LC_BAD_INPUT, "a directory as a file");
    CHECK(path_check_writable_dir("/proc/x/y", 1, &err) == LC_BAD_INPUT, "/proc");
    /* a device or FIFO would be replaced by the rename, not written to */
    CHECK(path_check_writable_file("/dev/null", &err) == LC_BAD_INPUT && strstr(err.msg, "not a regular file"),
          "/dev/null: %s", err.msg);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0 && path_check_writable_file(path, &err) == LC_BAD_INPUT, "a FIFO: %s", err.msg);
    /* nor a link to one (as root, /dev/stdout would go); a link to a file is replaced itself */
    snprintf(file, sizeof file, "%s/link", dir);
    CHECK(symlink(path, file) == 0 && path_check_writable_file(file, &err) == LC_BAD_INPUT &&
              strstr(err.msg, "a link to something that is not a regular file"), "a link to a FIFO: %s", err.msg);
    unlink(file);
    unlink(path);
    snprintf(file, sizeof file, "%s/f", dir);
    CHECK(symlink(file, path) == 0 && path_check_writable_file(path, &err) == LC_OK, "a link to a file: %s", err.msg);
    unlink(path);
    unlink(file);
    /* a name whose temporary name (<name>.tmp.<pid>.<12 characters>) would not fit a folder's entry */
    char longest[300];
    snprintf(longest, sizeof longest, "%s/%0227d", dir, 0);
    CHECK(path_check_writable_file(longest, &err) == LC_OK, "%s", err.msg);
    snprintf(longest, sizeof longest, "%s/%0228d", dir, 0);
    CHECK(path_check_writable_file(longest, &err) == LC_BAD_INPUT && strstr(err.msg, "at most 227"), "%s", err.msg);
    /* --dump "" was <empty>/cpu: the root directory */
    cli_options o;
    cli_defaults(&o);
    o.command = "bench";
    o.dump_dir = "";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--dump '': an empty path"), "%s",
          err.msg);
    /* every output of the table, each error naming its flag and path */
    o.dump_dir = "/dev/null/d";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--dump '/dev/null/d'"), "%s",
          err.msg);
    o.dump_dir = NULL;
    o.trace_path = "/nonexistent-lstmcheck/t.json";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--trace '/nonexistent-lstmcheck/t.json'"),
          "%s", err.msg);
    /* one place, however spelled, made yet or not; one inside the other's folder */
    static const char *const one_place[][2] = {
        {"/tmp/./lstmcheck-one-place", "/tmp/lstmcheck-one-place"},
        {"/tmp/lstmcheck-one-place/", "/tmp/lstmcheck-one-place"},
        {"/tmp/lstmcheck-one-place/.", "/tmp//lstmcheck-one-place"},
        {"/tmp/lstmcheck-no/../lstmcheck-one-place", "/tmp/lstmcheck-one-place"},
        {"/tmp", "/tmp/"},
    };
    for (size_t i = 0; i < sizeof one_place / sizeof one_place[0]; i++) {
        o.dump_dir = one_place[i][0];
        o.trace_path = one_place[i][1];
        CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "name one place"), "%s / %s: %s",
              one_place[i][0], one_place[i][1], err.msg);
    }
    o.dump_dir = dir; /* exists */
    snprintf(path, sizeof path, "%s/./index.json", dir);
    o.trace_path = path;
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "is inside --dump's folder"), "%s",
          err.msg);
    o.dump_dir = "/tmp/lstmcheck-not-made/d/";
    o.trace_path = "/tmp/lstmcheck-not-made/d/sub/t.json";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "is inside --dump's folder"), "%s",
          err.msg);
    CHECK(!path_within("/tmp/lstmcheck-a", "/tmp/lstmcheck-ab/t.json") && !path_within("/tmp/x", "/tmp/x/") &&
              path_within("/", "/tmp") && path_within(".", "t.json"), "path_within");
    /* a folder given as a link to it: what lies in the folder lies in the link's folder */
    snprintf(path, sizeof path, "%s-link", dir);
    snprintf(file, sizeof file, "%s/x.csv", dir);
    CHECK(symlink(dir, path) == 0 && path_within(path, file), "through a link to the folder");
    unlink(path);
    o.dump_dir = "-";
    o.trace_path = NULL;
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--dump '-': needs a folder name"),
          "%s", err.msg);
    cli_defaults(&o);
    o.command = "baseline";
    o.subcommand = "compare";
    o.markdown_path = "-";
    CHECK(session_check_outputs(&o, &err) == LC_OK, "markdown to stdout: %s", err.msg);
    o.plot_path = "-";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--plot '-': needs a file name"), "%s",
          err.msg);
    o.markdown_path = "/nonexistent-lstmcheck/r.md";
    o.plot_path = NULL;
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--markdown '/nonexistent-lstmcheck/r.md'"),
          "%s", err.msg);
    o.markdown_path = "/tmp/lstmcheck-r.md";
    o.plot_path = "/tmp/./lstmcheck-r.md";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--markdown and --plot name one place"),
          "%s", err.msg);
    /* profile's folder is made where missing, and not checked where --trace names the file */
    cli_defaults(&o);
    o.command = "profile";
    snprintf(path, sizeof path, "%s/made/deeper", dir);
    o.out_dir = path;
    CHECK(session_check_outputs(&o, &err) == LC_OK, "%s", err.msg);
    o.out_dir = "/dev/null/d";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--out-dir '/dev/null/d'"), "%s",
          err.msg);
    o.trace_path = "/tmp/lstmcheck-t.json";
    CHECK(session_check_outputs(&o, &err) == LC_OK, "--out-dir unused beside --trace: %s", err.msg);
    CHECK(entries(dir) == 0 && rmdir(dir) == 0, "the checks left something in %s", dir);
    /* show and compare read: a missing directory is "no baseline", not bad input */
    cli_defaults(&o);
    o.command = "baseline";
    o.subcommand = "show";
    o.baseline_dir = "/proc/no/baselines";
    CHECK(session_check_outputs(&o, &err) == LC_OK, "%s", err.msg);
    o.subcommand = "update";
    CHECK(session_check_outputs(&o, &err) == LC_BAD_INPUT && strstr(err.msg, "--baseline-dir"), "%s", err.msg);
    return 0;
}

/* o written by cli_format and parsed again gives o: 0, else why in err. */
static int round_trip(const cli_options *o, lc_error *err)
{
    cli_line line = {0};
    int bad = cli_format(o, &line, err) != LC_OK;
    if (!bad) { /* cli_format checks its own reading back; this one reads it independently */
        const char **argv = malloc((size_t)(line.n + 2) * sizeof *argv);
        argv[0] = "lstmcheck";
        for (int i = 0; i <= line.n; i++)
            argv[i + 1] = line.words[i];
        cli_options back;
        bad = parse(&back, err, line.n + 1, argv) != LC_OK || !cli_options_same(o, &back);
        if (bad && !err->msg[0])
            lc_error_set(err, "the line written gives other options");
        cli_free(&back);
        free(argv);
    }
    cli_line_free(&line);
    return bad;
}

static int argc_of(const char *const *argv)
{
    int n = 0;
    while (argv[n])
        n++;
    return n;
}

/* Every flag of the table, alone and with every other flag of its command:
 * parse, write back (cli_format), parse again: the same options. */
int test_cli_format_round_trip(void)
{
    const char *ex[8];
    int flags = 0;
    for (int i = 0; cli_flag_example(i, ex); i++, flags++) {
        cli_options o, d;
        lc_error err = {{0}};
        CHECK(parse(&o, &err, argc_of(ex), ex) == LC_OK, "example of %s: %s", ex[2], err.msg);
        const char *bare[] = {"lstmcheck", ex[1]};
        CHECK(parse(&d, &err, 2, bare) == LC_OK, "%s", err.msg);
        CHECK(!cli_options_same(&o, &d), "%s %s sets nothing the comparison sees", ex[1], ex[2]);
        CHECK(!round_trip(&o, &err), "%s %s: %s", ex[1], ex[2], err.msg);
        cli_free(&o);
        cli_free(&d);
    }
    CHECK(flags > 30, "%d flags", flags);
    /* every flag a command line takes at once, but those that exclude another;
     * each flag of the table in one of the lines at least */
    static const char *const lines[][2] = {{"bench", NULL},      {"check", NULL},          {"list", NULL},
                                           {"baseline", "update"}, {"baseline", "show"}, {"baseline", "compare"},
                                           {"baseline", "history"}, {"profile", NULL}};
    int in_a_line[128] = {0};
    const size_t nlines = sizeof lines / sizeof lines[0];
    for (size_t c = 0; c < 2 * nlines; c++) { /* each line twice: the second with the flags left out before */
        const char *const *line = lines[c % nlines];
        const char *argv[256] = {"lstmcheck", line[0], line[1]};
        static char pool[256][128]; /* the examples' words are static: copied */
        int argc = line[1] ? 3 : 2;
        for (int i = 0; cli_flag_example(i, ex) && i < 128 && argc + 6 < 256; i++) {
            if (c >= nlines && in_a_line[i])
                continue;
            int k = 2;
            while (ex[k] && strncmp(ex[k], "--", 2))
                k++; /* past the command and subcommand: the flag's words */
            if (!strcmp(ex[k], "--help"))
                continue; /* no command line to read back beside it */
            const int before = argc;
            for (; ex[k]; k++, argc++)
                argv[argc] = strcpy(pool[argc], ex[k]);
            cli_options o;
            lc_error err = {{0}};
            if (parse(&o, &err, argc, argv) != LC_OK)
                argc = before; /* another command's, or excludes one taken (--no-progress, --variable-lstms) */
            else
                in_a_line[i] = 1;
            cli_free(&o);
        }
        cli_options o;
        lc_error err = {{0}};
        CHECK(parse(&o, &err, argc, argv) == LC_OK, "%s", err.msg);
        CHECK(!round_trip(&o, &err), "every flag of %s %s: %s", line[0], line[1] ? line[1] : "", err.msg);
        cli_free(&o);
    }
    for (int i = 0; cli_flag_example(i, ex); i++)
        CHECK(in_a_line[i] || !strcmp(ex[argc_of(ex) - 1], "--help"), "%s in no line written back", ex[2]);
    cli_options o;
    lc_error err = {{0}};
    /* --version alone writes back as itself (found by fuzz.cli) */
    const char *version[] = {"lstmcheck", "--version"};
    CHECK(parse(&o, &err, 2, version) == LC_OK && o.version && !o.command, "%s", err.msg);
    CHECK(!round_trip(&o, &err), "--version: %s", err.msg);
    cli_free(&o);
    /* the shape, given at its default values, stays given: a child of
     * `baseline` must measure that shape, not every shape set */
    const char *given[] = {"lstmcheck", "baseline", "update", "--seqLength", "100"};
    CHECK(parse(&o, &err, 5, given) == LC_OK && o.shape_given && !o.batch_given, "%s", err.msg);
    CHECK(!round_trip(&o, &err), "%s", err.msg);
    cli_free(&o);
    /* lengths set the batch: it is not written, so it stays not given */
    const char *lengths[] = {"lstmcheck", "bench", "--seqLength", "100", "--lengths", "3,4"};
    CHECK(parse(&o, &err, 6, lengths) == LC_OK && o.shape_given && !o.batch_given, "%s", err.msg);
    CHECK(!round_trip(&o, &err), "%s", err.msg);
    cli_free(&o);
    /* a child of another subcommand: what it does not take is set back, the rest is kept */
    const char *compare[] = {"lstmcheck", "baseline", "compare", "--json", "--markdown", "r.md", "--against", "HEAD",
                             "--seed", "5", "--time-budget", "2.5"};
    CHECK(parse(&o, &err, 12, compare) == LC_OK, "%s", err.msg);
    o.subcommand = "update";
    cli_drop_not_taken(&o);
    CHECK(!o.json && !o.markdown_path && !o.against && o.seed == 5 && o.time_budget_s == 2.5, "dropped");
    CHECK(!round_trip(&o, &err), "%s", err.msg);
    cli_free(&o);
    /* a field the command does not take is refused, not dropped */
    cli_defaults(&o);
    o.command = "profile";
    o.markdown_path = "report.md";
    cli_line line = {0};
    CHECK(cli_format(&o, &line, &err) == LC_BAD_INPUT && strstr(err.msg, "--markdown"), "%s", err.msg);
    cli_line_free(&line);
    /* an exact subnormal was read (strtod calls it no range error) and no
     * shorter digits read back to it: refused, as every subnormal */
    static char tiny[1200];
    snprintf(tiny, sizeof tiny, "%.1074f", 4.9406564584124654e-324);
    const char *subnormal[] = {"lstmcheck", "bench", "--time-budget", tiny};
    CHECK(parse(&o, &err, 4, subnormal) == LC_BAD_INPUT && strstr(err.msg, "--time-budget"), "a subnormal read");
    cli_free(&o);
    /* a value the flag could not take back is refused */
    cli_defaults(&o);
    o.command = "bench";
    o.nloops = -3;
    CHECK(cli_format(&o, &line, &err) == LC_BAD_INPUT, "nloops -3 written");
    cli_line_free(&line);
    return 0;
}

/* cli_parse on random command lines (as a fuzzer would call it): it only
 * parses: it returns ok or bad input (out of memory aside) with a one-line
 * message, and prints, exits and does nothing else. */
int test_cli_parse_random(void)
{
    static const char *const words[] = {
        "bench", "check", "list", "baseline", "profile", "update", "show", "compare", "--rnns", "cpu", "ref",
        "cpu,ref", "--lengths", "3,4", ",", "3,,2", "", " 7", "7", "-1", "+7", "99999999999999999999",
        "--seqLength", "--seq-length=2", "--miniBatch", "--hiddenSize=", "--device", "cuda", "auto", "--json",
        "--dump", "--trace", "--plugin", "x.so", "----rnns", "--", "-h", "--help", "--print-json", "pep",
        "--progress", "--no-progress", "--time-budget", "1e3", "nan", "--tool", "nsys", "--seed", "=", "-",
    };
    const int nwords = (int)(sizeof words / sizeof words[0]);
    unsigned long long x = 88172645463325252ull; /* xorshift: the same lines every run */
    int ok = 0;
    for (int run = 0; run < 20000; run++) {
        char *argv[12] = {"lstmcheck"};
        int argc = 1;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const int n = 1 + (int)(x % 10);
        for (int k = 0; k < n; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            argv[argc++] = (char *)words[x % (unsigned long long)nwords];
        }
        cli_options o;
        lc_error err = {{0}};
        cli_defaults(&o);
        const lc_status rc = cli_parse(argc, argv, &o, &err);
        CHECK(rc == LC_OK || (rc == LC_BAD_INPUT && err.msg[0] && !strchr(err.msg, '\n')), "run %d: %d '%s'", run,
              rc, err.msg);
        ok += rc == LC_OK;
        CHECK(rc != LC_OK || !round_trip(&o, &err), "run %d: written back: %s", run, err.msg);
        cli_free(&o);
    }
    CHECK(ok > 100 && ok < 19900, "%d of 20000 parsed: the lines must mix good and bad", ok);
    return 0;
}

/* The exit codes scripts depend on (README, every --help): their values,
 * how a child's code reads back, which wins when several apply, and the
 * text every help ends with. */
int test_status_exit_codes(void)
{
    static const struct {
        lc_status s;
        int code;
    } fixed[] = {{LC_OK, 0}, {LC_FAILED, 1}, {LC_BAD_INPUT, 2}, {LC_UNSUPPORTED, 3}, {LC_MISSING, 3}, {LC_ERROR, 4}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        CHECK(lc_status_exit_code(fixed[i].s) == fixed[i].code, "%s: exit %d", lc_status_name(fixed[i].s),
              lc_status_exit_code(fixed[i].s));
        CHECK(lc_status_exit_code(lc_status_from_exit_code(fixed[i].code)) == fixed[i].code, "code %d reads back",
              fixed[i].code);
    }
    CHECK(lc_status_from_exit_code(3) == LC_UNSUPPORTED && lc_status_from_exit_code(139) == LC_ERROR &&
              lc_status_from_exit_code(-1) == LC_ERROR,
          "3: %s; 139 (a crash): %s", lc_status_name(lc_status_from_exit_code(3)),
          lc_status_name(lc_status_from_exit_code(139)));
    const lc_status order[] = {LC_OK, LC_UNSUPPORTED, LC_FAILED, LC_ERROR, LC_BAD_INPUT}; /* weakest first */
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            CHECK(lc_status_worse(order[a], order[b]) == order[a > b ? a : b], "worse(%s, %s) = %s",
                  lc_status_name(order[a]), lc_status_name(order[b]),
                  lc_status_name(lc_status_worse(order[a], order[b])));
    char codes[1024];
    lc_status_exit_codes_text(codes, sizeof codes);
    CHECK(strstr(codes, "the first of 2, 4, 1, 3 ") && strstr(codes, "\n  4  something broke") &&
              !strstr(codes, "missing"),
          "%s", codes);
    const char *commands[] = {NULL, "bench", "check", "list", "baseline", "profile"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *usage = cli_usage(commands[i]);
        const size_t n = strlen(usage), k = strlen(codes);
        CHECK(n > k && !strcmp(usage + n - k, codes), "%s --help does not end with the exit codes",
              commands[i] ? commands[i] : "lstmcheck");
    }
    return 0;
}

/* Every command's --help: its examples parse as written, every flag line has
 * its text (a flag whose text differs by command has this command's part),
 * and no internal flag is shown. */
int test_cli_help_examples(void)
{
    const char *commands[] = {"bench", "check", "list", "baseline", "profile"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char usage[16384];
        snprintf(usage, sizeof usage, "%s", cli_usage(commands[i]));
        CHECK(!strstr(usage, "--internal-run") && !strchr(usage, '@'), "%s --help shows an internal text:\n%s",
              commands[i], usage);
        const char *ex = strstr(usage, "\nExamples:\n");
        CHECK(ex, "%s --help has no examples", commands[i]);
        int examples = 0;
        for (const char *line = ex + 11; !strncmp(line, "  lstmcheck ", 12); line = strchr(line, '\n') + 1) {
            char text[512], *argv[32];
            int argc = 0;
            snprintf(text, sizeof text, "%.*s", (int)strcspn(line + 2, "\n"), line + 2);
            for (char *w = strtok(text, " "); w && argc < 31; w = strtok(NULL, " "))
                argv[argc++] = w;
            argv[argc] = NULL;
            cli_options o;
            lc_error err = {{0}};
            cli_defaults(&o);
            const lc_status rc = cli_parse(argc, argv, &o, &err);
            CHECK(rc == LC_OK && !strcmp(o.command, commands[i]), "%s's example '%.*s' does not parse: %s",
                  commands[i], (int)strcspn(line, "\n"), line, err.msg);
            cli_free(&o);
            examples++;
        }
        CHECK(examples >= 2, "%s --help has %d examples", commands[i], examples);
        for (const char *line = usage; (line = strstr(line, "\n  --")); line++) {
            const char *end = line + 1 + strcspn(line + 1, "\n");
            CHECK(end - line > 30 && line[29] == ' ' && line[30] != ' ', "%s --help: a flag without its text: %.*s",
                  commands[i], (int)(end - line - 1), line + 1);
        }
    }
    CHECK(strstr(cli_usage("bench"), "  --nloops N                 timed iterations (default 100)\n") &&
              strstr(cli_usage("profile"), "  --nloops N                 profiled iterations (default 5)\n"),
          "--nloops: each command's own text");
    return 0;
}

/* baseline's measuring flags reach its settings, each as its --help says:
 * --time-budget a round's budget (it was taken and never used), --warmup,
 * --nloops the most samples of a round. */
int test_cli_baseline_settings(void)
{
    cli_options o;
    lc_error err = {{0}};
    cli_defaults(&o);
    const char *argv[] = {"lstmcheck", "baseline", "update", "--time-budget", "2.5", "--warmup", "4", "--nloops", "9"};
    CHECK(cli_parse(9, (char **)argv, &o, &err) == LC_OK, "%s", err.msg);
    perf_settings s, d;
    baseline_settings_from(&o, LC_DEVICE_CPU, &s);
    perf_default_settings(LC_DEVICE_CPU, &d);
    CHECK(s.round_budget_s == 2.5 && s.warmup == 4 && s.max_samples == 9 && s.min_samples == 9,
          "round budget %g, warmup %d, samples %d..%d", s.round_budget_s, s.warmup, s.min_samples, s.max_samples);
    cli_free(&o);
    cli_defaults(&o);
    baseline_settings_from(&o, LC_DEVICE_CPU, &s);
    CHECK(s.round_budget_s == d.round_budget_s && s.warmup == d.warmup && s.max_samples == d.max_samples,
          "without the flags, the device's defaults");
    return 0;
}
