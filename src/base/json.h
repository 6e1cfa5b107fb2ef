/* The one JSON writer: every JSON document lstmcheck writes is made here,
 * streamed into a growable buffer, so that strings are always escaped and
 * numbers always read back exactly, and files can be written atomically
 * (files.h). cJSON is used for reading only.
 *
 *   json_writer w;
 *   json_init(&w, JSON_ONE_LINE);
 *   json_object_begin(&w);
 *   json_member_string(&w, "name", "cpu");
 *   json_key(&w, "samples");
 *   json_array_begin(&w);
 *   json_double(&w, 0.1);
 *   json_array_end(&w);
 *   json_object_end(&w);
 *   const char *text = json_text(&w, &len);  // {"name": "cpu", "samples": [0.1]}
 *   json_free(&w);
 *
 * Misuse (a value where a key is due, unbalanced ends, nesting deeper than
 * JSON_MAX_DEPTH) and running out of memory mark the writer failed: later
 * calls do nothing and json_text returns NULL, so callers check once. */
#ifndef LSTMCHECK_JSON_H
#define LSTMCHECK_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JSON_MAX_DEPTH 32

/* Layout and number flags of json_init. */
enum {
    /* Python's json.dumps(): separators ", " and ": ", all on one line. */
    JSON_ONE_LINE = 0,
    /* json.dumps(indent=2): an element per line, two spaces per level;
     * arrays begun with json_array_begin_inline stay on one line. */
    JSON_INDENTED = 1,
    /* NaN and infinities as null (strict JSON); without it they are NaN,
     * Infinity and -Infinity, as Python and the original bench.py write them. */
    JSON_NONFINITE_AS_NULL = 2,
};

typedef struct json_writer {
    char *text;
    size_t len, cap;
    unsigned flags;
    int depth;                        /* open containers */
    int failed;
    int after_key;                    /* a member's value is due */
    int line_break;                   /* json_line_break was asked */
    int done;                         /* the top-level value is complete */
    unsigned char empty[JSON_MAX_DEPTH];     /* nothing in this container yet */
    unsigned char is_object[JSON_MAX_DEPTH];
    unsigned char one_line[JSON_MAX_DEPTH];  /* an inline container (or inside one) */
} json_writer;

void json_init(json_writer *w, unsigned flags);
void json_free(json_writer *w);
/* Start a new document, keeping the buffer (one line per document). */
void json_reset(json_writer *w);

/* The finished document (NUL-terminated, *len without the NUL); NULL when
 * the writer failed or the document is incomplete. */
const char *json_text(const json_writer *w, size_t *len);
/* The document followed by a newline, as a file holds it: malloc'ed and
 * handed to the caller, the writer left empty. NULL as json_text. */
char *json_take(json_writer *w, size_t *len);
/* The document and a newline to path, atomically (files.h). 0, or 1 with err. */
int json_write_file(const json_writer *w, const char *path, lc_error *err);

void json_object_begin(json_writer *w);
void json_object_end(json_writer *w);
void json_array_begin(json_writer *w);
/* An array kept on one line in the indented layout (lists of samples). */
void json_array_begin_inline(json_writer *w);
void json_array_end(json_writer *w);

/* The key of the next member of an object. */
void json_key(json_writer *w, const char *key);

/* Escaped: quote, backslash, control characters as \u00XX; a byte that is
 * not part of valid UTF-8 becomes U+FFFD. NULL writes null. */
void json_string(json_writer *w, const char *s);
/* The shortest text that reads back exactly (json_format_double). */
void json_double(json_writer *w, double v);
void json_int(json_writer *w, long long v);
void json_uint(json_writer *w, unsigned long long v);
/* value / 10^decimals exactly, with that many decimals (0..9): nanoseconds
 * as microseconds "1234.567". */
void json_fixed(json_writer *w, uint64_t value, int decimals);
void json_bool(json_writer *w, int v);
void json_null(json_writer *w);
/* A value that is already JSON text, made by another json_writer; in the
 * indented layout its lines are indented to where it goes. */
void json_raw(json_writer *w, const char *json);

/* json_key followed by the value. */
void json_member_string(json_writer *w, const char *key, const char *s);
void json_member_double(json_writer *w, const char *key, double v);
void json_member_int(json_writer *w, const char *key, long long v);
void json_member_uint(json_writer *w, const char *key, unsigned long long v);
void json_member_bool(json_writer *w, const char *key, int v);
void json_member_null(json_writer *w, const char *key);

/* One-line layout: the next element (or the closing bracket) starts a new
 * line, as the Chrome trace writes one event per line. */
void json_line_break(json_writer *w);

/* Python's repr() of a float: the shortest text that reads back exactly,
 * "0.1", "100.0", "1e-05", "1.5e+16", "-0.0"; NaN, Infinity, -Infinity. */
void json_format_double(double v, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
