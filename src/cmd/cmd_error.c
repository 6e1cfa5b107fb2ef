/* How a command says why it stops (see commands.h: cmd_fail). */
#include "cmd/commands.h"

#include "base/json.h"
#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>

lc_status cmd_fail(const cli_options *o, lc_status status, const char *fmt, ...)
{
    char raw[2048], msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    text_printable(raw, msg, sizeof msg); /* one safe line, as lc_error_set makes them */
    fprintf(stderr, "lstmcheck: %s\n", msg);
    if (!o || !cli_wants_json(o))
        return status;
    /* whoever reads stdout asked for JSON: give it JSON, also now */
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    json_object_begin(&w);
    json_member_string(&w, "error", msg);
    json_member_string(&w, "status", lc_status_name(status));
    json_object_end(&w);
    const char *text = json_text(&w, NULL);
    if (text)
        printf("%s\n", text);
    json_free(&w);
    return status;
}
