/* The JSON writer (see json.h). */
#include "base/json.h"

#include "base/files.h"
#include "base/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_bytes(json_writer *w, const char *s, size_t n);

void json_init(json_writer *w, unsigned flags)
{
    memset(w, 0, sizeof *w);
    w->flags = flags;
}

void json_free(json_writer *w)
{
    free(w->text);
    json_init(w, w->flags);
}

void json_reset(json_writer *w)
{
    char *text = w->text;
    size_t cap = w->cap;
    json_init(w, w->flags);
    w->text = text;
    w->cap = cap;
    if (text)
        text[0] = '\0';
}

const char *json_text(const json_writer *w, size_t *len)
{
    if (w->failed || !w->done || !w->text)
        return NULL;
    if (len)
        *len = w->len;
    return w->text;
}

char *json_take(json_writer *w, size_t *len)
{
    char *text = NULL;
    if (json_text(w, NULL)) {
        put_bytes(w, "\n", 1);
        if (!w->failed) {
            text = w->text;
            *len = w->len;
            w->text = NULL;
        }
    }
    json_free(w);
    return text;
}

int json_write_file(const json_writer *w, const char *path, lc_error *err)
{
    size_t len;
    const char *text = json_text(w, &len);
    if (!text) {
        lc_error_set(err, "%s: the JSON document could not be made (out of memory)", path);
        return 1;
    }
    return file_write_atomic_parts(path, text, len, "\n", 1, err);
}

/* ---- the buffer ---- */

static void put_bytes(json_writer *w, const char *s, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *grown = realloc(w->text, cap);
        if (!grown) {
            w->failed = 1;
            return;
        }
        w->text = grown;
        w->cap = cap;
    }
    memcpy(w->text + w->len, s, n);
    w->len += n;
    w->text[w->len] = '\0';
}

static void put(json_writer *w, const char *s)
{
    put_bytes(w, s, strlen(s));
}

/* ---- layout ---- */

static int indented_here(const json_writer *w)
{
    return (w->flags & JSON_INDENTED) && w->depth > 0 && !w->one_line[w->depth - 1];
}

/* What goes before an element (or the closing bracket, last): a newline
 * and indentation, a newline asked for, or a space between elements. */
static void put_gap(json_writer *w, int between, int closing)
{
    if (indented_here(w)) {
        put(w, "\n");
        for (int d = 0; d < w->depth - closing; d++)
            put(w, "  ");
    } else if (w->line_break) {
        put(w, "\n");
    } else if (between) {
        put(w, " ");
    }
    w->line_break = 0;
}

/* Before any value or key: the separator from the previous element, and a
 * check that a value may come here. 0 when it may. */
static int begin_element(json_writer *w, int is_key)
{
    if (w->failed)
        return 1;
    if (w->after_key) {
        w->after_key = 0;
        if (!is_key)
            return 0;
        w->failed = 1; /* a key after a key */
        return 1;
    }
    if (w->depth == 0) {
        w->failed |= w->done || is_key; /* one top-level value */
        return w->failed;
    }
    const int level = w->depth - 1;
    if (w->is_object[level] != is_key) {
        w->failed = 1; /* a value where a key is due, or a key in an array */
        return 1;
    }
    if (!w->empty[level])
        put(w, ",");
    put_gap(w, !w->empty[level], 0);
    w->empty[level] = 0;
    return 0;
}

/* After a complete value: at the top level the document is done. */
static void end_value(json_writer *w)
{
    if (w->depth == 0)
        w->done = 1;
}

static void open_container(json_writer *w, int is_object, int inline_array)
{
    if (begin_element(w, 0))
        return;
    if (w->depth == JSON_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    const int outer_one_line = w->depth > 0 && w->one_line[w->depth - 1];
    put(w, is_object ? "{" : "[");
    w->empty[w->depth] = 1;
    w->is_object[w->depth] = (unsigned char)is_object;
    w->one_line[w->depth] = (unsigned char)(outer_one_line || inline_array);
    w->depth++;
}

static void close_container(json_writer *w, int is_object)
{
    if (w->failed)
        return;
    if (w->depth == 0 || w->after_key || w->is_object[w->depth - 1] != is_object) {
        w->failed = 1;
        return;
    }
    if (!w->empty[w->depth - 1])
        put_gap(w, 0, 1);
    else if (w->line_break && !indented_here(w))
        put(w, "\n"); /* asked for; an indented empty container stays [] */
    w->line_break = 0;
    w->depth--;
    put(w, is_object ? "}" : "]");
    end_value(w);
}

void json_object_begin(json_writer *w) { open_container(w, 1, 0); }
void json_object_end(json_writer *w) { close_container(w, 1); }
void json_array_begin(json_writer *w) { open_container(w, 0, 0); }
void json_array_begin_inline(json_writer *w) { open_container(w, 0, 1); }
void json_array_end(json_writer *w) { close_container(w, 0); }

void json_line_break(json_writer *w)
{
    w->line_break = 1;
}

/* ---- strings ---- */

static void put_escaped(json_writer *w, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    put(w, "\"");
    while (*s) {
        const unsigned char *run = s; /* bytes that need no escaping */
        while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
            s++;
        put_bytes(w, (const char *)run, (size_t)(s - run));
        if (!*s)
            break;
        int n = *s >= 0x80 ? text_utf8_sequence(s) : 1;
        char esc[8];
        if (*s == '"' || *s == '\\') {
            snprintf(esc, sizeof esc, "\\%c", *s);
            put(w, esc);
        } else if (*s < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *s);
            put(w, esc);
        } else if (n) {
            put_bytes(w, (const char *)s, (size_t)n);
        } else {
            put(w, "\xef\xbf\xbd"); /* U+FFFD for a byte of invalid UTF-8 */
            n = 1;
        }
        s += n;
    }
    put(w, "\"");
}

void json_key(json_writer *w, const char *key)
{
    if (begin_element(w, 1))
        return;
    put_escaped(w, key ? key : "");
    put(w, ": ");
    w->after_key = 1;
}

void json_string(json_writer *w, const char *s)
{
    if (!s) {
        json_null(w);
        return;
    }
    if (begin_element(w, 0))
        return;
    put_escaped(w, s);
    end_value(w);
}

/* ---- numbers and the rest ---- */

void json_format_double(double v, char *buf, size_t n)
{
    if (isnan(v)) { snprintf(buf, n, "NaN"); return; }
    if (isinf(v)) { snprintf(buf, n, v > 0 ? "Infinity" : "-Infinity"); return; }
    if (v == 0) { snprintf(buf, n, signbit(v) ? "-0.0" : "0.0"); return; }
    /* the fewest significant digits that read back exactly */
    char sci[64];
    int digits = 1;
    for (; digits <= 17; digits++) {
        snprintf(sci, sizeof sci, "%.*e", digits - 1, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    const int exp = atoi(strchr(sci, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        /* Python's repr switches to exponents outside 1e-4 <= |v| < 1e16 */
        const int decimals = digits - 1 - exp;
        if (decimals < 1)
            snprintf(buf, n, "%.0f.0", v);
        else
            snprintf(buf, n, "%.*f", decimals, v);
    } else {
        /* Python writes 1e-05 and 1.5e+16: C's %e with two exponent digits */
        snprintf(buf, n, "%s", sci);
    }
}

static void put_number(json_writer *w, const char *text)
{
    if (begin_element(w, 0))
        return;
    put(w, text);
    end_value(w);
}

void json_double(json_writer *w, double v)
{
    if (!isfinite(v) && (w->flags & JSON_NONFINITE_AS_NULL)) {
        json_null(w);
        return;
    }
    char b[64];
    json_format_double(v, b, sizeof b);
    put_number(w, b);
}

void json_int(json_writer *w, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    put_number(w, b);
}

void json_uint(json_writer *w, unsigned long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    put_number(w, b);
}

void json_fixed(json_writer *w, uint64_t value, int decimals)
{
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    uint64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    char b[48];
    if (scale == 1)
        snprintf(b, sizeof b, "%" PRIu64, value);
    else
        snprintf(b, sizeof b, "%" PRIu64 ".%0*" PRIu64, value / scale, decimals, value % scale);
    put_number(w, b);
}

void json_bool(json_writer *w, int v) { put_number(w, v ? "true" : "false"); }
void json_null(json_writer *w) { put_number(w, "null"); }
void json_raw(json_writer *w, const char *json)
{
    if (begin_element(w, 0))
        return;
    /* a newline in JSON text is layout (strings hold \n escaped): each line
     * of an indented value moves in to where the value goes */
    const int indent = indented_here(w) ? w->depth : 0;
    for (const char *line = json; *line;) {
        const size_t n = strcspn(line, "\n");
        put_bytes(w, line, n);
        line += n;
        if (*line == '\n') {
            put(w, "\n");
            for (int d = 0; d < indent; d++)
                put(w, "  ");
            line++;
        }
    }
    end_value(w);
}

void json_member_string(json_writer *w, const char *key, const char *s) { json_key(w, key); json_string(w, s); }
void json_member_double(json_writer *w, const char *key, double v) { json_key(w, key); json_double(w, v); }
void json_member_int(json_writer *w, const char *key, long long v) { json_key(w, key); json_int(w, v); }
void json_member_uint(json_writer *w, const char *key, unsigned long long v) { json_key(w, key); json_uint(w, v); }
void json_member_bool(json_writer *w, const char *key, int v) { json_key(w, key); json_bool(w, v); }
void json_member_null(json_writer *w, const char *key) { json_key(w, key); json_null(w); }
