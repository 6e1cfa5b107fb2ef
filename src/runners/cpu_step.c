/* The fused step's panels and the choice of kernels (cpu_step.h). */
#include "runners/cpu_step.h"

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
                      int hh_transposed, int first, int end)
{
    const size_t I = (size_t)input, H = (size_t)hidden, K = I + H, width = 4 * (size_t)lanes;
    for (int block = first; block < end; block++) {
        float *panel = panels + (size_t)block * K * width;
        for (size_t k0 = 0; k0 < K; k0 += PACK_RUN) {
            const size_t k1 = k0 + PACK_RUN < K ? k0 + PACK_RUN : K;
            for (size_t q = 0; q < 4; q++)
                for (size_t u = 0; u < (size_t)lanes; u++) {
                    const size_t j = (size_t)block * lanes + u, n = q * H + j;
                    float *slot = panel + q * lanes + u;
                    for (size_t k = k0; k < k1; k++) /* zero past H: the padding units */
                        slot[k * width] = j < H ? weight_at(w_ih, w_hh, I, H, n, k, hh_transposed) : 0.0f;
                }
        }
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
