/* The unit test table, from unit_tests.def; `unit_tests NAME` runs one,
 * `unit_tests --list` prints the names. */
#include "unit.h"

#include <string.h>


/* a GPU test is a unit test like the others here; only its CTest label differs */
#define UNIT_TEST_GPU(name) UNIT_TEST(name)
#define UNIT_TEST(name) int test_##name(void);
#include "unit_tests.def"
#undef UNIT_TEST

static const unit_test tests[] = {
#define UNIT_TEST(name) {#name, test_##name},
#include "unit_tests.def"
#undef UNIT_TEST
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; tests[i].name; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: unit_tests NAME | --list\n");
        return 2;
    }
    for (int i = 0; tests[i].name; i++)
        if (!strcmp(tests[i].name, argv[1]))
            return tests[i].fn();
    fprintf(stderr, "unit_tests: no test named '%s'\n", argv[1]);
    return 2;
}
