/* The fused step's kernels for AVX-512 (cpu_step_kernel.h): 16 units per
 * block, 6 rows x 4 gates = 24 of the 32 vector registers accumulating.
 * Built with -mavx512f (CMakeLists.txt); run only where the CPU has it. */
#if defined(__AVX512F__)
#include <immintrin.h>
#include <stdint.h>

#define VL 16
#define MR 6
typedef __m512 vec;
#define v_zero() _mm512_setzero_ps()
#define v_set1(x) _mm512_set1_ps(x)
#define v_load(p) _mm512_loadu_ps(p)
#define v_store(p, v) _mm512_storeu_ps(p, v)
#define v_add(a, b) _mm512_add_ps(a, b)
#define v_sub(a, b) _mm512_sub_ps(a, b)
#define v_mul(a, b) _mm512_mul_ps(a, b)
/* 1/x: the 14-bit estimate and one Newton step (~1 ulp), cheaper than a division */
#define v_recip(x) v_recip_avx512(x)
static inline __m512 v_recip_avx512(__m512 x)
{
    const __m512 r = _mm512_rcp14_ps(x);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(2.0f)));
}
#define v_stream(p, v) _mm512_stream_ps(p, v)
#define v_fmadd(a, b, c) _mm512_fmadd_ps(a, b, c)
#define v_fnmadd(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define v_min(a, b) _mm512_min_ps(a, b)
#define v_max(a, b) _mm512_max_ps(a, b)
#define v_floor(x) _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define v_abs(x) _mm512_abs_ps(x)
#define v_pow2(n) _mm512_scalef_ps(_mm512_set1_ps(1.0f), n)
#define v_copysign(mag, sign)                                                                                  \
    _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(mag), _mm512_set1_epi32(0x7fffffff)), \
                                        _mm512_and_si512(_mm512_castps_si512(sign), _mm512_set1_epi32(INT32_MIN))))
#define v_select_lt(x, limit, a, b) _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, limit, _CMP_LT_OQ), b, a)
#define KNAME(name) name##_avx512
#define INPUT_IN_STEP 1 /* [x_t | h_{t-1}] [W_ih | W_hh] in each step (cpu_step.h, input_in_step) */
#define INPUT_GRAD_IN_STEP 1 /* dgates_t [W_ih | W_hh] in each step (cpu_step.h, input_grad_in_step) */
#define KNAME_ISA "avx512"
#include "runners/cpu_step_kernel.h"
#else
typedef int cpu_step_avx512_unused; /* not an x86-64 build: cpu_step.c offers no AVX-512 kernels */
#endif
