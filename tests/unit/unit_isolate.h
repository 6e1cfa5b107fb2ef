/* Unit tests of one-process-per-GPU-runner (tests/unit/test_isolate.c). */
int test_isolate_child_result(void);
int test_isolate_crash_fails_one_runner(void);
#define UNIT_ISOLATE_TESTS                                            \
    {"isolate_child_result", test_isolate_child_result},              \
    {"isolate_crash_fails_one_runner", test_isolate_crash_fails_one_runner},
