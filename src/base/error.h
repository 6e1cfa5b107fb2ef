/* The one error channel of the library: a message that travels up to the
 * command, which prints it on one line. Library code never exits. */
#ifndef LSTMCHECK_ERROR_H
#define LSTMCHECK_ERROR_H

#include "base/status.h"
#include "lstmcheck/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runner ABI's error (include/lstmcheck/runner.h) under its short
 * name: runners, built in or loaded, report through the same channel. */
typedef lstmcheck_error lc_error;

/* Set err (when not NULL) to the formatted one-line message, with any
 * control character or invalid UTF-8 in it escaped (base/text.h). */
void lc_error_set(lc_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
