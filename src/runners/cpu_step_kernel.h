/* The fused steps' kernels (forward, backward, the weight gradients' GEMM:
 * one tile product, tile_dot, under all three), written once for any
 * vector width. Included by
 * one file per ISA (cpu_step_avx512.c, cpu_step_avx2.c), which first
 * defines the vector vocabulary below; no include guard on purpose.
 *   VL  floats per vector (= hidden units per block)
 *   MR  rows of the batch (or gate columns, in the weight gradients) per
 *       tile: MR x 4 accumulators stay in registers
 *   vec, v_zero, v_set1, v_load, v_store, v_stream (a store past the
 *   caches, to an address aligned to the vector), v_add, v_sub, v_mul, v_recip,
 *   v_fmadd(a, b, c) = a*b + c, v_fnmadd(a, b, c) = c - a*b, v_min, v_max,
 *   v_floor, v_abs, v_pow2(n) = 2^n for integral n in [-126, 127],
 *   v_copysign(mag, sign), v_select_lt(x, limit, a, b) = x < limit ? a : b,
 *   KNAME(name): the ISA's name for a function
 *   INPUT_IN_STEP  1 or 0: cpu_step_kernels.input_in_step
 *   INPUT_GRAD_IN_STEP  1 or 0: cpu_step_kernels.input_grad_in_step
 *   FWD_GATE_GROUPS  1 (default) or 2: cpu_step_kernels.forward_gate_groups;
 *       2 also needs FMR, the forward's rows per tile (FMR x 2
 *       accumulators; below, "Gates in two passes") */
#include "runners/cpu_step.h"

#include <stdint.h>
#include <string.h>

#ifndef FWD_GATE_GROUPS
#define FWD_GATE_GROUPS 1
#endif

/* A prefetch neither faults nor changes a result, so no test would see one
 * at a wrong address. Under AddressSanitizer (ci/sanitize.sh runs the unit
 * and numerics tests so) it reads a byte there instead, which ASan checks. */
#if defined(__SANITIZE_ADDRESS__)
#define CPU_STEP_CHECKED_PREFETCH 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPU_STEP_CHECKED_PREFETCH 1
#endif
#endif
#ifdef CPU_STEP_CHECKED_PREFETCH
#define ask_cache(p, hint) ((void)*(const volatile char *)(p))
#else
#define ask_cache(p, hint) _mm_prefetch((const char *)(p), hint)
#endif

/* floats in a cache line */
#define CPU_LINE_FLOATS 16

/* The most rows whose cells run at once (cells_forward). In one row's cell
 * the four gates' chains meet at c, then tanh(c): some 60 dependent
 * operations from a sum to h, too many for the core's window to overlap
 * with the next row's. Two rows' chains written side by side (each
 * operation over the rows) took the forward's cells about a fifth less
 * time on a Zen 3. Each element goes through the same operations in the
 * same order: the same bits for finite inputs (a NaN may change sign:
 * which one an x86 FMA passes on follows the operand order GCC picks).
 * More rows spill registers and gained less (docs/perf.md, "Where the
 * step's time goes"). */
#ifndef CELL_ROWS
#define CELL_ROWS 2
#endif

/* Each operation below over the R <= CELL_ROWS rows of its arrays, in place */
#define EACH_ROW(i, R) _Pragma("GCC unroll 8") for (int i = 0; i < (R); i++)

/* e^x, |relative error| ~ 2 ulp: e^x = 2^n e^r, |r| <= ln2/2, e^r by its
 * Taylor-like minimax polynomial of degree 7 (Cephes' coefficients); ln2
 * split in two so that r is exact. Inputs are clamped so that 2^n stays
 * normal: sigmoid and tanh need no more range. */
static inline __attribute__((always_inline)) void KNAME(v_exp)(vec x[], int R)
{
    vec n[CELL_ROWS], r[CELL_ROWS], p[CELL_ROWS];
    EACH_ROW(i, R) x[i] = v_min(v_set1(88.3f), v_max(v_set1(-87.3f), x[i])); /* in this order a NaN passes (x86's min/max) */
    EACH_ROW(i, R) n[i] = v_floor(v_fmadd(x[i], v_set1(1.44269504088896341f), v_set1(0.5f)));
    EACH_ROW(i, R) r[i] = v_fnmadd(n[i], v_set1(0.693359375f), x[i]);
    EACH_ROW(i, R) r[i] = v_fnmadd(n[i], v_set1(-2.12194440e-4f), r[i]);
    EACH_ROW(i, R) p[i] = v_fmadd(v_set1(1.9875691500e-4f), r[i], v_set1(1.3981999507e-3f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], r[i], v_set1(8.3334519073e-3f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], r[i], v_set1(4.1665795894e-2f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], r[i], v_set1(1.6666665459e-1f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], r[i], v_set1(5.0000001201e-1f));
    EACH_ROW(i, R) p[i] = v_add(v_fmadd(p[i], v_mul(r[i], r[i]), r[i]), v_set1(1.0f));
    EACH_ROW(i, R) x[i] = v_mul(p[i], v_pow2(n[i]));
}

static inline __attribute__((always_inline)) void KNAME(v_sigmoid)(vec x[], int R)
{
    EACH_ROW(i, R) x[i] = v_sub(v_set1(0.0f), x[i]);
    KNAME(v_exp)(x, R);
    EACH_ROW(i, R) x[i] = v_recip(v_add(v_set1(1.0f), x[i]));
}

/* tanh: near 0 an odd polynomial (Cephes' tanhf), where 1 - 2/(e^2|x| + 1)
 * would lose its relative accuracy to cancellation; that form beyond. */
static inline __attribute__((always_inline)) void KNAME(v_tanh)(vec x[], int R)
{
    vec a[CELL_ROWS], z[CELL_ROWS], p[CELL_ROWS], e[CELL_ROWS];
    EACH_ROW(i, R) a[i] = v_abs(x[i]);
    EACH_ROW(i, R) z[i] = v_mul(x[i], x[i]);
    EACH_ROW(i, R) p[i] = v_fmadd(v_set1(-5.70498872745e-3f), z[i], v_set1(2.06390887954e-2f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], z[i], v_set1(-5.37397155531e-2f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], z[i], v_set1(1.33314422036e-1f));
    EACH_ROW(i, R) p[i] = v_fmadd(p[i], z[i], v_set1(-3.33332819422e-1f));
    EACH_ROW(i, R) p[i] = v_fmadd(v_mul(p[i], z[i]), x[i], x[i]); /* near 0 */
    EACH_ROW(i, R) e[i] = v_add(a[i], a[i]);
    KNAME(v_exp)(e, R);
    EACH_ROW(i, R) e[i] = v_copysign(v_fnmadd(v_set1(2.0f), v_recip(v_add(e[i], v_set1(1.0f))), v_set1(1.0f)), x[i]);
    EACH_ROW(i, R) x[i] = v_select_lt(a[i], v_set1(0.625f), p[i], e[i]);
}

/* n <= VL floats: a full vector straight from memory, a tail through a
 * zeroed copy (H need not be a multiple of VL). */
static inline vec KNAME(load_n)(const float *p, int n)
{
    if (n == VL)
        return v_load(p);
    float tmp[VL] = {0};
    memcpy(tmp, p, (size_t)n * sizeof(float));
    return v_load(tmp);
}

static inline void KNAME(store_n)(float *p, vec v, int n)
{
    if (n == VL) {
        v_store(p, v);
        return;
    }
    float tmp[VL];
    v_store(tmp, v);
    memcpy(p, tmp, (size_t)n * sizeof(float));
}

/* A large gates' tape is read again only by the backward, after the
 * caches have turned over: streamed, it costs no read of the lines it
 * replaces. A small one is better left in the caches for the backward.
 * Only a vector that is a whole line is streamed: an AVX2 vector is half
 * of one, whose other half the next block writes long after (most likely
 * leaving the line's write-combining buffer half full); streamed, the
 * AVX2 forward kernel took about 8% longer on a Zen 3 EPYC (docs/perf.md,
 * "The AVX2 kernels on a Zen 3 EPYC"). */
static inline void KNAME(stream_n)(const cpu_forward_step *st, float *p, vec v, int n)
{
    if (VL == CPU_LINE_FLOATS && st->stream_gates && n == VL && ((uintptr_t)p & (VL * sizeof(float) - 1)) == 0)
        v_stream(p, v);
    else
        KNAME(store_n)(p, v, n);
}

/* Row b, units j .. j+n-1, of a finished sequence: c passes through, the
 * gates and h_t are zero. */
static inline void KNAME(cell_finished)(const cpu_forward_step *st, int b, int j, int n)
{
    const size_t H = (size_t)st->hidden, row = (size_t)b * H + (size_t)j, grow = (size_t)b * 4 * H + (size_t)j;
    for (int q = 0; q < 4; q++)
        KNAME(store_n)(st->gates + grow + (size_t)q * H, v_zero(), n);
    KNAME(store_n)(st->c_out + row, KNAME(load_n)(st->c_in + row, n), n);
    KNAME(store_n)(st->out + row, v_zero(), n);
}

/* The cells of rows b0 .. b0+R-1 (R <= CELL_ROWS, none finished), units
 * j .. j+n-1, from their pre-activations pre[r][q] (gates i, f, g, o;
 * biases not yet added): each operation over the R rows (CELL_ROWS). */
static inline __attribute__((always_inline)) void KNAME(cells_forward)(const cpu_forward_step *st, vec pre[][4], int b0,
                                                                      int R, int j, int n, int padded)
{
    const int H = st->hidden;
    vec gate[4][CELL_ROWS], c[CELL_ROWS], h[CELL_ROWS];
    for (int q = 0; q < 4; q++)
        EACH_ROW(i, R) gate[q][i] = v_add(pre[i][q], v_load(st->bias + (size_t)q * padded + j));
    if (st->faults.i_f_swapped)
        EACH_ROW(i, R) {
            const vec swap = gate[0][i];
            gate[0][i] = gate[1][i];
            gate[1][i] = swap;
        }
    KNAME(v_sigmoid)(gate[0], R);
    KNAME(v_sigmoid)(gate[1], R);
    if (st->faults.g_sigmoid)
        KNAME(v_sigmoid)(gate[2], R);
    else
        KNAME(v_tanh)(gate[2], R);
    KNAME(v_sigmoid)(gate[3], R);
    EACH_ROW(i, R) gate[3][i] = v_mul(gate[3][i], v_set1(st->faults.o_scale));
    EACH_ROW(i, R) {
        const vec c_in = KNAME(load_n)(st->c_in + (size_t)(b0 + i) * H + (size_t)j, n);
        h[i] = c[i] = v_fmadd(gate[1][i], c_in, v_mul(gate[0][i], gate[2][i]));
    }
    KNAME(v_tanh)(h, R);
    for (int i = 0; i < R; i++) {
        const size_t row = (size_t)(b0 + i) * H + (size_t)j, grow = (size_t)(b0 + i) * 4 * H + (size_t)j;
        for (int q = 0; q < 4; q++)
            KNAME(stream_n)(st, st->gates + grow + (size_t)q * H, gate[q][i], n);
        KNAME(store_n)(st->c_out + row, c[i], n);
        KNAME(store_n)(st->out + row, v_mul(gate[3][i], h[i]), n);
    }
}

/* The cells of a tile's rows b0 .. b0+rows-1: CELL_ROWS running rows at a
 * time where they follow each other, else one; a finished row's costs
 * only its stores. */
static inline __attribute__((always_inline)) void KNAME(tile_cells_forward)(const cpu_forward_step *st, vec pre[][4],
                                                                           int b0, int rows, int j, int n, int padded)
{
    for (int r = 0; r < rows;) {
        int running = 0;
        while (running < CELL_ROWS && r + running < rows && st->t < st->len[b0 + r + running])
            running++;
        if (running == CELL_ROWS) {
            KNAME(cells_forward)(st, pre + r, b0 + r, CELL_ROWS, j, n, padded);
            r += CELL_ROWS;
        } else if (running) {
            KNAME(cells_forward)(st, pre + r, b0 + r, 1, j, n, padded);
            r++;
        } else {
            KNAME(cell_finished)(st, b0 + r, j, n);
            r++;
        }
    }
}

/* The operand a kernel reads next (a step's next panel, the weight
 * gradients' next strip), asked of L2 a line a k while it reads this
 * one: lines [line0, lines) of `at` (at NULL: none). A step's panel is
 * read by every row tile of the batch and only its first tile used to
 * wait on L3 for each line: asked ahead, the forward took 9.5% less time
 * on a Xeon with 2 MB of L2 (docs/perf.md, "The next panel asked ahead"). */
typedef struct KNAME(next_panel) {
    const float *at;
    size_t line0, lines;
} KNAME(next_panel);

/* How many of a kernel's first k ask for a line of `next` (one each) */
static inline int KNAME(asking_k)(KNAME(next_panel) next, int K)
{
    if (!next.at || next.line0 >= next.lines || K <= 0)
        return 0;
    return next.lines - next.line0 < (size_t)K ? (int)(next.lines - next.line0) : K;
}

/* acc[r][q] += a[r*a_row] * panel[q] for one k */
static inline __attribute__((always_inline)) void KNAME(dot_k)(vec acc[MR][4], int rows, const float *a, size_t a_row,
                                                              const float *panel)
{
    const vec b0 = v_load(panel), b1 = v_load(panel + VL), b2 = v_load(panel + 2 * VL), b3 = v_load(panel + 3 * VL);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
        const vec ar = v_set1(a[(size_t)r * a_row]);
        acc[r][0] = v_fmadd(ar, b0, acc[r][0]);
        acc[r][1] = v_fmadd(ar, b1, acc[r][1]);
        acc[r][2] = v_fmadd(ar, b2, acc[r][2]);
        acc[r][3] = v_fmadd(ar, b3, acc[r][3]);
    }
}

/* acc[r][q] += sum_k a[r*a_row + k*a_k] * panel[k][q] over k < K: the
 * tile's share of one operand; returns the panel past it. One of a_row
 * and a_k is the constant 1 where it is inlined. The k that ask for a
 * line of the next panel (in a step, a block's or an item's first tiles
 * only) run in a loop of their own: with a test for the line at every k,
 * the loop of 12 FMAs a k spent 8 scalar instructions on it where it
 * needs 4, and the steps of both phases took some 8% longer on the Zen 3
 * (docs/perf.md, "The k loop without its test"). Unrolled, GCC keeps an
 * accumulator on the stack. The sums are in the same order either way. */
static inline __attribute__((always_inline)) const float *
KNAME(tile_dot)(vec acc[MR][4], int rows, const float *a, size_t a_row, size_t a_k, int K, const float *panel,
                KNAME(next_panel) next)
{
    const int asking = KNAME(asking_k)(next, K);
    int k = 0;
    for (; k < asking; k++, panel += 4 * VL, a += a_k) {
        ask_cache(next.at + (next.line0 + (size_t)k) * CPU_LINE_FLOATS, _MM_HINT_T1);
        KNAME(dot_k)(acc, rows, a, a_row, panel);
    }
    for (; k < K; k++, panel += 4 * VL, a += a_k)
        KNAME(dot_k)(acc, rows, a, a_row, panel);
    return panel;
}

static inline __attribute__((always_inline)) void KNAME(zero_tile)(vec acc[MR][4])
{
    for (int r = 0; r < MR; r++)
        for (int q = 0; q < 4; q++)
            acc[r][q] = v_zero();
}

/* tile_dot over a long K in blocks of CPU_STEP_SUM_BLOCK: the first block
 * straight into acc, each later one summed on its own, then added. One
 * chain of K additions has a rounding error that grows like K (its
 * partial sums grow like sqrt(K), K of them rounded); in blocks it grows
 * like sqrt(K * block), as in a blocked GEMM (OpenBLAS, oneDNN). The
 * forward needs it: its sums feed the gates, whose derivatives turn the
 * sum's absolute error into relative errors of everything after (I = 4096,
 * H = 16 failed the gate summed in one chain). The backward's sums (over
 * 4H for dh and dx, over a slab's rows for the weight gradients) feed
 * only linear steps, where one chain's error is what the rule's N counts;
 * blocked they cost 1% more at the default shape (docs/perf.md). */
static inline __attribute__((always_inline)) const float *
KNAME(tile_dot_blocked)(vec acc[MR][4], int rows, const float *a, size_t a_row, size_t a_k, int K, const float *panel,
                        KNAME(next_panel) next)
{
    const int first = K < CPU_STEP_SUM_BLOCK ? K : CPU_STEP_SUM_BLOCK;
    const size_t line0 = next.line0;
    panel = KNAME(tile_dot)(acc, rows, a, a_row, a_k, first, panel, next);
    for (int k0 = first; k0 < K; k0 += CPU_STEP_SUM_BLOCK) {
        const int kb = K - k0 < CPU_STEP_SUM_BLOCK ? K - k0 : CPU_STEP_SUM_BLOCK;
        vec part[MR][4];
        KNAME(zero_tile)(part);
        next.line0 = line0 + (size_t)k0;
        panel = KNAME(tile_dot)(part, rows, a + (size_t)k0 * a_k, a_row, a_k, kb, panel, next);
        for (int r = 0; r < rows; r++)
            for (int q = 0; q < 4; q++)
                acc[r][q] = v_add(acc[r][q], part[r][q]);
    }
    return panel;
}

/* The panel of K rows of row_floats at `at` as the next one, for the
 * row tile of tile_rows from batch row r0: each tile asks for the K lines
 * after its predecessors'. */
static inline KNAME(next_panel) KNAME(next_panel_for)(const float *at, int K, int row_floats, int r0, int tile_rows)
{
    const KNAME(next_panel) next = {at, (size_t)(r0 / tile_rows) * (size_t)K,
                                    (size_t)K * (size_t)row_floats / CPU_LINE_FLOATS};
    return next;
}

/* pre[q] += the input projection x W_ih^T that a GEMM left in the gates'
 * tape, row b, units j .. j+n-1 (the cell then writes the activated gates
 * over it). */
static inline __attribute__((always_inline)) void KNAME(add_projection)(const cpu_forward_step *st, vec pre[4], int b,
                                                                       int j, int n)
{
    const size_t H = (size_t)st->hidden;
    for (int q = 0; q < 4; q++)
        pre[q] = v_add(pre[q], KNAME(load_n)(st->gates + (size_t)b * 4 * H + (size_t)q * H + (size_t)j, n));
}

/* rows (a constant where it is inlined) batch rows from r0, block
 * `block`; block `next` is the one this thread reads after it */
static inline __attribute__((always_inline)) void KNAME(tile_forward)(const cpu_forward_step *st, int block, int next,
                                                                     int r0, int rows)
{
    const int I = st->input, H = st->hidden, blocks = cpu_step_blocks(H, VL);
    const int j = block * VL, n = H - j < VL ? H - j : VL;
    const size_t panel_floats = (size_t)(I + H) * 4 * VL;
    vec acc[MR][4];
    KNAME(zero_tile)(acc);
    const float *panel = st->packed + (size_t)block * panel_floats;
    KNAME(next_panel) ahead = KNAME(next_panel_for)(st->packed + (size_t)next * panel_floats, I + H, 4 * VL, r0, MR);
    if (I) { /* else the input projection is in the tape (cpu_step_kernels.input_in_step) */
        panel = KNAME(tile_dot_blocked)(acc, rows, st->x + (size_t)r0 * I, (size_t)I, 1, I, panel, ahead);
        ahead.line0 += (size_t)I;
    }
    KNAME(tile_dot_blocked)(acc, rows, st->h_in + (size_t)r0 * H, (size_t)H, 1, H, panel, ahead);
    if (!I)
        for (int r = 0; r < rows; r++)
            KNAME(add_projection)(st, acc[r], r0 + r, j, n);
    KNAME(tile_cells_forward)(st, acc, r0, rows, j, n, blocks * VL);
}

/* TILE(r0, rows) over a batch of B rows: tiles of TM rows, then the last
 * rows with a count known at compile time (each its own unrolled copy). */
#define ROW_TILES(B, TM, TILE)                                                                              \
    do {                                                                                                    \
        int r0_ = 0;                                                                                        \
        for (; r0_ + (TM) <= (B); r0_ += (TM))                                                              \
            TILE(r0_, (TM));                                                                                \
        switch ((B) - r0_) {                                                                                \
        case 1: TILE(r0_, 1); break;                                                                        \
        case 2: if (2 < (TM)) TILE(r0_, 2 < (TM) ? 2 : (TM)); break;                                        \
        case 3: if (3 < (TM)) TILE(r0_, 3 < (TM) ? 3 : (TM)); break;                                        \
        case 4: if (4 < (TM)) TILE(r0_, 4 < (TM) ? 4 : (TM)); break;                                        \
        case 5: if (5 < (TM)) TILE(r0_, 5 < (TM) ? 5 : (TM)); break;                                        \
        case 6: if (6 < (TM)) TILE(r0_, 6 < (TM) ? 6 : (TM)); break;                                        \
        case 7: if (7 < (TM)) TILE(r0_, 7 < (TM) ? 7 : (TM)); break;                                        \
        default: break;                                                                                     \
        }                                                                                                   \
    } while (0)

#if FWD_GATE_GROUPS == 2
/* Gates in two passes. A tile of 4-vector panel rows has MR rows, 3 with
 * AVX2's 16 registers, and each k reads 128 bytes of panel for 12 FMAs:
 * on a Zen 3 the sums waited on L2 (docs/perf.md, "The AVX2 kernels on a
 * Zen 3 EPYC"). Here a block's panel is in two parts (cpu_pack_forward's
 * gate_groups), gates i, f over every k, then g, o, and a tile of FMR
 * rows sums the first part, keeps those sums, then sums the second: 12
 * accumulators still, 64 bytes of panel a k. Each sum runs over the same
 * terms in the same order as in tile_forward, and the cell is the same:
 * the same bits. */

/* acc[r][v] += a[r*a_row] * panel[v] for one k, v < 2 */
static inline __attribute__((always_inline)) void KNAME(dot_half_k)(vec acc[FMR][2], int rows, const float *a,
                                                                   size_t a_row, const float *panel)
{
    const vec b0 = v_load(panel), b1 = v_load(panel + VL);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
        const vec ar = v_set1(a[(size_t)r * a_row]);
        acc[r][0] = v_fmadd(ar, b0, acc[r][0]);
        acc[r][1] = v_fmadd(ar, b1, acc[r][1]);
    }
}

/* acc[r][v] += sum_k a[r*a_row + k] * panel[k][v] over k < K, v < 2;
 * returns the panel past it (the k that ask ahead first, as tile_dot) */
static inline __attribute__((always_inline)) const float *
KNAME(tile_dot_half)(vec acc[FMR][2], int rows, const float *a, size_t a_row, int K, const float *panel,
                     KNAME(next_panel) next)
{
    const int asking = KNAME(asking_k)(next, K);
    int k = 0;
    for (; k < asking; k++, panel += 2 * VL, a++) {
        ask_cache(next.at + (next.line0 + (size_t)k) * CPU_LINE_FLOATS, _MM_HINT_T1);
        KNAME(dot_half_k)(acc, rows, a, a_row, panel);
    }
    for (; k < K; k++, panel += 2 * VL, a++)
        KNAME(dot_half_k)(acc, rows, a, a_row, panel);
    return panel;
}

/* tile_dot_half in runs of CPU_STEP_SUM_BLOCK, as tile_dot_blocked */
static inline __attribute__((always_inline)) const float *
KNAME(tile_dot_half_blocked)(vec acc[FMR][2], int rows, const float *a, size_t a_row, int K, const float *panel,
                             KNAME(next_panel) next)
{
    const int first = K < CPU_STEP_SUM_BLOCK ? K : CPU_STEP_SUM_BLOCK;
    const size_t line0 = next.line0;
    panel = KNAME(tile_dot_half)(acc, rows, a, a_row, first, panel, next);
    for (int k0 = first; k0 < K; k0 += CPU_STEP_SUM_BLOCK) {
        const int kb = K - k0 < CPU_STEP_SUM_BLOCK ? K - k0 : CPU_STEP_SUM_BLOCK;
        vec part[FMR][2];
        for (int r = 0; r < FMR; r++)
            part[r][0] = part[r][1] = v_zero();
        next.line0 = line0 + (size_t)k0;
        panel = KNAME(tile_dot_half)(part, rows, a + k0, a_row, kb, panel, next);
        for (int r = 0; r < rows; r++)
            for (int v = 0; v < 2; v++)
                acc[r][v] = v_add(acc[r][v], part[r][v]);
    }
    return panel;
}

/* One part's sums, x's columns (where the step reads them) then h's, as
 * tile_forward sums all four gates; returns the panel past it */
static inline __attribute__((always_inline)) const float *
KNAME(tile_part)(const cpu_forward_step *st, vec acc[FMR][2], int r0, int rows, const float *panel,
                 KNAME(next_panel) ahead)
{
    const int I = st->input, H = st->hidden;
    for (int r = 0; r < FMR; r++)
        acc[r][0] = acc[r][1] = v_zero();
    if (I) {
        panel = KNAME(tile_dot_half_blocked)(acc, rows, st->x + (size_t)r0 * I, (size_t)I, I, panel, ahead);
        ahead.line0 += (size_t)I;
    }
    return KNAME(tile_dot_half_blocked)(acc, rows, st->h_in + (size_t)r0 * H, (size_t)H, H, panel, ahead);
}

/* tile_forward with the gates in two passes */
static inline __attribute__((always_inline)) void KNAME(tile_forward_halves)(const cpu_forward_step *st, int block,
                                                                            int next, int r0, int rows)
{
    const int I = st->input, H = st->hidden, blocks = cpu_step_blocks(H, VL);
    const int j = block * VL, n = H - j < VL ? H - j : VL;
    const size_t panel_floats = (size_t)(I + H) * 4 * VL;
    const float *panel = st->packed + (size_t)block * panel_floats;
    KNAME(next_panel) ahead =
        KNAME(next_panel_for)(st->packed + (size_t)next * panel_floats, 2 * (I + H), 2 * VL, r0, FMR);
    vec i_f[FMR][2], g_o[FMR][2];
    panel = KNAME(tile_part)(st, i_f, r0, rows, panel, ahead);
    ahead.line0 += (size_t)(I + H);
    KNAME(tile_part)(st, g_o, r0, rows, panel, ahead);
    vec pre[FMR][4];
    for (int r = 0; r < rows; r++) {
        pre[r][0] = i_f[r][0], pre[r][1] = i_f[r][1], pre[r][2] = g_o[r][0], pre[r][3] = g_o[r][1];
        if (!I)
            KNAME(add_projection)(st, pre[r], r0 + r, j, n);
    }
    KNAME(tile_cells_forward)(st, pre, r0, rows, j, n, blocks * VL);
}
#define FORWARD_TILE_ROWS FMR
#define FORWARD_TILE(r0, rows) KNAME(tile_forward_halves)(st, block, next, r0, rows)
#else
#define FORWARD_TILE_ROWS MR
#define FORWARD_TILE(r0, rows) KNAME(tile_forward)(st, block, next, r0, rows)
#endif

static void KNAME(step_forward)(const cpu_forward_step *st, int first, int end)
{
    for (int block = first; block < end; block++) {
        const int next = block + 1 < end ? block + 1 : first; /* the last one's: the first, for the next step */
        ROW_TILES(st->batch, FORWARD_TILE_ROWS, FORWARD_TILE);
    }
    _mm_sfence(); /* any streamed tape is in memory before the team meets */
}
#undef FORWARD_TILE
#undef FORWARD_TILE_ROWS

/* A vector streamed past the caches where p is aligned to one, else
 * stored. The backward's tape rows are 4 vectors, contiguous, from a
 * line-aligned buffer, so an AVX2 row streams two whole lines back to
 * back (not the forward's half lines: stream_n). */
static inline void KNAME(stream_or_store)(float *p, vec v)
{
    if (((uintptr_t)p & (VL * sizeof(float) - 1)) == 0)
        v_stream(p, v);
    else
        v_store(p, v);
}

/* Row b of step t-1 of the gate tape, units j .. j+n-1 (a block: j is a
 * multiple of VL): the four gates' gradients, zero past H as a panel's
 * padding is. Streamed: the weight gradients read it after the last step. */
static inline __attribute__((always_inline)) void KNAME(tape_row)(const cpu_backward_step *st, const vec dg[4], int b,
                                                                 int j, int n)
{
    const size_t at = (size_t)(st->t - 1) * (size_t)st->batch + (size_t)b;
    float *row = cpu_gate_tape_row(&st->tape, (size_t)(j / VL), at);
    for (int q = 0; q < 4; q++) {
        vec v = dg[q];
        if (n < VL) {
            float tmp[VL];
            v_store(tmp, v);
            v = KNAME(load_n)(tmp, n);
        }
        KNAME(stream_or_store)(row + q * VL, v);
    }
}

/* The cell of step t-1 backwards, row b, units j .. j+n-1, from dh (the
 * gradient reaching h_{t-1}): its dgates (for the next step, and on the
 * tape), and dc carried one step back. */
static inline __attribute__((always_inline)) void KNAME(cell_backward)(const cpu_backward_step *st, vec dh, int b, int j,
                                                                      int n)
{
    const int H = st->hidden;
    const size_t row = (size_t)b * H + (size_t)j, grow = (size_t)b * 4 * H + (size_t)j;
    float *dg = st->dgates_out + grow;
    vec d[4];
    if (st->t - 1 >= st->len[b] + st->faults.end_shift) { /* finished: no cell, dc passes */
        for (int q = 0; q < 4; q++)
            d[q] = v_zero();
    } else {
        const float *g = st->gates + grow;
        const vec gi = KNAME(load_n)(g, n), gf = KNAME(load_n)(g + H, n), gg = KNAME(load_n)(g + 2 * (size_t)H, n),
                  go = KNAME(load_n)(g + 3 * (size_t)H, n), one = v_set1(1.0f);
        const vec dht = v_add(dh, KNAME(load_n)(st->d_out + row, n));
        vec tc = KNAME(load_n)(st->c + row, n);
        KNAME(v_tanh)(&tc, 1);
        const vec dct = v_fmadd(v_mul(dht, go), v_fnmadd(tc, tc, one), KNAME(load_n)(st->dc + row, n));
        d[0] = v_mul(v_mul(dct, gg), v_fnmadd(gi, gi, gi));
        d[1] = v_mul(v_mul(dct, KNAME(load_n)(st->c_prev + row, n)), v_fnmadd(gf, gf, gf));
        d[2] = v_mul(v_mul(dct, gi), v_fnmadd(gg, gg, one));
        d[3] = v_mul(v_mul(v_mul(dht, tc), v_fnmadd(go, go, go)), v_set1(st->faults.o_grad_scale));
        KNAME(store_n)(st->dc + row, v_mul(dct, gf), n);
    }
    for (int q = 0; q < 4; q++)
        KNAME(store_n)(dg + (size_t)q * H, d[q], n);
    KNAME(tape_row)(st, d, b, j, n);
}

/* Item `item` (cpu_backward_items), batch rows from r0: its columns of
 * dgates_t [W_ih | W_hh], stored as dx_t, or as the gradient reaching
 * h_{t-1} (dh_in where the sequence passes it on) for the cells after. */
static inline __attribute__((always_inline)) void KNAME(tile_backward)(const cpu_backward_step *st, int item,
                                                                      int next, int dh_items, int r0, int rows)
{
    const int H = st->hidden, I = st->input, of_h = item < dh_items, cols = of_h ? H : I;
    const int col = (of_h ? item : item - dh_items) * 4 * VL;
    const size_t panel_floats = 4 * (size_t)H * 4 * VL;
    vec acc[MR][4];
    KNAME(zero_tile)(acc);
    KNAME(tile_dot)(acc, rows, st->dgates_in + (size_t)r0 * 4 * H, 4 * (size_t)H, 1, 4 * H,
                    st->packed + (size_t)item * panel_floats,
                    KNAME(next_panel_for)(st->packed + (size_t)next * panel_floats, 4 * H, 4 * VL, r0, MR));
    for (int r = 0; r < rows; r++) {
        const int b = r0 + r;
        const int passes = st->t >= st->len[b] + st->faults.end_shift && !st->faults.state_not_carried;
        for (int v = 0; v < 4 && col + v * VL < cols; v++) {
            const int j = col + v * VL, n = cols - j < VL ? cols - j : VL;
            if (!of_h) {
                KNAME(store_n)(st->dx + (size_t)b * I + (size_t)j, acc[r][v], n);
                continue;
            }
            const size_t at = (size_t)b * H + (size_t)j;
            KNAME(store_n)(st->dh_out + at, passes ? KNAME(load_n)(st->dh_in + at, n) : acc[r][v], n);
        }
    }
}

/* The cells of step t-1 for the units of dh items [first, end), from the
 * gradients the tiles left in dh_out, row by row. Run in the tiles' order
 * (item by item, a row tile at a time) they read each tape a line or two
 * a row, the rows 4H or H floats apart (8 or 2 KB at the default shape:
 * a page every row or two), which the hardware's prefetch does not
 * follow, and the tapes of step t-1 were written long before (in
 * memory). Row by row, each row's tapes are read in runs of the items'
 * units, which it follows: the backward's steps took about 10% less time
 * at the default shape on a Zen 3 (docs/perf.md, "The backward's cells
 * row by row"). */
static void KNAME(cells_backward)(const cpu_backward_step *st, int first, int end)
{
    const int H = st->hidden, j0 = first * 4 * VL, j1 = end * 4 * VL < H ? end * 4 * VL : H;
    const float *dh = st->dgates_in ? st->dh_out : st->dh_in; /* without a product, dh_in itself */
    for (int b = 0; b < st->batch; b++)
        for (int j = j0; j < j1; j += VL) {
            const int n = j1 - j < VL ? j1 - j : VL;
            KNAME(cell_backward)(st, KNAME(load_n)(dh + (size_t)b * H + (size_t)j, n), b, j, n);
        }
}

static void KNAME(step_backward)(const cpu_backward_step *st, int first, int end, int then)
{
    int dh_items, dx_items;
    cpu_backward_items(st->input, st->hidden, VL, &dh_items, &dx_items);
    if (st->dgates_in)
        for (int item = first; item < end; item++) {
            const int next = item + 1 < end ? item + 1 : then;
#define BACKWARD_TILE(r0, rows) KNAME(tile_backward)(st, item, next, dh_items, r0, rows)
            ROW_TILES(st->batch, MR, BACKWARD_TILE);
#undef BACKWARD_TILE
        }
    if (st->gates && first < dh_items)
        KNAME(cells_backward)(st, first, end < dh_items ? end : dh_items);
    _mm_sfence(); /* the streamed tape is in memory before the team meets */
}

/* Strip s of the weight gradients: its part (0: x, 1: h_prev, 2: the
 * bias's), its first column there and how many it has. */
static inline int KNAME(strip_part)(const cpu_weight_grads *wg, int s, int *c0, int *cols)
{
    const int of_x = cpu_step_blocks(wg->width[0], MR), of_h = cpu_step_blocks(wg->width[1], MR);
    const int part = s < of_x ? 0 : s < of_x + of_h ? 1 : 2;
    *c0 = (s - (part == 0 ? 0 : part == 1 ? of_x : of_x + of_h)) * MR;
    *cols = part == 2 ? 1 : wg->width[part] - *c0 < MR ? wg->width[part] - *c0 : MR;
    return part;
}

/* What a weight-gradient tile asks ahead, a line a row of the slab: the
 * strip the member reads next over the first rows, then its share of the
 * next block's panel (the member's last strips of a block ask for it all,
 * so that the next block's first tile does not wait on memory). */
typedef struct KNAME(wgrad_ahead) {
    KNAME(next_panel) strip, panel;
    int strip_rows; /* rows of the slab over which the strip is asked */
} KNAME(wgrad_ahead);

static KNAME(wgrad_ahead) KNAME(wgrad_ahead_for)(const float *next_strip, const float *next_panel,
                                               int next_panel_rows, int i, int n, int kc)
{
    KNAME(wgrad_ahead) w = {{next_strip, 0, ((size_t)MR * kc + CPU_LINE_FLOATS - 1) / CPU_LINE_FLOATS},
                            {NULL, 0, 0}, 0};
    w.strip_rows = !next_strip ? 0 : w.strip.lines < (size_t)kc ? (int)w.strip.lines : kc;
    const size_t per_tile = (size_t)(kc - w.strip_rows), lines = (size_t)next_panel_rows * 4 * VL / CPU_LINE_FLOATS;
    /* the last `askers` strips, or from the first where the member has fewer (the head first: the
     * next block's first tile reads it first) */
    const long askers = per_tile ? (long)((lines + per_tile - 1) / per_tile) : 0;
    const long d = i - (n > askers ? n - askers : 0);
    if (next_panel && per_tile && d >= 0) {
        w.panel.at = next_panel;
        w.panel.line0 = (size_t)d * per_tile;
        w.panel.lines = lines;
    }
    return w;
}

/* acc += a's rows times the panel over the slab's kc rows, asking ahead. */
static inline __attribute__((always_inline)) void KNAME(tile_slab)(vec acc[MR][4], int rows, const float *a,
                                                                  size_t a_row, size_t a_k, int kc,
                                                                  const float *panel, KNAME(wgrad_ahead) ahead)
{
    const int ks = ahead.strip_rows;
    panel = KNAME(tile_dot)(acc, rows, a, a_row, a_k, ks, panel, ahead.strip);
    KNAME(tile_dot)(acc, rows, a + (size_t)ks * a_k, a_row, a_k, kc - ks, panel, ahead.panel);
}

/* rows (a constant where it is inlined) columns of strip s (from column
 * c0 of part `part`) times block p's panel: its sum over the slabs so far
 * kept in `partial`, and after the last slab added into the gradient,
 * transposed (the tile is dW^T's). */
static inline __attribute__((always_inline)) void
KNAME(tile_weight_grads)(const cpu_weight_grads *wg, const cpu_wgrad_buffers *buf, const float *strip, int s, int part,
                         int c0, int rows, int p, const float *panel, int kc, int first_slab, int last_slab,
                         KNAME(wgrad_ahead) ahead)
{
    const int H = wg->hidden, j0 = p * VL, n = H - j0 < VL ? H - j0 : VL;
    float *sum = buf->partial ? buf->partial + ((size_t)s * (size_t)cpu_step_blocks(H, VL) + (size_t)p) * MR * 4 * VL
                              : NULL;
    if (!first_slab) /* its lines on their way while the tile sums */
        for (int line = 0; line < rows * 4 * VL; line += CPU_LINE_FLOATS)
            ask_cache(sum + line, _MM_HINT_T0);
    vec acc[MR][4];
    KNAME(zero_tile)(acc);
    KNAME(tile_slab)(acc, rows, strip, 1, MR, kc, panel, ahead);
    for (int r = 0; r < rows && !first_slab; r++)
        for (int q = 0; q < 4; q++)
            acc[r][q] = v_add(acc[r][q], v_load(sum + ((size_t)r * 4 + (size_t)q) * VL));
    if (!last_slab) {
        for (int r = 0; r < rows; r++)
            for (int q = 0; q < 4; q++)
                v_store(sum + ((size_t)r * 4 + (size_t)q) * VL, acc[r][q]);
        return;
    }
    float tile[MR][4 * VL];
    for (int r = 0; r < rows; r++)
        for (int q = 0; q < 4; q++)
            v_store(tile[r] + q * VL, acc[r][q]);
    const size_t W = (size_t)wg->width[part];
    for (int q = 0; q < 4; q++)
        for (int u = 0; u < n; u++) {
            float *g = wg->grad[part] + ((size_t)q * H + (size_t)j0 + (size_t)u) * W + (size_t)c0;
            for (int r = 0; r < rows; r++)
                g[r] += tile[r][q * VL + u];
        }
}

/* The bias's strip: block p's panel summed over the slab's rows, added
 * into the bias gradient (gate q's units j0 ... at col_sums[q*H + j0]). */
static void KNAME(tile_bias_grads)(const cpu_weight_grads *wg, const cpu_wgrad_buffers *buf, int p,
                                   const float *panel, int kc, KNAME(wgrad_ahead) ahead)
{
    static const float one = 1.0f;
    const int H = wg->hidden, j0 = p * VL, n = H - j0 < VL ? H - j0 : VL;
    vec acc[MR][4];
    KNAME(zero_tile)(acc);
    KNAME(tile_slab)(acc, 1, &one, 0, 0, kc, panel, ahead);
    for (int q = 0; q < 4; q++) {
        float *cs = buf->col_sums + (size_t)q * H + (size_t)j0;
        KNAME(store_n)(cs, v_add(KNAME(load_n)(cs, n), acc[0][q]), n);
    }
}

/* Strip s's element (k, r) is column c0 + r of x or h_prev at row k0+k
 * (zero past its last column), k-major. Strip by strip: a strip's writes
 * run in order, and the lines it reads (one a row) serve the next strips
 * from the caches. */
static void KNAME(pack_strips)(float *strips, const cpu_weight_grads *wg, int k0, int kc, int first, int end)
{
    for (int s = first; s < end; s++) {
        int c0, cols;
        const int part = KNAME(strip_part)(wg, s, &c0, &cols);
        if (part == 2)
            continue;
        float *strip = strips + (size_t)(s - first) * MR * (size_t)kc;
        const size_t W = (size_t)wg->width[part];
        const float *in = wg->in[part] + (size_t)k0 * W + (size_t)c0;
        for (size_t k = 0; k < (size_t)kc; k++)
            for (int r = 0; r < MR; r++)
                strip[k * MR + (size_t)r] = r < cols ? in[k * W + (size_t)r] : 0.0f;
    }
}

/* Block by block (a block's panel of the slab stays in L2 while the
 * strips pass), strip by strip. */
static void KNAME(weight_grads)(const cpu_weight_grads *wg, const cpu_wgrad_buffers *buf, const float *strips,
                                int first, int end, int k0, int kc)
{
    const int P = cpu_step_blocks(wg->hidden, VL), first_slab = k0 == 0, last_slab = k0 + kc >= wg->rows;
    for (int p = 0; p < P; p++) {
        const float *panel = cpu_gate_tape_row(&wg->dgates, (size_t)p, (size_t)k0);
        /* read after this block: the next one, or the next slab's first (its rows only) */
        const int next_kc = wg->rows - (k0 + kc) < CPU_WGRAD_SLAB ? wg->rows - (k0 + kc) : CPU_WGRAD_SLAB;
        const float *next_panel = p + 1 < P  ? cpu_gate_tape_row(&wg->dgates, (size_t)p + 1, (size_t)k0)
                                  : !last_slab ? cpu_gate_tape_row(&wg->dgates, 0, (size_t)(k0 + kc))
                                               : NULL;
        const int next_rows = p + 1 < P ? kc : next_kc;
        for (int s = first; s < end; s++) {
            const float *strip = strips + (size_t)(s - first) * MR * (size_t)kc;
            /* the strip read after this one: the next, or the first, for the next block */
            const float *next = s + 1 < end ? strip + MR * (size_t)kc : s > first ? strips : NULL;
            const KNAME(wgrad_ahead) ahead =
                KNAME(wgrad_ahead_for)(next, next_panel, next_rows, s - first, end - first, kc);
            int c0, cols;
            const int part = KNAME(strip_part)(wg, s, &c0, &cols);
            if (part == 2) {
                KNAME(tile_bias_grads)(wg, buf, p, panel, kc, ahead);
                continue;
            }
#define WGRAD_TILE(r0, n) \
    KNAME(tile_weight_grads)(wg, buf, strip, s, part, c0, n, p, panel, kc, first_slab, last_slab, ahead)
            ROW_TILES(cols, MR, WGRAD_TILE);
#undef WGRAD_TILE
        }
    }
}

const cpu_step_kernels KNAME(cpu_step_kernels) = {
    .isa = KNAME_ISA,
    .lanes = VL,
    .forward_gate_groups = FWD_GATE_GROUPS,
    .input_in_step = INPUT_IN_STEP,
    .input_grad_in_step = INPUT_GRAD_IN_STEP,
    .forward = KNAME(step_forward),
    .backward = KNAME(step_backward),
    .strip_rows = MR,
    .pack_strips = KNAME(pack_strips),
    .weight_grads = KNAME(weight_grads),
};
