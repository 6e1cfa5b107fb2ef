/* What the report files share: text made safe for markdown and for SVG
 * (XML), an axis's tick step, and how a report reaches its file (written
 * whole in memory, then atomically to the path, or to stdout for "-"). */
#ifndef LSTMCHECK_MARKUP_H
#define LSTMCHECK_MARKUP_H

#include <stdio.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Text on one line of a markdown table or list, shown as it reads: what a
 * message may quote (a plugin's words, an environment variable, a commit's
 * subject) is no markup. */
void markup_md_text(FILE *f, const char *s);

/* Text as XML character data: its markup characters as entities, control
 * characters and invalid UTF-8 escaped (base/text.h): XML 1.0 has no
 * place for them; bidi controls as \uXXXX, as in markdown. */
void markup_svg_escaped(FILE *f, const char *s);
/* <text x y attrs>text</text> */
void markup_svg_text(FILE *f, double x, double y, const char *attrs, const char *text);
/* The start of an SVG document of that size: its title, a white ground,
 * the title in bold at the top and below it lines (NULL-terminated), 16
 * pixels apart from y = 38. */
void markup_svg_begin(FILE *f, int width, int height, const char *title, const char *const *lines);

/* A tick step of 1, 2 or 5 times a power of ten giving 4 to 10 ticks over span. */
double markup_tick_step(double span);

/* write(f, value) puts the report into a memory stream, which then goes to
 * path atomically, or to stdout for "-". incomplete: the value lost
 * something (out of memory): nothing is written. LC_OK, or LC_ERROR with err. */
typedef void (*report_writer)(FILE *f, const void *value);
lc_status report_emit(const char *path, report_writer write, const void *value, int incomplete, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
