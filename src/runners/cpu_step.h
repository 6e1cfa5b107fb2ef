/* The cpu runner's fused recurrent step: one pass that computes a step's
 * pre-activations x_t W_ih^T + h_{t-1} W_hh^T for a block of hidden units
 * and, while they are still in registers, the cell of those units.
 *
 * Why not one BLAS GEMM per step: a GEMM packs its weight operand on every
 * call, and a step's GEMM (B x 4H x (I+H), B small) is too short to hide
 * that. Here the weights are packed once per forward into panels that put
 * the four gates of LANES hidden units side by side, k-major; every step
 * then streams the panels with no copy, and the cell reads no
 * pre-activation back from memory. The kernels are written once
 * (cpu_step_kernel.h) and built per vector ISA (cpu_step_avx512.c,
 * cpu_step_avx2.c); cpu_step_kernels_for() picks what this CPU runs. */
#ifndef LSTMCHECK_CPU_STEP_H
#define LSTMCHECK_CPU_STEP_H

#include <stddef.h>

/* What the planted faults change in the cell (runners/faults.h); the
 * product passes {0, 0, 1.0f}. */
typedef struct cpu_cell_faults {
    int i_f_swapped; /* gates i and f read each other's pre-activation */
    int g_sigmoid;   /* the candidate through sigmoid instead of tanh */
    float o_scale;   /* the output gate times this */
} cpu_cell_faults;

/* One step of one layer, every sequence of the batch (row-major rows). */
typedef struct cpu_forward_step {
    int batch, hidden, input; /* B, H, I */
    const float *x;           /* (B, I) the step's input */
    const float *h_in, *c_in; /* (B, H) the state before the step */
    float *h_out, *c_out;     /* (B, H) after it; a finished sequence's passes through */
    float *gates;             /* (B, 4H) the activated gates i, f, g, o (tape; 0 past the end) */
    float *c_tape, *out;      /* (B, H) c_t, and h_t as the output (0 past the end) */
    const float *packed;      /* the layer's panels (cpu_pack_forward) */
    const float *bias;        /* (4, padded H) b_ih + b_hh per gate, 0 in the padding */
    const int *len;           /* each sequence's length */
    int t;
    int stream_gates;         /* 1: write the gates' tape past the caches (a tape larger than they are) */
    cpu_cell_faults faults;
} cpu_forward_step;

typedef struct cpu_step_kernels {
    const char *isa; /* "avx512", "avx2" */
    int lanes;       /* hidden units per block: one vector */
    /* blocks [first, end) of a step (block b: units b*lanes ...) */
    void (*forward)(const cpu_forward_step *st, int first, int end);
} cpu_step_kernels;

/* The kernels of an ISA ("avx512", "avx2"), or the best this CPU runs when
 * isa is NULL; NULL when this CPU (or this build) has none of them. */
const cpu_step_kernels *cpu_step_kernels_for(const char *isa);

/* How many blocks of `lanes` units cover H, and the floats one layer's
 * panels take. */
int cpu_step_blocks(int hidden, int lanes);
size_t cpu_forward_panel_floats(int input, int hidden, int lanes);

/* Blocks [first, end) of the forward panels of a layer: for block b, k
 * over [W_ih | W_hh]'s columns, the rows i, f, g, o of units b*lanes ...
 * (zero past H). W_hh element (n, k) is read at w_hh[n*H + k], or at
 * w_hh[k*4H + n] when hh_transposed (a planted fault). */
void cpu_pack_forward(float *panels, const float *w_ih, const float *w_hh, int input, int hidden, int lanes,
                      int hh_transposed, int first, int end);

/* The bias of the cell, (4, blocks*lanes): b_ih + b_hh (b_ih alone when
 * without_hh, a planted fault; either may be NULL). */
void cpu_pack_bias(float *bias, const float *b_ih, const float *b_hh, int hidden, int lanes, int without_hh);

#endif
