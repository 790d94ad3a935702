// NEON instantiation of the blocked pool kernels (kernels/x86/pool_impl.h) on NCHW4c: fp32 MaxPool and
// AveragePool, and the int8 MaxPool.
#include "kernels/arm/simd_neon.h"
#include "kernels/arm/simd_int8_pixel_neon.h"
// (the vector types must be declared before the kernels that use them)
#include "kernels/x86/pool_impl.h"
#include "kernels/x86/pool_x86.h"

namespace ninegrid {
namespace neon {

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  max_pool_rows<VecNeon>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const uint8_t* x, uint8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelNeon<uint8_t>>(p, w, x, y, row_begin, row_end);
}

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const int8_t* x, int8_t* y,
                      int64_t row_begin, int64_t row_end) {
  max_pool_rows<Int8PixelNeon<int8_t>>(p, w, x, y, row_begin, row_end);
}

void average_pool_blocked(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,
                          float* y, int64_t row_begin, int64_t row_end) {
  average_pool_rows<VecNeon>(p, count_include_pad, w, x, y, row_begin, row_end);
}

void global_average_pool_blocked(int64_t plane_size, const float* x, float* y, int64_t begin, int64_t end) {
  const float64x2_t count = vdupq_n_f64(static_cast<double>(plane_size));
  for (int64_t bp = begin; bp < end; ++bp) {
    const float* xp = x + bp * plane_size * 4;
    float64x2_t lo = vdupq_n_f64(0.0), hi = vdupq_n_f64(0.0);  // lanes 0-1 and 2-3, each summed in double
    for (int64_t i = 0; i < plane_size; ++i) {
      const float32x4_t v = vld1q_f32(xp + i * 4);
      lo = vaddq_f64(lo, vcvt_f64_f32(vget_low_f32(v)));
      hi = vaddq_f64(hi, vcvt_high_f64_f32(v));
    }
    float32x4_t out = vdupq_n_f32(0.f);
    if (plane_size > 0) out = vcvt_high_f32_f64(vcvt_f32_f64(vdivq_f64(lo, count)), vdivq_f64(hi, count));
    vst1q_f32(y + bp * 4, out);
  }
}

}  // namespace neon
}  // namespace ninegrid
