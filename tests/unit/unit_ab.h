/* Unit tests of the A/B layer (tests/unit/test_ab.c). */
int test_gitrev_queries(void);
int test_revbuild_failure_remembered(void);
int test_baseline_reference_commit(void);
#define UNIT_AB_TESTS                                                 \
    {"gitrev_queries", test_gitrev_queries},                          \
    {"revbuild_failure_remembered", test_revbuild_failure_remembered}, \
    {"baseline_reference_commit", test_baseline_reference_commit},
