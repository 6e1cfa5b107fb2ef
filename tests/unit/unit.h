/* A small test registry: each test is a function returning 0 (pass),
 * 1 (fail) or UNIT_SKIP; CTest runs each by name (tests/unit/CMakeLists.txt). */
#ifndef LSTMCHECK_UNIT_H
#define LSTMCHECK_UNIT_H

#include <math.h>
#include <stdio.h>

#define UNIT_SKIP 77

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            return 1;                                                       \
        }                                                                   \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                               \
    CHECK(fabs((double)(a) - (double)(b)) <= (tol), "%s = %.17g, %s = %.17g, tolerance %g", \
          #a, (double)(a), #b, (double)(b), (double)(tol))

/* 1 when two baseline entries hold the same values, bit for bit
 * (test_baseline_file.c; for the round-trip tests). */
struct baseline_entry;
int unit_same_baseline_entry(const struct baseline_entry *a, const struct baseline_entry *b);

/* Where a test's report file goes: into LSTMCHECK_REPORT_OUT (kept, for
 * tests/report/ to render), or into a fresh temporary folder (removed by
 * unit_remove_out). unit_open_out: 0 on success. (test_compare_report.c) */
typedef struct unit_out_file {
    char tmp[64], path[4096];
    const char *dir;
} unit_out_file;
int unit_open_out(unit_out_file *o, const char *name);
void unit_remove_out(const unit_out_file *o);

typedef struct unit_test {
    const char *name;
    int (*fn)(void);
} unit_test;

#endif
