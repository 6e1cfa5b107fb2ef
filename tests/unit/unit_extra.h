/* Unit tests of the perf layer (tests/unit/test_perf.c). */
int test_verdict_rule(void);
int test_baseline_bad_files(void);
int test_baseline_commands_protect_files(void);
int test_machine_key(void);
#define UNIT_EXTRA_TESTS                                              \
    {"verdict_rule", test_verdict_rule},                              \
    {"baseline_bad_files", test_baseline_bad_files},                  \
    {"baseline_commands_protect_files", test_baseline_commands_protect_files}, \
    {"machine_key", test_machine_key},
