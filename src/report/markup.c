/* What the report files share (see markup.h). */
#include "report/markup.h"

#include "base/files.h"
#include "base/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The code point of the 3-byte character at s when it is a bidirectional
 * embedding, override or isolate (U+202A..U+202E, U+2066..U+2069), else 0:
 * shown, they reorder the text around them. */
static unsigned bidi_control(const unsigned char *s)
{
    const unsigned cp = (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ? cp : 0;
}

/* HTML's characters become entities, markdown's are escaped ('|' would end
 * a cell; '~' strikes through, '$' starts math, '@' mentions someone where
 * the report is posted), and control characters, bidi controls or invalid
 * UTF-8 are shown escaped. */
void markup_md_text(FILE *f, const char *s)
{
    char esc[TEXT_ESCAPE_MAX];
    while (*s) {
        const int n = text_char(s, esc);
        if (esc[0])
            fputs(esc, f); /* "\x1b" shows as it is: '\' escapes punctuation only */
        else if (n == 3 && bidi_control((const unsigned char *)s))
            fprintf(f, "\\u%04x", bidi_control((const unsigned char *)s));
        else if (*s == '<' || *s == '>' || *s == '&')
            fputs(*s == '<' ? "&lt;" : *s == '>' ? "&gt;" : "&amp;", f);
        else if (n == 1 && strchr("\\|`*_[]#!~$@", *s))
            fprintf(f, "\\%c", *s);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
}

void markup_svg_escaped(FILE *f, const char *s)
{
    char esc[TEXT_ESCAPE_MAX];
    while (*s) {
        const int n = text_char(s, esc);
        if (esc[0])
            fputs(esc, f);
        else if (n == 3 && bidi_control((const unsigned char *)s))
            fprintf(f, "\\u%04x", bidi_control((const unsigned char *)s));
        else if (*s == '&' || *s == '<' || *s == '>' || *s == '"')
            fputs(*s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : "&quot;", f);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
}

void markup_svg_text(FILE *f, double x, double y, const char *attrs, const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, attrs);
    markup_svg_escaped(f, text);
    fputs("</text>\n", f);
}

void markup_svg_begin(FILE *f, int width, int height, const char *title, const char *const *lines)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height);
    fprintf(f, "<title>");
    markup_svg_escaped(f, title);
    fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    markup_svg_text(f, 10, 20, "font-size=\"14\" font-weight=\"bold\"", title);
    for (int i = 0; lines && lines[i]; i++)
        markup_svg_text(f, 10, 38 + 16 * i, "fill=\"#444\"", lines[i]);
}

double markup_tick_step(double span)
{
    double step = pow(10, floor(log10(span / 5)));
    if (span / step > 10) step *= 2;
    if (span / step > 10) step *= 2.5;
    return step;
}

lc_status report_emit(const char *path, report_writer write, const void *value, int incomplete, lc_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        write(f, value);
        fclose(f);
    }
    lc_status rc = LC_OK;
    if (!f || !text || incomplete) {
        lc_error_set(err, "%s: not written: out of host memory for the report", strcmp(path, "-") ? path : "stdout");
        rc = LC_ERROR;
    } else if (!strcmp(path, "-")) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
            lc_error_set(err, "cannot write the report to stdout");
            rc = LC_ERROR;
        }
    } else if (file_write_atomic(path, text, len, err)) {
        rc = LC_ERROR;
    }
    free(text);
    return rc;
}
