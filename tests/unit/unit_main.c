/* The unit test table; `unit_tests NAME` runs one, `unit_tests --list`
 * prints the names (CTest registers one test per name). */
#include "unit.h"

#include <string.h>

#include "runner.h"

int test_reference_fd_one_layer(void);
int test_reference_fd_two_layers(void);
int test_reference_fd_three_layers(void);
int test_reference_fd_variable_length(void);
int test_reference_fd_state_only(void);
int test_reference_one_step_by_hand(void);
int test_reference_variable_length_semantics(void);
int test_inputs_golden_values(void);
int test_inputs_same_seed_same_values(void);
int test_inputs_distributions(void);
int test_inputs_lengths(void);
int test_tolerance_rule(void);
int test_registry_valid(void);
int test_npy_round_trip(void);
int test_stats_summary(void);
int test_stats_mann_whitney(void);
int test_gate_reports_worst_element(void);
int test_cli_flags(void);
int test_cli_errors(void);
#include "unit_ab.h"
#include "unit_extra.h"
#include "unit_isolate.h"
#include "unit_trace.h"

static const unit_test tests[] = {
    {"reference_fd_one_layer", test_reference_fd_one_layer},
    {"reference_fd_two_layers", test_reference_fd_two_layers},
    {"reference_fd_three_layers", test_reference_fd_three_layers},
    {"reference_fd_variable_length", test_reference_fd_variable_length},
    {"reference_fd_state_only", test_reference_fd_state_only},
    {"reference_one_step_by_hand", test_reference_one_step_by_hand},
    {"reference_variable_length_semantics", test_reference_variable_length_semantics},
    {"inputs_golden_values", test_inputs_golden_values},
    {"inputs_same_seed_same_values", test_inputs_same_seed_same_values},
    {"inputs_distributions", test_inputs_distributions},
    {"inputs_lengths", test_inputs_lengths},
    {"tolerance_rule", test_tolerance_rule},
    {"registry_valid", test_registry_valid},
    {"npy_round_trip", test_npy_round_trip},
    {"stats_summary", test_stats_summary},
    {"stats_mann_whitney", test_stats_mann_whitney},
    {"gate_reports_worst_element", test_gate_reports_worst_element},
    {"cli_flags", test_cli_flags},
    {"cli_errors", test_cli_errors},
    UNIT_EXTRA_TESTS
    UNIT_TRACE_TESTS
    UNIT_ISOLATE_TESTS
    UNIT_AB_TESTS
    {NULL, NULL},
};

/* The runner names CMake registers tests for must be exactly the table's. */
static int registry_matches(int argc, char **argv)
{
    int n = 0;
    for (; lstm_runners[n]; n++) {
        int found = 0;
        for (int i = 0; i < argc; i++)
            found |= !strcmp(argv[i], lstm_runners[n]->name);
        CHECK(found, "runner '%s' is in the table but not in CMake's runner lists", lstm_runners[n]->name);
    }
    CHECK(n == argc, "CMake lists %d runners, the table has %d", argc, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--list")) {
        for (int i = 0; tests[i].name; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--registry-matches"))
        return registry_matches(argc - 2, argv + 2);
    if (argc != 2) {
        fprintf(stderr, "usage: unit_tests NAME | --list | --registry-matches NAMES...\n");
        return 2;
    }
    for (int i = 0; tests[i].name; i++)
        if (!strcmp(tests[i].name, argv[1]))
            return tests[i].fn();
    fprintf(stderr, "unit_tests: no test named '%s'\n", argv[1]);
    return 2;
}
