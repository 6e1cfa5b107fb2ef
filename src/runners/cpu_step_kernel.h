/* The fused step's kernels, written once for any vector width. Included by
 * one file per ISA (cpu_step_avx512.c, cpu_step_avx2.c), which first
 * defines the vector vocabulary below; no include guard on purpose.
 *   VL  floats per vector (= hidden units per block)
 *   MR  rows of the batch per tile: MR x 4 accumulators stay in registers
 *   vec, v_zero, v_set1, v_load, v_store, v_stream (a store past the
 *   caches, to an address aligned to the vector), v_add, v_sub, v_mul, v_recip,
 *   v_fmadd(a, b, c) = a*b + c, v_fnmadd(a, b, c) = c - a*b, v_min, v_max,
 *   v_floor, v_abs, v_pow2(n) = 2^n for integral n in [-126, 127],
 *   v_copysign(mag, sign), v_select_lt(x, limit, a, b) = x < limit ? a : b,
 *   KNAME(name): the ISA's name for a function */
#include "runners/cpu_step.h"

#include <stdint.h>
#include <string.h>

/* e^x, |relative error| ~ 2 ulp: e^x = 2^n e^r, |r| <= ln2/2, e^r by its
 * Taylor-like minimax polynomial of degree 7 (Cephes' coefficients); ln2
 * split in two so that r is exact. Inputs are clamped so that 2^n stays
 * normal: sigmoid and tanh need no more range. */
static inline vec KNAME(v_exp)(vec x)
{
    x = v_min(v_set1(88.3f), v_max(v_set1(-87.3f), x)); /* in this order a NaN passes (x86's min/max) */
    const vec n = v_floor(v_fmadd(x, v_set1(1.44269504088896341f), v_set1(0.5f)));
    vec r = v_fnmadd(n, v_set1(0.693359375f), x);
    r = v_fnmadd(n, v_set1(-2.12194440e-4f), r);
    vec p = v_set1(1.9875691500e-4f);
    p = v_fmadd(p, r, v_set1(1.3981999507e-3f));
    p = v_fmadd(p, r, v_set1(8.3334519073e-3f));
    p = v_fmadd(p, r, v_set1(4.1665795894e-2f));
    p = v_fmadd(p, r, v_set1(1.6666665459e-1f));
    p = v_fmadd(p, r, v_set1(5.0000001201e-1f));
    p = v_add(v_fmadd(p, v_mul(r, r), r), v_set1(1.0f));
    return v_mul(p, v_pow2(n));
}

static inline vec KNAME(v_sigmoid)(vec x)
{
    return v_recip(v_add(v_set1(1.0f), KNAME(v_exp)(v_sub(v_set1(0.0f), x))));
}

/* tanh: near 0 an odd polynomial (Cephes' tanhf), where 1 - 2/(e^2|x| + 1)
 * would lose its relative accuracy to cancellation; that form beyond. */
static inline vec KNAME(v_tanh)(vec x)
{
    const vec a = v_abs(x), z = v_mul(x, x);
    vec p = v_set1(-5.70498872745e-3f);
    p = v_fmadd(p, z, v_set1(2.06390887954e-2f));
    p = v_fmadd(p, z, v_set1(-5.37397155531e-2f));
    p = v_fmadd(p, z, v_set1(1.33314422036e-1f));
    p = v_fmadd(p, z, v_set1(-3.33332819422e-1f));
    const vec small = v_fmadd(v_mul(p, z), x, x);
    const vec e = KNAME(v_exp)(v_add(a, a));
    const vec large = v_copysign(v_fnmadd(v_set1(2.0f), v_recip(v_add(e, v_set1(1.0f))), v_set1(1.0f)), x);
    return v_select_lt(a, v_set1(0.625f), small, large);
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
 * replaces. A small one is better left in the caches for the backward. */
static inline void KNAME(stream_n)(const cpu_forward_step *st, float *p, vec v, int n)
{
    if (st->stream_gates && n == VL && ((uintptr_t)p & (VL * sizeof(float) - 1)) == 0)
        v_stream(p, v);
    else
        KNAME(store_n)(p, v, n);
}

/* The cell of row b, units j .. j+n-1, from its pre-activations pre[q]
 * (gates i, f, g, o; biases not yet added). */
static inline __attribute__((always_inline)) void KNAME(cell_forward)(const cpu_forward_step *st, const vec pre[4], int b, int j, int n, int padded)
{
    const int H = st->hidden;
    const size_t row = (size_t)b * H + (size_t)j, grow = (size_t)b * 4 * H + (size_t)j;
    const vec c_in = KNAME(load_n)(st->c_in + row, n);
    if (st->t >= st->len[b]) { /* finished: the state passes through, the tape is zero */
        for (int q = 0; q < 4; q++)
            KNAME(store_n)(st->gates + grow + (size_t)q * H, v_zero(), n);
        KNAME(store_n)(st->c_tape + row, c_in, n);
        KNAME(store_n)(st->c_out + row, c_in, n);
        KNAME(store_n)(st->h_out + row, KNAME(load_n)(st->h_in + row, n), n);
        KNAME(store_n)(st->out + row, v_zero(), n);
        return;
    }
    vec p[4];
    for (int q = 0; q < 4; q++)
        p[q] = v_add(pre[q], v_load(st->bias + (size_t)q * padded + j));
    if (st->faults.i_f_swapped) {
        const vec swap = p[0];
        p[0] = p[1];
        p[1] = swap;
    }
    const vec gi = KNAME(v_sigmoid)(p[0]), gf = KNAME(v_sigmoid)(p[1]);
    const vec gg = st->faults.g_sigmoid ? KNAME(v_sigmoid)(p[2]) : KNAME(v_tanh)(p[2]);
    const vec go = v_mul(KNAME(v_sigmoid)(p[3]), v_set1(st->faults.o_scale));
    const vec c = v_fmadd(gf, c_in, v_mul(gi, gg));
    const vec h = v_mul(go, KNAME(v_tanh)(c));
    const vec g[4] = {gi, gf, gg, go};
    for (int q = 0; q < 4; q++)
        KNAME(stream_n)(st, st->gates + grow + (size_t)q * H, g[q], n);
    KNAME(store_n)(st->c_tape + row, c, n);
    KNAME(store_n)(st->c_out + row, c, n);
    KNAME(store_n)(st->h_out + row, h, n);
    KNAME(store_n)(st->out + row, h, n);
}

/* acc[r][q] += sum_k a[r*lda + k] * panel[k][q] over k < K: the tile's
 * share of one operand (x_t or h_{t-1}); returns the panel past it. */
static inline __attribute__((always_inline)) const float *
KNAME(tile_dot)(vec acc[MR][4], int rows, const float *a, int lda, int K, const float *panel)
{
    for (int k = 0; k < K; k++, panel += 4 * VL) {
        const vec b0 = v_load(panel), b1 = v_load(panel + VL), b2 = v_load(panel + 2 * VL),
                  b3 = v_load(panel + 3 * VL);
#pragma GCC unroll 8
        for (int r = 0; r < rows; r++) {
            const vec ar = v_set1(a[(size_t)r * lda + k]);
            acc[r][0] = v_fmadd(ar, b0, acc[r][0]);
            acc[r][1] = v_fmadd(ar, b1, acc[r][1]);
            acc[r][2] = v_fmadd(ar, b2, acc[r][2]);
            acc[r][3] = v_fmadd(ar, b3, acc[r][3]);
        }
    }
    return panel;
}

/* rows (a constant where it is inlined) batch rows from r0, block `block` */
static inline __attribute__((always_inline)) void KNAME(tile_forward)(const cpu_forward_step *st, int block, int r0,
                                                                     int rows)
{
    const int I = st->input, H = st->hidden, blocks = cpu_step_blocks(H, VL);
    const int j = block * VL, n = H - j < VL ? H - j : VL;
    vec acc[MR][4];
    for (int r = 0; r < MR; r++)
        for (int q = 0; q < 4; q++)
            acc[r][q] = v_zero();
    const float *panel = st->packed + (size_t)block * (size_t)(I + H) * 4 * VL;
    panel = KNAME(tile_dot)(acc, rows, st->x + (size_t)r0 * I, I, I, panel);
    KNAME(tile_dot)(acc, rows, st->h_in + (size_t)r0 * H, H, H, panel);
    for (int r = 0; r < rows; r++)
        KNAME(cell_forward)(st, acc[r], r0 + r, j, n, blocks * VL);
}

static void KNAME(step_forward)(const cpu_forward_step *st, int first, int end)
{
    for (int block = first; block < end; block++) {
        int r0 = 0;
        for (; r0 + MR <= st->batch; r0 += MR)
            KNAME(tile_forward)(st, block, r0, MR);
        switch (st->batch - r0) { /* the last rows, each count its own unrolled copy */
#define LAST_ROWS(R) case R: if (R < MR) KNAME(tile_forward)(st, block, r0, R < MR ? R : MR); break;
            LAST_ROWS(1) LAST_ROWS(2) LAST_ROWS(3) LAST_ROWS(4) LAST_ROWS(5) LAST_ROWS(6) LAST_ROWS(7)
#undef LAST_ROWS
        default: break;
        }
    }
    _mm_sfence(); /* the streamed tape is in memory before the team meets */
}

const cpu_step_kernels KNAME(cpu_step_kernels) = {
    .isa = KNAME_ISA,
    .lanes = VL,
    .forward = KNAME(step_forward),
};
