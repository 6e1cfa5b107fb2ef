/* libFuzzer target: arbitrary command lines through the parser alone
 * (cli_parse, src/cmd/cli.h), which never exits, prints or runs anything.
 * The input is the arguments after argv[0], separated by NUL bytes (the
 * first FUZZ_MAX_ARGS; an empty input is no argument). Besides the
 * sanitizers, the parser's promises are checked: an error has a message on
 * one safe line, and what it accepts is in range. */
#include "cmd/cli.h"

#include "base/text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_ARGS 32

/* abort() with why: libFuzzer reports the input as a crash */
#define REQUIRE(cond, ...)                                                                                        \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            fprintf(stderr, "fuzz_cli: " __VA_ARGS__);                                                            \
            fputc('\n', stderr);                                                                                  \
            abort();                                                                                              \
        }                                                                                                         \
    } while (0)

/* What cli_parse promises about options it accepted. */
static void check_accepted(const cli_options *o)
{
    if (o->help || o->version)
        return; /* --help stops at the command, --version is alone: nothing else is read */
    const lstm_shape *s = &o->shape;
    REQUIRE(o->command, "accepted without a command");
    REQUIRE(s->seq_length >= 1 && s->num_layers >= 1 && s->input_size >= 1 && s->hidden_size >= 1 && s->batch >= 1,
            "accepted a shape with a dimension < 1");
    REQUIRE(o->nrnns >= 0 && o->nrnns <= CLI_MAX_RNNS && o->nplugins >= 0 && o->nplugins <= CLI_MAX_PLUGINS,
            "%d runners, %d plugins", o->nrnns, o->nplugins);
    REQUIRE(!o->nlengths || o->nlengths == s->batch, "%d lengths for a batch of %d", o->nlengths, s->batch);
    for (int i = 0; i < o->nlengths; i++)
        REQUIRE(o->lengths[i] >= 1 && o->lengths[i] <= LSTM_MAX_DIM, "length %d", o->lengths[i]);
    /* a value that is shown or used as a name or path: never empty, printable as it is */
    const char *texts[] = {o->dump_dir, o->trace_path, o->baseline_dir, o->against, o->markdown_path,
                           o->plot_path, o->out_dir, o->shape_set};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        REQUIRE(!texts[i] || (texts[i][0] && !text_find_unprintable(texts[i]) && strlen(texts[i]) <= CLI_VALUE_MAX),
                "accepted the value '%s'", texts[i]);
    for (int i = 0; i < o->nrnns; i++)
        REQUIRE(o->rnns[i][0] && !text_find_unprintable(o->rnns[i]), "accepted the runner '%s'", o->rnns[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy with a NUL after the end: every argument is terminated */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[FUZZ_MAX_ARGS + 2] = {"lstmcheck"};
    int argc = 1;
    for (size_t at = 0; size > 0 && at <= size && argc <= FUZZ_MAX_ARGS; at += strlen(buf + at) + 1)
        argv[argc++] = buf + at;
    argv[argc] = NULL;

    cli_options o;
    lc_error err = {{0}};
    cli_defaults(&o);
    const lc_status rc = cli_parse(argc, argv, &o, &err);
    if (rc == LC_OK) {
        check_accepted(&o);
        if (o.help) /* --help's text comes from the same tables */
            REQUIRE(strlen(cli_usage(o.command)) > 0, "empty usage");
        /* written back through the flag table, it reads as the same options */
        cli_line line = {0};
        const lc_status written = cli_format(&o, &line, &err);
        REQUIRE(written == LC_OK, "accepted options not written back: %s", err.msg);
        cli_line_free(&line);
    } else {
        REQUIRE(rc == LC_BAD_INPUT || rc == LC_ERROR, "status %d", (int)rc);
        REQUIRE(err.msg[0], "refused without a message");
        REQUIRE(!text_find_control(err.msg) && text_utf8_valid(err.msg), "a message that is not one safe line");
    }
    cli_free(&o);
    free(buf);
    return 0;
}
