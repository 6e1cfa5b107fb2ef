/* Unit tests of the perf layer (verdict, baselines, machine key). */
#define UNIT_EXTRA_TESTS
