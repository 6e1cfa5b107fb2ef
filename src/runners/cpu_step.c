/* The fused step's panels and the choice of kernels (cpu_step.h). */
#include "runners/cpu_step.h"
#include "device/trace.h"

#include <string.h>

#if defined(__x86_64__)
extern const cpu_step_kernels cpu_step_kernels_avx512, cpu_step_kernels_avx2;
#endif

const cpu_step_kernels *cpu_step_kernels_for(const char *isa)
{
#if defined(__x86_64__)
    /* widest first; __builtin_cpu_supports also asks whether the OS saves the registers */
    if ((!isa || !strcmp(isa, "avx512")) && __builtin_cpu_supports("avx512f"))
        return &cpu_step_kernels_avx512;
    if ((!isa || !strcmp(isa, "avx2")) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &cpu_step_kernels_avx2;
#else
    (void)isa;
#endif
    return NULL;
}

int cpu_step_blocks(int hidden, int lanes)
{
    return (hidden + lanes - 1) / lanes;
}

size_t cpu_forward_panel_floats(int input, int hidden, int lanes)
{
    return (size_t)cpu_step_blocks(hidden, lanes) * (size_t)(input + hidden) * 4 * (size_t)lanes;
}

/* Column k of the panel holds element k of 4*lanes rows of [W_ih | W_hh]:
 * read row by row in runs of PACK_RUN columns, so that a run's lines of
 * the panel stay in L1 while every row fills its slot of them. */
#define PACK_RUN 16

static float weight_at(const float *w_ih, const float *w_hh, size_t I, size_t H, size_t n, size_t k, int hh_transposed)
{
    if (k < I)
        return w_ih[n * I + k];
    k -= I;
    return hh_transposed ? w_hh[k * 4 * H + n] : w_hh[n * H + k];
}

void cpu_pack_forward(float *panels, const float *w_ih, const float *w_hh, int input, int hidden, int lanes,
                      int gate_groups, int hh_transposed, int first, int end)
{
    const size_t I = (size_t)input, H = (size_t)hidden, K = I + H, per_group = 4 / (size_t)gate_groups;
    const size_t width = per_group * (size_t)lanes;
    for (int block = first; block < end; block++) {
        float *panel = panels + (size_t)block * K * 4 * (size_t)lanes;
        for (size_t k0 = 0; k0 < K; k0 += PACK_RUN) {
            const size_t k1 = k0 + PACK_RUN < K ? k0 + PACK_RUN : K;
            for (size_t q = 0; q < 4; q++)
                for (size_t u = 0; u < (size_t)lanes; u++) {
                    const size_t j = (size_t)block * lanes + u, n = q * H + j;
                    float *slot = panel + q / per_group * K * width + q % per_group * lanes + u;
                    for (size_t k = k0; k < k1; k++) /* zero past H: the padding units */
                        slot[k * width] = j < H ? weight_at(w_ih, w_hh, I, H, n, k, hh_transposed) : 0.0f;
                }
        }
    }
}

void cpu_backward_items(int input, int hidden, int lanes, int *dh_items, int *dx_items)
{
    *dh_items = cpu_step_blocks(hidden, 4 * lanes);
    *dx_items = cpu_step_blocks(input, 4 * lanes);
}

/* Positions [0, items) take the dh items in proportion, Bresenham's way:
 * floor(pos * dh / items) of them come before position pos, so a member's
 * positions [first, end) are a contiguous run of each list. */
void cpu_backward_share(int dh_items, int dx_items, int rank, int size, int dh[2], int dx[2], int then[2])
{
    const long items = (long)dh_items + dx_items;
    const long first = items * rank / size, end = items * (rank + 1) / size;
    dh[0] = (int)(first * dh_items / items);
    dh[1] = (int)(end * dh_items / items);
    dx[0] = (int)first - dh[0];
    dx[1] = (int)end - dh[1];
    /* the member reads its dh list, then its dx list, then (next step) its
     * dh list again; an empty list is passed over */
    const int dh_first = dh[1] > dh[0] ? dh[0] : dh_items + dx[0];
    const int dx_first = dx[1] > dx[0] ? dh_items + dx[0] : dh[0];
    then[0] = dx_first;
    then[1] = dh_first;
}

size_t cpu_backward_panel_floats(int input, int hidden, int lanes)
{
    int dh_items, dx_items;
    cpu_backward_items(input, hidden, lanes, &dh_items, &dx_items);
    return (size_t)(dh_items + dx_items) * 4 * (size_t)hidden * 4 * (size_t)lanes;
}

/* Columns [col, col+width) of the rows [0, rows) of a row-major matrix
 * with `cols` columns, as a k-major panel: a run of each row, zero past
 * the matrix's last column. */
static void pack_column_run(float *panel, const float *m, size_t rows, size_t cols, size_t col, size_t width)
{
    const size_t n = cols - col < width ? cols - col : width;
    for (size_t k = 0; k < rows; k++) {
        memcpy(panel + k * width, m + k * cols + col, n * sizeof(float));
        memset(panel + k * width + n, 0, (width - n) * sizeof(float));
    }
}

void cpu_pack_backward(float *panels, const float *w_ih, const float *w_hh, int input, int hidden, int lanes,
                       int first, int end)
{
    int dh_items, dx_items;
    cpu_backward_items(input, hidden, lanes, &dh_items, &dx_items);
    const size_t width = 4 * (size_t)lanes, K = 4 * (size_t)hidden;
    for (int item = first; item < end; item++) {
        const int of_h = item < dh_items;
        pack_column_run(panels + (size_t)item * K * width, of_h ? w_hh : w_ih, K, (size_t)(of_h ? hidden : input),
                        (size_t)(of_h ? item : item - dh_items) * width, width);
    }
}

cpu_gate_tape cpu_gate_tape_at(float *at, int rows, int lanes)
{
    const cpu_gate_tape tape = {at, (size_t)rows * 4 * (size_t)lanes, lanes};
    return tape;
}

size_t cpu_gate_tape_floats(int rows, int hidden, int lanes)
{
    return (size_t)cpu_step_blocks(hidden, lanes) * cpu_gate_tape_at(NULL, rows, lanes).block_floats;
}

int cpu_wgrad_strips(const cpu_weight_grads *wg, int strip_rows)
{
    return cpu_step_blocks(wg->width[0], strip_rows) + cpu_step_blocks(wg->width[1], strip_rows) + 1;
}

/* A slab's rows: CPU_WGRAD_SLAB, or all of them where there are fewer (a
 * short problem's buffers are not sized for a slab it never fills: T*B =
 * 1 at I = 10^6 took 8 GB). */
static size_t slab_rows(const cpu_weight_grads *wg)
{
    return wg->rows < CPU_WGRAD_SLAB ? (size_t)wg->rows : CPU_WGRAD_SLAB;
}

size_t cpu_wgrad_strip_floats(const cpu_weight_grads *wg, int strip_rows)
{
    return (size_t)cpu_wgrad_strips(wg, strip_rows) * (size_t)strip_rows * slab_rows(wg);
}

size_t cpu_wgrad_partial_floats(const cpu_weight_grads *wg, int strip_rows, int lanes)
{
    if (wg->rows <= CPU_WGRAD_SLAB)
        return 0;
    return (size_t)cpu_wgrad_strips(wg, strip_rows) * (size_t)cpu_step_blocks(wg->hidden, lanes) *
           (size_t)strip_rows * 4 * (size_t)lanes;
}

/* Slab by slab, the member's strips (its own) then their tiles. */
void cpu_weight_grads_member(const cpu_step_kernels *ks, const cpu_weight_grads *wg, const cpu_wgrad_buffers *buf,
                             lc_team *team, int rank, int size)
{
    (void)team;
    const int S = cpu_wgrad_strips(wg, ks->strip_rows);
    const int s_first = S * rank / size, s_end = S * (rank + 1) / size;
    float *strips = buf->strips + (size_t)s_first * (size_t)ks->strip_rows * slab_rows(wg);
    for (int k0 = 0; k0 < wg->rows; k0 += CPU_WGRAD_SLAB) {
        const int kc = wg->rows - k0 < CPU_WGRAD_SLAB ? wg->rows - k0 : CPU_WGRAD_SLAB;
        TRACE_OP("pack.wgrad_strips", ks->pack_strips(strips, wg, k0, kc, s_first, s_end));
        TRACE_OP("gemm.weight_grads", ks->weight_grads(wg, buf, strips, s_first, s_end, k0, kc));
    }
}

void cpu_pack_bias(float *bias, const float *b_ih, const float *b_hh, int hidden, int lanes, int without_hh)
{
    const int padded = cpu_step_blocks(hidden, lanes) * lanes;
    for (int q = 0; q < 4; q++)
        for (int j = 0; j < padded; j++) {
            const int n = q * hidden + j;
            float b = 0.0f;
            if (j < hidden) {
                b = b_ih ? b_ih[n] : 0.0f;
                b += b_hh && !without_hh ? b_hh[n] : 0.0f;
            }
            bias[q * padded + j] = b;
        }
}
