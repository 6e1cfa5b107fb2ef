/* The error channel (see error.h). */
#include "base/error.h"

#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>

void lc_error_set(lc_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char raw[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* what a message quotes (a flag's value, a plugin's words, a path) may
     * hold control characters: escaped, the message stays one safe line */
    text_printable(raw, err->msg, sizeof err->msg);
}
