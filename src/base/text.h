/* Text that reaches a terminal or a document: UTF-8 read one character at
 * a time, and what may not be shown as it is (a control character could
 * move the cursor, recolour the terminal or start a fake line). */
#ifndef LSTMCHECK_TEXT_H
#define LSTMCHECK_TEXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest escape text_char writes, with its NUL: "\u0085". */
#define TEXT_ESCAPE_MAX 8

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes
 * there are not one (overlong forms, surrogates and code points above
 * U+10FFFF included). */
int text_utf8_sequence(const unsigned char *s);

/* 1 when str is valid UTF-8 throughout. */
int text_utf8_valid(const char *str);

/* The character at s (not at its end): how many bytes it takes (>= 1),
 * and in esc either "" (show it as it is) or the text that shows it
 * safely: \n \r \t for those, \xNN for another C0 control character, DEL
 * or a byte of invalid UTF-8, \u0080..\u009f for a C1 control character. */
int text_char(const char *s, char esc[TEXT_ESCAPE_MAX]);

/* src made safe to print on one line (text_char's escapes) into out of n
 * bytes (n >= 1), cut at a character's end when out is short. src and out
 * must not overlap. Returns out. */
char *text_printable(const char *src, char *out, size_t n);

/* The length of the longest start of s, at most max bytes, that ends at a
 * character's end (a byte of invalid UTF-8 is a character): where a copy
 * may be cut without cutting a character in two. */
size_t text_cut_length(const char *s, size_t max);

/* bytes for people into buf of n: "96 B", "1.5 KiB", "75.0 MiB", "2.3 GiB"
 * (a value that would print as 1024.0 goes up a unit). Returns buf. */
char *text_bytes(double bytes, char *buf, size_t n);

/* The first control character of s (C0 or DEL), or NULL. */
const char *text_find_control(const char *s);

/* The first character of s that text_char would escape (a C0 or C1
 * control character, DEL, a byte of invalid UTF-8), or NULL: s prints as
 * it is. */
const char *text_find_unprintable(const char *s);

#ifdef __cplusplus
}
#endif
#endif
