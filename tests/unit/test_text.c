/* Text made safe to show (src/base/text.h) and the error channel that
 * uses it: whatever a message quotes, it prints as one line with no
 * control character. */
#include "unit.h"

#include <string.h>

#include "base/error.h"
#include "base/text.h"

int test_text_printable(void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"plain text", "plain text"},
        {"a\nb\rc\td", "a\\nb\\rc\\td"},
        {"\x1b[31mred", "\\x1b[31mred"},
        {"del\x7f", "del\\x7f"},
        {"csi \xc2\x9b" "2J", "csi \\u009b2J"},          /* C1 control as UTF-8 */
        {"nbsp \xc2\xa0 ok", "nbsp \xc2\xa0 ok"},        /* U+00A0 is text */
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"stray \xff\xfe", "stray \\xff\\xfe"},
        {"cut \xe2\x82", "cut \\xe2\\x82"},              /* a sequence cut short */
        {"overlong \xc0\xaf", "overlong \\xc0\\xaf"},
        {"surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        text_printable(cases[i].in, out, sizeof out);
        CHECK(!strcmp(out, cases[i].out), "case %zu: '%s', want '%s'", i, out, cases[i].out);
        CHECK(text_utf8_valid(out) && !text_find_control(out), "case %zu: printable", i);
    }
    /* a short buffer cuts at a character's end, never inside an escape or a sequence */
    char small[8];
    CHECK(!strcmp(text_printable("ab\x1b\x1b", small, sizeof small), "ab\\x1b"), "'%s'", small);
    CHECK(!strcmp(text_printable("abcdef\xc3\xa9", small, sizeof small), "abcdef"), "'%s'", small);
    CHECK(text_find_control("tab\there") && !text_find_control("\xc2\x9b"), "C0 found, C1 is not C0");
    /* a raw copy (a commit's subject) is cut at a character's end too */
    CHECK(text_cut_length("ab\xc3\xa9", 3) == 2 && text_cut_length("ab\xc3\xa9", 4) == 4, "UTF-8 kept whole");
    CHECK(text_cut_length("ab\xff\xfe", 3) == 3 && text_cut_length("abc", 9) == 3, "a stray byte is one");
    return 0;
}

int test_error_escapes(void)
{
    lc_error err = {{0}};
    lc_error_set(&err, "unknown runner '%s'", "r\nWRONG x\x1b]0;title\x07");
    CHECK(!strcmp(err.msg, "unknown runner 'r\\nWRONG x\\x1b]0;title\\x07'"), "'%s'", err.msg);
    /* escaping again changes nothing: a message wrapped in another stays as it was */
    lc_error outer = {{0}};
    lc_error_set(&outer, "%s", err.msg);
    CHECK(!strcmp(outer.msg, err.msg), "'%s'", outer.msg);
    /* a message longer than the buffer: cut, still printable */
    char big[2 * sizeof err.msg];
    memset(big, '\x1b', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    lc_error_set(&err, "%s", big);
    CHECK(strlen(err.msg) < sizeof err.msg && !text_find_control(err.msg), "%zu characters", strlen(err.msg));
    return 0;
}
