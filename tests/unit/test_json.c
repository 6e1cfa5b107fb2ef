/* The JSON writer (base/json.h): escaping of every class of character,
 * numbers that read back exactly, nesting in both layouts, misuse. */
#include "unit.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

/* The one-line document holding just the string s. */
static const char *string_doc(json_writer *w, const char *s)
{
    json_reset(w);
    json_string(w, s);
    return json_text(w, NULL);
}

int test_json_escaping(void)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    static const struct { const char *in, *out; } cases[] = {
        {"plain ASCII ~!@#$%^&*()", "\"plain ASCII ~!@#$%^&*()\""},
        {"", "\"\""},
        {"a\"b", "\"a\\\"b\""},
        {"a\\b", "\"a\\\\b\""},
        {"/", "\"/\""},
        {"\n\r\t\b\f", "\"\\u000a\\u000d\\u0009\\u0008\\u000c\""},
        {"\x01\x1f x\x7f", "\"\\u0001\\u001f x\x7f\""},
        /* valid UTF-8 of 2, 3 and 4 bytes passes through */
        {"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        /* invalid: a lone continuation byte, overlong forms, a surrogate,
         * beyond U+10FFFF, a sequence cut short (at the end too) */
        {"a\x80z", "\"a\xef\xbf\xbdz\""},
        {"\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xe0\x80\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xe2\x82z", "\"\xef\xbf\xbd\xef\xbf\xbdz\""},
        {"x\xe2\x82", "\"x\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xff\xfe", "\"\xef\xbf\xbd\xef\xbf\xbd\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = string_doc(&w, cases[i].in);
        CHECK(got && !strcmp(got, cases[i].out), "case %zu: got %s, expected %s", i, got ? got : "(null)",
              cases[i].out);
        cJSON *back = cJSON_Parse(got);
        CHECK(cJSON_IsString(back), "case %zu does not parse: %s", i, got);
        cJSON_Delete(back);
    }
    /* every byte 1..255 in one string: valid JSON, and what is valid reads back */
    char all[256];
    for (int c = 1; c < 256; c++)
        all[c - 1] = (char)c;
    all[255] = '\0';
    cJSON *back = cJSON_Parse(string_doc(&w, all));
    CHECK(cJSON_IsString(back), "every byte: valid JSON");
    cJSON_Delete(back);
    char ascii[128];
    for (int c = 1; c < 128; c++)
        ascii[c - 1] = (char)c;
    ascii[127] = '\0';
    back = cJSON_Parse(string_doc(&w, ascii));
    CHECK(cJSON_IsString(back) && !strcmp(back->valuestring, ascii), "ASCII reads back");
    cJSON_Delete(back);
    /* keys are escaped the same way; NULL is null */
    json_reset(&w);
    json_object_begin(&w);
    json_member_string(&w, "k\"\n", NULL);
    json_object_end(&w);
    CHECK(!strcmp(json_text(&w, NULL), "{\"k\\\"\\u000a\": null}"), "%s", json_text(&w, NULL));
    json_free(&w);
    return 0;
}

static const char *double_doc(json_writer *w, double v)
{
    json_reset(w);
    json_double(w, v);
    return json_text(w, NULL);
}

int test_json_numbers(void)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    static const struct { double v; const char *text; } cases[] = {
        {0.1, "0.1"}, {100.0, "100.0"}, {1e-05, "1e-05"}, {0.0001, "0.0001"}, {1.5e16, "1.5e+16"},
        {1e16, "1e+16"}, {9999999999999998.0, "9999999999999998.0"}, {0.30000000000000004, "0.30000000000000004"},
        {1.0 / 3.0, "0.3333333333333333"}, {-2.5, "-2.5"}, {0.0, "0.0"}, {-0.0, "-0.0"},
        {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"}, {123456789.0, "123456789.0"},
        {NAN, "NaN"}, {INFINITY, "Infinity"}, {-INFINITY, "-Infinity"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = double_doc(&w, cases[i].v);
        CHECK(got && !strcmp(got, cases[i].text), "%.17g: got %s, expected %s", cases[i].v, got, cases[i].text);
    }
    /* random bit patterns read back exactly */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v))
            continue;
        const char *got = double_doc(&w, v);
        CHECK(got && strtod(got, NULL) == v && signbit(strtod(got, NULL)) == signbit(v), "%.17g -> %s", v, got);
    }
    /* strict JSON: not-finite values are null */
    json_writer strict;
    json_init(&strict, JSON_NONFINITE_AS_NULL);
    CHECK(!strcmp(double_doc(&strict, NAN), "null") && !strcmp(double_doc(&strict, -INFINITY), "null") &&
          !strcmp(double_doc(&strict, 2.0), "2.0"), "strict");
    json_free(&strict);
    /* integers and exact fixed-point numbers */
    json_reset(&w);
    json_array_begin(&w);
    json_int(&w, LLONG_MIN);
    json_uint(&w, ULLONG_MAX);
    json_fixed(&w, 1234567, 3);
    json_fixed(&w, 5, 3);
    json_fixed(&w, 7, 0);
    json_fixed(&w, UINT64_MAX, 3);
    json_bool(&w, 1);
    json_bool(&w, 0);
    json_null(&w);
    json_array_end(&w);
    const char *want = "[-9223372036854775808, 18446744073709551615, 1234.567, 0.005, 7, "
                       "18446744073709551.615, true, false, null]";
    CHECK(!strcmp(json_text(&w, NULL), want), "%s", json_text(&w, NULL));
    json_free(&w);
    return 0;
}

/* {"a": 1, "b": [1, 2, {"c": []}], "d": {}, "e": {"f": null, "g": [true, 0.5]}} */
static void nested(json_writer *w, int inline_g)
{
    json_object_begin(w);
    json_member_int(w, "a", 1);
    json_key(w, "b");
    json_array_begin(w);
    json_int(w, 1);
    json_int(w, 2);
    json_object_begin(w);
    json_key(w, "c");
    json_array_begin(w);
    json_array_end(w);
    json_object_end(w);
    json_array_end(w);
    json_key(w, "d");
    json_object_begin(w);
    json_object_end(w);
    json_key(w, "e");
    json_object_begin(w);
    json_member_null(w, "f");
    json_key(w, "g");
    if (inline_g)
        json_array_begin_inline(w);
    else
        json_array_begin(w);
    json_bool(w, 1);
    json_double(w, 0.5);
    json_array_end(w);
    json_object_end(w);
    json_object_end(w);
}

int test_json_nesting(void)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    nested(&w, 0);
    size_t len = 0;
    const char *one_line = "{\"a\": 1, \"b\": [1, 2, {\"c\": []}], \"d\": {}, \"e\": {\"f\": null, \"g\": [true, 0.5]}}";
    CHECK(json_text(&w, &len) && !strcmp(json_text(&w, NULL), one_line) && len == strlen(one_line), "%s",
          json_text(&w, NULL));
    json_free(&w);
    /* Python's json.dumps(indent=2), with g kept on one line */
    json_init(&w, JSON_INDENTED);
    nested(&w, 1);
    const char *indented = "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    {\n      \"c\": []\n    }\n  ],\n"
                           "  \"d\": {},\n  \"e\": {\n    \"f\": null,\n    \"g\": [true, 0.5]\n  }\n}";
    CHECK(json_text(&w, NULL) && !strcmp(json_text(&w, NULL), indented), "%s", json_text(&w, NULL));
    json_free(&w);
    /* line breaks: the Chrome trace's one event per line */
    json_init(&w, JSON_ONE_LINE);
    json_object_begin(&w);
    json_member_string(&w, "x", "y");
    json_line_break(&w);
    json_key(&w, "events");
    json_array_begin(&w);
    for (int i = 0; i < 2; i++) {
        json_line_break(&w);
        json_object_begin(&w);
        json_member_int(&w, "i", i);
        json_object_end(&w);
    }
    json_line_break(&w);
    json_array_end(&w);
    json_object_end(&w);
    CHECK(!strcmp(json_text(&w, NULL), "{\"x\": \"y\",\n\"events\": [\n{\"i\": 0},\n{\"i\": 1}\n]}"), "%s",
          json_text(&w, NULL));
    json_free(&w);
    /* a value made by another writer goes in raw, indented to its place */
    json_writer inner;
    json_init(&inner, JSON_INDENTED);
    json_array_begin(&inner);
    json_int(&inner, 1);
    json_array_end(&inner);
    json_init(&w, JSON_INDENTED);
    json_object_begin(&w);
    json_key(&w, "a");
    json_object_begin(&w);
    json_key(&w, "r");
    json_raw(&w, json_text(&inner, NULL));
    json_object_end(&w);
    json_object_end(&w);
    CHECK(!strcmp(json_text(&w, NULL), "{\n  \"a\": {\n    \"r\": [\n      1\n    ]\n  }\n}"), "%s",
          json_text(&w, NULL));
    json_free(&inner);
    json_free(&w);
    /* deep nesting up to the limit, then refused */
    json_init(&w, JSON_ONE_LINE);
    for (int i = 0; i < JSON_MAX_DEPTH; i++)
        json_array_begin(&w);
    for (int i = 0; i < JSON_MAX_DEPTH; i++)
        json_array_end(&w);
    CHECK(json_text(&w, NULL), "depth %d", JSON_MAX_DEPTH);
    json_reset(&w);
    for (int i = 0; i <= JSON_MAX_DEPTH; i++)
        json_array_begin(&w);
    CHECK(w.failed, "deeper than JSON_MAX_DEPTH");
    json_free(&w);
    return 0;
}

int test_json_misuse(void)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    json_object_begin(&w);
    json_int(&w, 1); /* a value where a key is due */
    json_object_end(&w);
    CHECK(!json_text(&w, NULL), "value without key");
    json_reset(&w);
    json_array_begin(&w);
    json_key(&w, "k"); /* a key in an array */
    CHECK(!json_text(&w, NULL) && w.failed, "key in array");
    json_reset(&w);
    json_object_begin(&w);
    json_array_end(&w); /* the wrong end */
    CHECK(w.failed, "unbalanced");
    json_reset(&w);
    json_object_begin(&w);
    CHECK(!json_text(&w, NULL), "incomplete");
    json_reset(&w);
    json_int(&w, 1);
    json_int(&w, 2); /* two documents */
    CHECK(w.failed, "two top-level values");
    json_reset(&w);
    json_object_begin(&w);
    json_key(&w, "a");
    json_object_end(&w); /* the key's value is missing */
    CHECK(w.failed, "key without value");
    json_free(&w);
    return 0;
}
