// 8-lane float vectors for the AVX2+FMA kernels. Include only from files under src/kernels/x86/avx2/
// (compiled with -mavx2 -mfma) and, through simd_avx512.h, src/kernels/x86/avx512/. Everything here has internal linkage, as the ODR rule of those folders
// requires.
#pragma once

#include <immintrin.h>

namespace ninegrid {
namespace {

struct VecAvx2 {
  using T = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  // Depthwise 3x3 tile: 1 row x 8 outputs (8 accumulators; the weights come from L1 with the FMAs).
  static constexpr int kDepthwiseRows3x3 = 1;
  static constexpr int kDepthwiseCols3x3 = 8;

  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static T set1(float f) { return _mm256_set1_ps(f); }
  static T zero() { return _mm256_setzero_ps(); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  // max/min return the second operand when either is NaN (like MAXPS/MINPS).
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }
  // x >= 0 ? x : scale * x, lane by lane.
  static T scale_negative(T x, T scale) {
    const T negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGE_UQ);
    return _mm256_blendv_ps(x, _mm256_mul_ps(x, scale), negative);
  }


  // Element-wise math support (kernels/x86/vector_math_impl.h).
  // Nearest integer, halves to even.
  static T round_nearest(T x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // y * 2^n for n holding an integer with |n| <= 252: exact unless the result overflows (inf) or is
  // subnormal (rounded once). 2^n is applied as 2^h * 2^(n - h), h = floor(n / 2), so that each factor is
  // a normal float even where 2^n itself is not (n = 128, or n < -126 for subnormal results).
  static T scale_pow2(T y, T n) {
    const __m256i k = _mm256_cvtps_epi32(n);
    const __m256i h = _mm256_srai_epi32(k, 1);
    return _mm256_mul_ps(_mm256_mul_ps(y, pow2(h)), pow2(_mm256_sub_epi32(k, h)));
  }
  static T abs(T x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), x); }
  // |magnitude| with the sign bit of `sign`.
  static T copy_sign(T magnitude, T sign) {
    const T sign_bit = _mm256_set1_ps(-0.f);
    return _mm256_or_ps(_mm256_andnot_ps(sign_bit, magnitude), _mm256_and_ps(sign_bit, sign));
  }
  // a > b ? if_greater : otherwise, lane by lane (an ordered compare: NaN lanes take `otherwise`).
  static T select_greater(T a, T b, T if_greater, T otherwise) {
    return _mm256_blendv_ps(otherwise, if_greater, _mm256_cmp_ps(a, b, _CMP_GT_OQ));
  }
  // x = mantissa(x) * 2^exponent(x) with mantissa in [1, 2), for positive normal x (read from the bits:
  // other inputs give meaningless values); exponent as a float.
  static T exponent(T x) {
    const __m256i biased = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(biased, _mm256_set1_epi32(127)));
  }
  static T mantissa(T x) {
    const __m256i fraction = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x007fffff));
    return _mm256_castsi256_ps(_mm256_or_si256(fraction, _mm256_set1_epi32(0x3f800000)));
  }
  // 2^k for integer lanes k in [-126, 127].
  static T pow2(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
  }

  // The first n (0..8) lanes: loaded (the rest zero) and stored (the memory past them untouched).
  static T load_first(const float* p, int n) { return _mm256_maskload_ps(p, first_lanes(n)); }
  // A whole vector takes a plain store: AMD's cores before Zen 4 run a vmaskmovps store as a long microcoded
  // sequence, and the kernels call this with n = 8 in their hot paths (the first-layer kernel's blocked
  // stores ran at a fifth of the FMA peak on a Zen 3 core through it).
  static void store_first(float* p, T v, int n) {
    if (n >= kLanes) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, first_lanes(n), v);
  }
  static __m256i first_lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }

  // In-place transpose of 8 rows of 8 floats.
  static void transpose(T r[8]) {
    T a[8], b[8];
    for (int k = 0; k < 4; ++k) {
      a[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      a[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // Within each 128-bit lane L, b[4q + m] becomes column 4L + m of rows 4q .. 4q + 3.
    for (int q = 0; q < 2; ++q) {
      const __m256d a0 = _mm256_castps_pd(a[4 * q]), a1 = _mm256_castps_pd(a[4 * q + 1]);
      const __m256d a2 = _mm256_castps_pd(a[4 * q + 2]), a3 = _mm256_castps_pd(a[4 * q + 3]);
      b[4 * q + 0] = _mm256_castpd_ps(_mm256_unpacklo_pd(a0, a2));
      b[4 * q + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a0, a2));
      b[4 * q + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(a1, a3));
      b[4 * q + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(a1, a3));
    }
    for (int m = 0; m < 4; ++m) {
      r[m] = _mm256_permute2f128_ps(b[m], b[4 + m], 0x20);
      r[4 + m] = _mm256_permute2f128_ps(b[m], b[4 + m], 0x31);
    }
  }
};

}  // namespace
}  // namespace ninegrid
