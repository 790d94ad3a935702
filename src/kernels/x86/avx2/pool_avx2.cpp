// avx2 instantiation of the blocked pool kernels (kernels/x86/pool_impl.h): fp32 MaxPool and AveragePool,
// and the int8 MaxPool.
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/simd_int8_pixel.h"
// (the vector types must be declared before the kernels that use them)
#include "kernels/x86/pool_impl.h"
#include "kernels/x86/pool_x86.h"

namespace ninegrid {
namespace avx2 {

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  max_pool_rows<VecAvx2>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const uint8_t* x, uint8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelSse<uint8_t, 8>>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const int8_t* x, int8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelSse<int8_t, 8>>(p, w, x, y, row_begin, row_end);
}

void average_pool_blocked(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,
                          float* y, int64_t row_begin, int64_t row_end) {
  average_pool_rows<VecAvx2>(p, count_include_pad, w, x, y, row_begin, row_end);
}

void global_average_pool_blocked(int64_t plane_size, const float* x, float* y, int64_t begin, int64_t end) {
  const __m256d count = _mm256_set1_pd(static_cast<double>(plane_size));
  for (int64_t bp = begin; bp < end; ++bp) {
    const float* xp = x + bp * plane_size * 8;
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();  // lanes 0-3 and 4-7
    for (int64_t i = 0; i < plane_size; ++i) {
      const __m256 v = _mm256_loadu_ps(xp + i * 8);
      lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
      hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    __m128 out_lo = _mm_setzero_ps(), out_hi = _mm_setzero_ps();
    if (plane_size > 0) {
      out_lo = _mm256_cvtpd_ps(_mm256_div_pd(lo, count));
      out_hi = _mm256_cvtpd_ps(_mm256_div_pd(hi, count));
    }
    _mm_storeu_ps(y + bp * 8, out_lo);
    _mm_storeu_ps(y + bp * 8 + 4, out_hi);
  }
}

}  // namespace avx2
}  // namespace ninegrid
