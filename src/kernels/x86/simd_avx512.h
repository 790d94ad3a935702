// 16-lane float vectors for the AVX-512 kernels. Include only from files under src/kernels/x86/avx512/
// (compiled with -mavx512f ...). Everything here has internal linkage (anonymous namespace, static
// members), as the ODR rule of those folders requires.
#pragma once

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), which its flow analysis reports as an
// uninitialised read (GCC bug 105593) wherever they are inlined; the value is never used.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/x86/simd_avx2.h"

namespace ninegrid {
namespace {

struct VecAvx512 {
  using T = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  // Depthwise 3x3 centre tile: 2 rows x 8 outputs (9 weights + 16 accumulators fit in registers).
  static constexpr int kDepthwiseRows3x3 = 2;
  static constexpr int kDepthwiseCols3x3 = 8;

  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static T set1(float f) { return _mm512_set1_ps(f); }
  static T zero() { return _mm512_setzero_ps(); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  // max/min return the second operand when either is NaN (like MAXPS/MINPS).
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }
  // x >= 0 ? x : scale * x, lane by lane.
  static T scale_negative(T x, T scale) {
    const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ);
    return _mm512_mask_mul_ps(x, negative, x, scale);
  }
  // Keeps v in a register once loaded (conv_depthwise_impl.h says why).
  static void pin(T& v) { __asm__("" : "+v"(v)); }


  // Element-wise math support (kernels/x86/vector_math_impl.h).
  // Nearest integer, halves to even.
  static T round_nearest(T x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // y * 2^n for n holding an integer: exact unless the result overflows (inf) or is subnormal (rounded once).
  static T scale_pow2(T y, T n) { return _mm512_scalef_ps(y, n); }
  static T abs(T x) { return _mm512_abs_ps(x); }
  // |magnitude| with the sign bit of `sign`.
  static T copy_sign(T magnitude, T sign) {
    const T sign_bit = _mm512_set1_ps(-0.f);
    return _mm512_or_ps(_mm512_andnot_ps(sign_bit, magnitude), _mm512_and_ps(sign_bit, sign));
  }
  // a > b ? if_greater : otherwise, lane by lane (an ordered compare: NaN lanes take `otherwise`).
  static T select_greater(T a, T b, T if_greater, T otherwise) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), otherwise, if_greater);
  }
  // x = mantissa(x) * 2^exponent(x) with mantissa in [1, 2), for positive normal x; exponent as a float.
  static T exponent(T x) { return _mm512_getexp_ps(x); }
  static T mantissa(T x) { return _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero); }

  // 8-lane vectors, for the 8 real channels of a block whose other 8 are padding (conv_direct_impl.h's
  // half blocks), and the lower 8 lanes of a vector as one.
  using Half = VecAvx2;
  static __m256 low_half(T v) { return _mm512_castps512_ps256(v); }

  // A vector stored to / loaded from two 8-float halves (an NCHW8c output written by 16-lane kernels:
  // lanes 0-7 and 8-15 are two consecutive 8-channel blocks). `hi` null: the upper half is padding,
  // neither stored nor read (zero).
  static void store_halves(float* lo, float* hi, T v) {
    _mm256_storeu_ps(lo, _mm512_castps512_ps256(v));
    if (hi) _mm256_storeu_ps(hi, _mm512_extractf32x8_ps(v, 1));
  }
  static T load_halves(const float* lo, const float* hi) {
    const __m512 low = _mm512_zextps256_ps512(_mm256_loadu_ps(lo));
    return _mm512_insertf32x8(low, hi ? _mm256_loadu_ps(hi) : _mm256_setzero_ps(), 1);
  }

  // The first n (0..16) lanes: loaded (the rest zero) and stored (the memory past them untouched).
  static T load_first(const float* p, int n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
  static void store_first(float* p, T v, int n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }
  static __mmask16 first_lanes(int n) { return static_cast<__mmask16>((1u << n) - 1u); }

  // In-place transpose of 16 rows of 16 floats.
  static void transpose(T r[16]) {
    T a[16], b[16];
    for (int k = 0; k < 8; ++k) {
      a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // Within each 128-bit lane L, b[4q + m] becomes column 4L + m of rows 4q .. 4q + 3.
    for (int q = 0; q < 4; ++q) {
      const __m512d a0 = _mm512_castps_pd(a[4 * q]), a1 = _mm512_castps_pd(a[4 * q + 1]);
      const __m512d a2 = _mm512_castps_pd(a[4 * q + 2]), a3 = _mm512_castps_pd(a[4 * q + 3]);
      b[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
      b[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
      b[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
      b[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    // Row 4L + m of the result is lane L of b[m], b[4 + m], b[8 + m], b[12 + m].
    for (int m = 0; m < 4; ++m) {
      const T e0 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0x88), e1 = _mm512_shuffle_f32x4(b[m], b[4 + m], 0xdd);
      const T f0 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0x88), f1 = _mm512_shuffle_f32x4(b[8 + m], b[12 + m], 0xdd);
      r[m] = _mm512_shuffle_f32x4(e0, f0, 0x88);
      r[4 + m] = _mm512_shuffle_f32x4(e1, f1, 0x88);
      r[8 + m] = _mm512_shuffle_f32x4(e0, f0, 0xdd);
      r[12 + m] = _mm512_shuffle_f32x4(e1, f1, 0xdd);
    }
  }
};

}  // namespace
}  // namespace ninegrid
