/* The cpu runner's fused recurrent step: one pass that computes a step's
 * pre-activations x_t W_ih^T + h_{t-1} W_hh^T for a block of hidden units
 * (or h_{t-1} W_hh^T plus x_t W_ih^T that one GEMM over all steps left in
 * the tape: input_in_step) and, while they are still in registers, the
 * cell of those units.
 *
 * Why not one BLAS GEMM per step: a GEMM packs its weight operand on every
 * call, and a step's GEMM (B x 4H x (I+H), B small) is too short to hide
 * that. Here the weights are packed once (at create) into panels that put
 * the four gates of LANES hidden units side by side, k-major; every step
 * then streams the panels with no copy, and the cell reads no
 * pre-activation back from memory. The backward runs the same way in
 * reverse (cpu_backward_step): dgates_t times [W_ih | W_hh], packed once,
 * with the cells of step t-1 after it, row by row (the gradient reaching
 * h_{t-1} kept in L2 between), which also leave dgates on a
 * tape in the forward panels' layout; then the weight gradients as one
 * GEMM over all steps (cpu_weight_grads) that reads that tape as its
 * panels. The kernels are written once (cpu_step_kernel.h) and built per
 * vector ISA (cpu_step_avx512.c, cpu_step_avx2.c); cpu_step_kernels_for()
 * picks what this CPU runs. */
#ifndef LSTMCHECK_CPU_STEP_H
#define LSTMCHECK_CPU_STEP_H

#include "base/parallel.h"

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
    int batch, hidden;        /* B, H */
    int input;                /* I, the columns of x_t the step multiplies; 0 where gates already
                               * holds x_t W_ih^T (cpu_step_kernels.input_in_step 0), which the
                               * step adds to h_{t-1} W_hh^T before the cell */
    const float *x;           /* (B, I) the step's input (unread where input is 0) */
    const float *h_in, *c_in; /* (B, H) the state before the step */
    float *c_out;             /* (B, H) c_t, the state and the tape at once; a finished
                               * sequence's c passes through */
    float *out;               /* (B, H) h_t, the output and the next step's h_in at once
                               * (0 past the end: a finished sequence's h is read back from
                               * its last step, not carried) */
    float *gates;             /* (B, 4H) the activated gates i, f, g, o (tape; 0 past the end),
                               * written over the input projection where the step read one */
    const float *packed;      /* the layer's panels (cpu_pack_forward) */
    const float *bias;        /* (4, padded H) b_ih + b_hh per gate, 0 in the padding */
    const int *len;           /* each sequence's length */
    int t;
    int stream_gates;         /* 1: write the gates' tape past the caches (a tape larger than they are;
                               * only where a vector is a whole line: cpu_step_kernel.h) */
    cpu_cell_faults faults;
} cpu_forward_step;

/* What the planted faults change in the cell's backward; the product
 * passes {1.0f, 0, 0}. */
typedef struct cpu_cell_grad_faults {
    float o_grad_scale;     /* the output gate's gradient times this */
    int end_shift;          /* a sequence counts as finished from step len + end_shift */
    int state_not_carried;  /* a finished sequence's dh is not passed on */
} cpu_cell_grad_faults;

/* dgates of every step of a layer as the weight gradients read them: per
 * block of `lanes` units (as the forward's panels), a k-major panel over
 * all T*B rows, a row the gates i, f, g, o of those units side by side
 * (4*lanes floats, 0 past H). The backward's cells stream it as they
 * write each step's dgates for the next step: read in place, nothing of
 * dgates is packed again for the weight gradients. */
typedef struct cpu_gate_tape {
    float *at;           /* block 0, row 0 */
    size_t block_floats; /* from a block to the next: rows * 4 * lanes */
    int lanes;
} cpu_gate_tape;
cpu_gate_tape cpu_gate_tape_at(float *at, int rows, int lanes);
size_t cpu_gate_tape_floats(int rows, int hidden, int lanes);

/* Where the tape holds row `row` of block `block` (its 4*lanes floats). */
static inline float *cpu_gate_tape_row(const cpu_gate_tape *tape, size_t block, size_t row)
{
    return tape->at + block * tape->block_floats + row * 4 * (size_t)tape->lanes;
}

/* Step t of a layer's backward, every sequence, with the cells of step
 * t-1 after it: dgates_t [W_ih | W_hh] gives dx_t and the gradient
 * reaching h_{t-1} in dh_out (a sequence finished at step t passes dh_in
 * on instead; with input 0, dgates_t W_hh gives the latter alone:
 * input_grad_in_step), and, while that is still in L2, the cells of step
 * t-1 turn it into dgates_{t-1}. Without dgates_in (the first call, t =
 * T) there is no product: the cells of step T-1 read dh_in itself. */
typedef struct cpu_backward_step {
    int batch, hidden, input; /* B, H, I */
    const float *dgates_in;   /* (B, 4H) dgates of step t, or NULL */
    const float *packed;      /* the layer's backward panels (cpu_pack_backward) */
    float *dx;                /* (B, I) the gradient of x_t (unwritten where input is 0) */
    const float *dh_in;       /* (B, H) the gradient reaching h_t */
    float *dh_out;            /* (B, H) the gradient reaching h_{t-1} */
    /* the cell of step t-1; gates NULL: none (t = 0) */
    const float *gates, *c, *c_prev, *d_out; /* step t-1's tape, and its output's gradient */
    float *dc;                /* (B, H) c_{t-1}'s gradient in, c_{t-2}'s out */
    float *dgates_out;        /* (B, 4H) dgates of step t-1 (0 past a sequence's end) */
    cpu_gate_tape tape;       /* and again, at rows (t-1)*B ... */
    const int *len;
    int t;
    cpu_cell_grad_faults faults;
} cpu_backward_step;

/* A layer's weight gradients, dW_ih += dgates^T x and dW_hh += dgates^T
 * h_prev, and the bias gradient (dgates' column sums), over the rows of
 * every step: a GEMM in slabs of CPU_WGRAD_SLAB rows, computed mirrored,
 * dW^T = [x | h_prev]^T dgates. Per slab the columns of x and h_prev are
 * packed in strips of strip_rows (k-major: a strip's row k holds its
 * columns of row k), and a kernel adds strip^T times a block's panel of
 * the gate tape (read in place) into the gradient, a tile at a time. The
 * strips are half of what dgates' would be (I + H columns against 4H),
 * and the tape needs no packing at all. The last strip is the bias's: the
 * panel's column sums. */
#define CPU_WGRAD_SLAB 1024
typedef struct cpu_weight_grads {
    int rows;            /* K: T*B */
    int hidden;          /* H: the gradients have 4H rows */
    cpu_gate_tape dgates; /* from the first row (read only) */
    const float *in[2];  /* (rows, width[i]): the layer's input, and the state before each step */
    int width[2];        /* I, H */
    float *grad[2];      /* (4H, width[i]): dW_ih, dW_hh, accumulated */
} cpu_weight_grads;

/* The longest run of x_t W_ih^T or h_{t-1} W_hh^T the forward sums in one
 * chain (cpu_step_kernel.h: tile_dot_blocked, tile_dot_half_blocked); a
 * run of 512 or less (the default shape's) is not split, and costs
 * nothing. A build may set another to measure it (docs/perf.md, "Blocked
 * sums"). */
#ifndef CPU_STEP_SUM_BLOCK
#define CPU_STEP_SUM_BLOCK 512
#endif

struct cpu_wgrad_buffers;
typedef struct cpu_step_kernels {
    const char *isa; /* "avx512", "avx2" */
    int lanes;       /* hidden units per block: one vector */
    /* The forward's panel of a block in this many parts (1 or 2), each over
     * every k and holding 4 / forward_gate_groups gates (cpu_pack_forward):
     * with 2, a tile sums gates i, f, then g, o, each pass over twice the
     * rows (cpu_step_kernel.h, "Gates in two passes"): half the panel
     * bytes read from L2 a step; level to 1% faster on a Zen 3 and a
     * Zen 4 at one thread (docs/perf.md). */
    int forward_gate_groups;
    /* 1: a step multiplies [x_t | h_{t-1}] by panels of [W_ih | W_hh];
     * 0: x W_ih^T of every step is one GEMM before the steps (into the
     * gates' tape), and a step multiplies h_{t-1} by panels of W_hh alone
     * and adds it: half the panel bytes a step. The AVX2 kernels take the
     * second way: on a Zen 3 EPYC (512 KiB of L2 a core, a moving share of
     * L3 near 8 MB) the forward's ratio to oneDNN's fell by 17% at two
     * threads in the median of alternating rounds, and by 5% at one, about
     * the rounds' spread. The AVX-512 kernels keep the first: on a
     * Cooperlake EPYC (a Zen 4) OpenBLAS's GEMM first gained nothing at
     * one thread and made the forward's ratio 11% worse at two
     * (docs/perf.md, "OpenBLAS's projection with AVX-512"). */
    int input_in_step;
    /* The backward's twin: 1: a backward step multiplies dgates_t by
     * panels of [W_ih | W_hh], giving dx_t with the gradient reaching
     * h_{t-1}; 0: by W_hh's alone, and dx of every step is one GEMM after
     * the steps (dgates of every step kept for it), as oneDNN's RNN does:
     * half the panel bytes a step, as input_in_step 0 in the forward. The
     * AVX2 kernels take the second way: on the Zen 3 it made the runner's
     * backward 4.5% faster at one thread, in the median of alternating
     * rounds (docs/perf.md, "The two passes and the input's gradient on
     * the Zen 3"); on a Zen 4 with AVX2 forced it cost 1%, level in a
     * driver of the steps alone. */
    int input_grad_in_step;
    /* blocks [first, end) of a step (block b: units b*lanes ...) */
    void (*forward)(const cpu_forward_step *st, int first, int end);
    /* items [first, end) of a backward step (cpu_backward_items); item
     * `then` is the one this thread reads after them */
    void (*backward)(const cpu_backward_step *st, int first, int end, int then);
    int strip_rows;  /* columns of x or h_prev per strip of the weight gradients' GEMM */
    /* strips [first, end) of the slab of kc rows from k0 into `strips`
     * (the first one first; the bias's strip has nothing to pack) */
    void (*pack_strips)(float *strips, const cpu_weight_grads *wg, int k0, int kc, int first, int end);
    /* strips [first, end) (packed at `strips`) times every block's panel of
     * the slab of kc rows from k0, into the gradients (cpu_wgrad_buffers) */
    void (*weight_grads)(const cpu_weight_grads *wg, const struct cpu_wgrad_buffers *buf, const float *strips,
                         int first, int end, int k0, int kc);
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
 * (zero past H), in gate_groups parts one after the other (1: every gate
 * in a row of the panel; 2: i, f over every k, then g, o); with input 0,
 * over W_hh's alone (w_ih unread). W_hh element (n, k) is read at
 * w_hh[n*H + k], or at w_hh[k*4H + n] when hh_transposed (a planted
 * fault). */
void cpu_pack_forward(float *panels, const float *w_ih, const float *w_hh, int input, int hidden, int lanes,
                      int gate_groups, int hh_transposed, int first, int end);

/* A backward step's work comes in items of 4*lanes columns of
 * [W_ih | W_hh]: first those of h_{t-1} (*dh_items, each with its cells),
 * then those of x_t (*dx_items); and the floats their panels take. */
void cpu_backward_items(int input, int hidden, int lanes, int *dh_items, int *dx_items);
size_t cpu_backward_panel_floats(int input, int hidden, int lanes);

/* Member `rank` of `size`'s share of a backward step's items: dh items
 * [dh[0], dh[1]) and dx items [dx[0], dx[1]) (numbered from 0 in each
 * list). Only the dh items run cells, so each member gets as even a part
 * of each list as the count of items it gets allows: split as one list, h
 * first, one member had every cell and the other waited for it at each
 * step's barrier (11 ms of a 255 ms backward at 2 threads). then[0] and
 * then[1]: the item (numbered over both lists, dh first) the member reads
 * after its dh items and after its dx items, for the kernels' `then`
 * (meaningless for a member without items, which reads none). */
void cpu_backward_share(int dh_items, int dx_items, int rank, int size, int dh[2], int dx[2], int then[2]);

/* Items [first, end) of the backward panels of a layer: for item i, k
 * over the 4H gate rows, the item's 4*lanes columns of W_hh (dh items)
 * or W_ih (dx items), zero past H or I. */
void cpu_pack_backward(float *panels, const float *w_ih, const float *w_hh, int input, int hidden, int lanes,
                       int first, int end);

/* The weight gradients' strips: those of x, then of h_prev, then the
 * bias's (one, with nothing packed). */
int cpu_wgrad_strips(const cpu_weight_grads *wg, int strip_rows);

/* Where the weight gradients' GEMM works: the strips of a slab, every
 * tile's sum over the slabs before the last (partial; only where there
 * is more than one slab), and the bias gradient (col_sums, added to). */
typedef struct cpu_wgrad_buffers {
    float *strips, *partial, *col_sums;
} cpu_wgrad_buffers;
/* (for wg->rows rows; a buffer sized for more rows serves fewer) */
size_t cpu_wgrad_strip_floats(const cpu_weight_grads *wg, int strip_rows);
size_t cpu_wgrad_partial_floats(const cpu_weight_grads *wg, int strip_rows, int lanes);

/* A member's share of the weight gradients in a team (base/parallel.h):
 * its strips of x and h_prev times every block's panel of the tape, slab
 * by slab. A member reads only its own strips and writes only its own
 * columns of the gradients: the team never meets. */
void cpu_weight_grads_member(const cpu_step_kernels *ks, const cpu_weight_grads *wg, const cpu_wgrad_buffers *buf,
                             lc_team *team, int rank, int size);

/* The bias of the cell, (4, blocks*lanes): b_ih + b_hh (b_ih alone when
 * without_hh, a planted fault; either may be NULL). */
void cpu_pack_bias(float *bias, const float *b_ih, const float *b_hh, int hidden, int lanes, int without_hh);

#endif
