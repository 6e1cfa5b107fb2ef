/* The error channel (see error.h). */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

void lc_error_set(lc_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}
