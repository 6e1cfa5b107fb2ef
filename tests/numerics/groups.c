/* The numerics groups as a table (see groups.h). */
#include "groups.h"

#include <string.h>

#define SHAPE(T, B, I, H, L) {.seq_length = T, .batch = B, .input_size = I, .hidden_size = H, .num_layers = L}
#define FIXED(T, B, I, H, L, SEED) {.shape = SHAPE(T, B, I, H, L), .seed = SEED}
#define RAGGED(T, B, I, H, L, SEED) {.shape = SHAPE(T, B, I, H, L), .varlen = 1, .seed = SEED}
#define LENGTHS(T, B, I, H, L, SEED, ...) {.shape = SHAPE(T, B, I, H, L), .seed = SEED, .lengths = {__VA_ARGS__}}
/* a group's case count from its own initializer list */
#define CASES(...) sizeof((numerics_case[]){__VA_ARGS__}) / sizeof(numerics_case), {__VA_ARGS__}

const numerics_group numerics_groups[] = {
#define NUMERICS_GROUP(name, model, ...) {#name, #model, CASES(__VA_ARGS__)},
#include "groups.def"
#undef NUMERICS_GROUP
    {.name = NULL},
};

const numerics_group *numerics_group_find(const char *name)
{
    for (int i = 0; numerics_groups[i].name; i++)
        if (!strcmp(numerics_groups[i].name, name))
            return &numerics_groups[i];
    return NULL;
}

const int *numerics_case_lengths(const numerics_case *c, int *len)
{
    if (c->lengths[0])
        return c->lengths;
    if (!c->varlen)
        return NULL;
    /* ragged: 1, T and values between, unsorted on purpose */
    const int T = c->shape.seq_length;
    for (int b = 0; b < c->shape.batch; b++)
        len[b] = 1 + (b * 5 + 3) % T;
    len[c->shape.batch / 2] = T;
    return len;
}
