// avx512 instantiation of the blocked pool kernels (kernels/x86/pool_impl.h): fp32 MaxPool and AveragePool,
// and the int8 MaxPool.
#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/simd_int8_pixel.h"
// (the vector types must be declared before the kernels that use them)
#include "kernels/x86/pool_impl.h"
#include "kernels/x86/pool_x86.h"

namespace ninegrid {
namespace avx512 {

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  max_pool_rows<VecAvx512>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const uint8_t* x, uint8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelSse<uint8_t, 16>>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const int8_t* x, int8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelSse<int8_t, 16>>(p, w, x, y, row_begin, row_end);
}

void average_pool_blocked(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,
                          float* y, int64_t row_begin, int64_t row_end) {
  average_pool_rows<VecAvx512>(p, count_include_pad, w, x, y, row_begin, row_end);
}

void global_average_pool_blocked(int64_t plane_size, const float* x, float* y, int64_t begin, int64_t end) {
  const __m512d count = _mm512_set1_pd(static_cast<double>(plane_size));
  for (int64_t bp = begin; bp < end; ++bp) {
    const float* xp = x + bp * plane_size * 16;
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();  // lanes 0-7 and 8-15
    for (int64_t i = 0; i < plane_size; ++i) {
      const __m512 v = _mm512_loadu_ps(xp + i * 16);
      lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
      hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    __m256 out_lo = _mm256_setzero_ps(), out_hi = _mm256_setzero_ps();
    if (plane_size > 0) {
      out_lo = _mm512_cvtpd_ps(_mm512_div_pd(lo, count));
      out_hi = _mm512_cvtpd_ps(_mm512_div_pd(hi, count));
    }
    _mm256_storeu_ps(y + bp * 16, out_lo);
    _mm256_storeu_ps(y + bp * 16 + 8, out_hi);
  }
}

}  // namespace avx512
}  // namespace ninegrid
