/* Unit tests of the profiling layer (tests/unit/test_trace.c). */
int test_trace_json_valid(void);
int test_trace_interval_union(void);
int test_trace_gemm_classification(void);
int test_trace_profile_file_name(void);
int test_trace_memstats_summary(void);
int test_trace_gpu_two_runners(void);
#define UNIT_TRACE_TESTS                                              \
    {"trace_json_valid", test_trace_json_valid},                      \
    {"trace_interval_union", test_trace_interval_union},              \
    {"trace_gemm_classification", test_trace_gemm_classification},    \
    {"trace_profile_file_name", test_trace_profile_file_name},        \
    {"trace_memstats_summary", test_trace_memstats_summary},          \
    {"trace_gpu_two_runners", test_trace_gpu_two_runners},
