/* The numerics groups (groups.def) as a table, for the test programs that
 * judge a runner on them. Cases: FIXED(T, B, I, H, L, seed), RAGGED(...)
 * (lengths from numerics_case_lengths), LENGTHS(..., seed, lengths...). */
#ifndef LSTMCHECK_NUMERICS_GROUPS_H
#define LSTMCHECK_NUMERICS_GROUPS_H

#include "model/lstm.h"

#define NUMERICS_MAX_BATCH 16
#define NUMERICS_MAX_CASES 24

typedef struct numerics_case {
    lstm_shape shape;
    int varlen; /* ragged lengths from numerics_case_lengths */
    unsigned long long seed;
    int lengths[NUMERICS_MAX_BATCH]; /* explicit lengths when lengths[0] != 0 */
} numerics_case;

typedef struct numerics_group {
    const char *name;
    const char *model; /* "any", or the model it is for (model/models.def) */
    int ncases;
    numerics_case cases[NUMERICS_MAX_CASES];
} numerics_group;

/* Every group, in groups.def's order; a NULL name ends it. */
extern const numerics_group numerics_groups[];

/* The group of that name; NULL when there is none. */
const numerics_group *numerics_group_find(const char *name);

/* The case's lengths (len has room for its batch); NULL for fixed length. */
const int *numerics_case_lengths(const numerics_case *c, int *len);

#endif
