/* lstmcheck: the command-line entry. Each command lives in cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "base/proc.h"
#include "build_commit.h" /* generated at every build: cmake/build_commit.cmake */
#include "check/isolate.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/session.h"
#include "runners/faults.h"

/* --plugin: every plugin loaded, or the command refused before any work. */
/* The end of every command that got past parsing: its exit code. What
 * stdout could not take is lost output: an error, whatever the command
 * decided (a JSON document cut short must not read as a verdict). */
static int finish(cli_options *o, lc_status rc)
{
    cli_free(o);
    if (proc_own_output_done()) { /* a plugin's exit handlers run after this */
        fprintf(stderr, "lstmcheck: standard output could not be written: what this command printed there is "
                        "lost or cut short\n");
        rc = lc_status_worse(rc, LC_ERROR);
    }
    return lc_status_exit_code(rc);
}

static lc_status load_plugins(const cli_options *o)
{
    lc_error err = {{0}};
    for (int i = 0; i < o->nplugins; i++) {
        lc_status rc = isolate_plugin_load(o->plugins[i], &err);
        if (rc)
            return cmd_fail(o, rc, "%s", err.msg);
    }
    return LC_OK;
}

int main(int argc, char **argv)
{
    proc_keep_standard_fds(); /* before anything opens a file */
    cli_options o;
    lc_error err = {{0}};
    cli_defaults(&o);
#ifdef LSTMCHECK_FAULTS
    /* the test build (tests/perf: lstmcheck_faults) */
    if (lstm_faults_from_env(err.msg, sizeof err.msg)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return lc_status_exit_code(LC_BAD_INPUT);
    }
#endif
    lc_status rc = cli_parse(argc, argv, &o, &err);
    if (rc) {
        cmd_fail(&o, rc, "%s", err.msg);
        cli_free(&o);
        return lc_status_exit_code(rc);
    }
    session_set_built_from(LSTMCHECK_BUILD_COMMIT);
    if (o.version)
        return finish(&o, cmd_version());
    if (o.help) {
        fputs(cli_usage(o.command), stdout);
        return finish(&o, LC_OK);
    }
    proc_set_child_timeout(session_child_timeout(&o)); /* before the first child: loading a plugin */
    if ((rc = session_check_outputs(&o, &err))) {
        cmd_fail(&o, rc, "%s", err.msg);
        return finish(&o, rc);
    }
    if ((rc = load_plugins(&o)))
        return finish(&o, rc);
    if (!strcmp(o.command, "list")) rc = cmd_list(&o);
    else if (!strcmp(o.command, "check")) rc = cmd_check(&o);
    else if (!strcmp(o.command, "bench")) rc = cmd_bench(&o);
    else if (!strcmp(o.command, "baseline")) rc = cmd_baseline(&o);
    else rc = cmd_profile(&o);
    return finish(&o, rc);
}
