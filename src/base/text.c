/* Text made safe to show (see text.h). */
#include "base/text.h"

#include <stdio.h>
#include <string.h>

int text_utf8_sequence(const unsigned char *s)
{
    const unsigned char c = s[0];
    int n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1fu; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0fu; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07u; }
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

int text_utf8_valid(const char *str)
{
    for (const unsigned char *s = (const unsigned char *)str; *s;) {
        const int n = *s >= 0x80 ? text_utf8_sequence(s) : 1;
        if (!n)
            return 0;
        s += n;
    }
    return 1;
}

int text_char(const char *str, char esc[TEXT_ESCAPE_MAX])
{
    const unsigned char *s = (const unsigned char *)str;
    esc[0] = '\0';
    if (*s >= 0x20 && *s < 0x7f)
        return 1;
    if (*s == '\n' || *s == '\r' || *s == '\t') {
        snprintf(esc, TEXT_ESCAPE_MAX, "\\%c", *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
        return 1;
    }
    const int n = *s >= 0x80 ? text_utf8_sequence(s) : 0;
    if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) { /* U+0080..U+009F: C1 controls (0x9b is a CSI) */
        snprintf(esc, TEXT_ESCAPE_MAX, "\\u%04x", s[1]);
        return 2;
    }
    if (n)
        return n;
    snprintf(esc, TEXT_ESCAPE_MAX, "\\x%02x", *s); /* C0, DEL, a stray byte */
    return 1;
}

char *text_printable(const char *src, char *out, size_t n)
{
    size_t used = 0;
    char esc[TEXT_ESCAPE_MAX];
    for (const char *s = src; *s;) {
        const int len = text_char(s, esc);
        const char *piece = esc[0] ? esc : s;
        const size_t plen = esc[0] ? strlen(esc) : (size_t)len;
        if (used + plen >= n)
            break; /* cut at a character's end */
        memcpy(out + used, piece, plen);
        used += plen;
        s += len;
    }
    out[used] = '\0';
    return out;
}

size_t text_cut_length(const char *s, size_t max)
{
    size_t used = 0;
    for (int len; s[used]; used += (size_t)len) {
        len = text_utf8_sequence((const unsigned char *)s + used);
        len = len ? len : 1;
        if (used + (size_t)len > max)
            break;
    }
    return used;
}

const char *text_find_unprintable(const char *s)
{
    char esc[TEXT_ESCAPE_MAX];
    for (int n; *s; s += n)
        if ((n = text_char(s, esc)), esc[0])
            return s;
    return NULL;
}

const char *text_find_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return s;
    return NULL;
}

char *text_bytes(double bytes, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = bytes;
    int u = 0;
    while (v >= 1023.95 && u < 6)
        v /= 1024, u++;
    if (u == 0)
        snprintf(buf, n, "%.0f B", v);
    else
        snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}
