// The AVX2 uint8 requantisation by multiply-add (kernels/x86/requantize_u8_affine_x86.h): 32 bytes per step,
// four vectors of 8 widened to float, one vfmadd each, rounded by cvtps2dq (halves to even, the default
// MXCSR mode, as affine_u8_ref's nearbyint), packed back with saturation and clamped.
#include "kernels/x86/requantize_u8_affine_x86.h"

#include <immintrin.h>

namespace ninegrid {
namespace avx2 {

void requantize_u8_affine(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n) {
  const __m256 a = _mm256_set1_ps(m.a), b = _mm256_set1_ps(m.b);
  const __m256i qmin = _mm256_set1_epi8(static_cast<char>(m.qmin)), qmax = _mm256_set1_epi8(static_cast<char>(m.qmax));
  // packs and packus work within 128-bit lanes: the 4-byte groups come out as vector 0..3's low halves,
  // then their high halves; this puts each vector's 8 bytes back together.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  auto round8 = [&](__m128i bytes8) {
    return _mm256_cvtps_epi32(_mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes8)), a, b));
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    const __m256i r0 = round8(lo), r1 = round8(_mm_srli_si128(lo, 8));
    const __m256i r2 = round8(hi), r3 = round8(_mm_srli_si128(hi, 8));
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(r0, r1), _mm256_packs_epi32(r2, r3));
    const __m256i in_order = _mm256_permutevar8x32_epi32(bytes, order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_min_epu8(_mm256_max_epu8(in_order, qmin), qmax));
  }
  for (; i < n; ++i) y[i] = affine_u8_ref(m, x[i]);
}

}  // namespace avx2
}  // namespace ninegrid
