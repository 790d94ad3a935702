// NCHW rows -> NCHW8c (kernels/x86/stage_rows_x86.h): 8 channels x 8 pixels through registers, transposed;
// the last pixels % 8 element by element.
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/stage_rows_x86.h"

namespace ninegrid {
namespace avx2 {

void stage_rows_nchw8c(const float* src, float* dst, int64_t src_plane, int64_t pixels, int64_t block_begin,
                       int64_t block_end) {
  using V = VecAvx2;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const float* s = src + b * 8 * src_plane;
    float* d = dst + b * 8 * pixels;
    int64_t p = 0;
    for (; p + 8 <= pixels; p += 8) {
      V::T r[8];
      for (int j = 0; j < 8; ++j) r[j] = V::load(s + j * src_plane + p);
      V::transpose(r);
      for (int i = 0; i < 8; ++i) V::store(d + (p + i) * 8, r[i]);
    }
    for (; p < pixels; ++p)
      for (int j = 0; j < 8; ++j) d[p * 8 + j] = s[j * src_plane + p];
  }
}

}  // namespace avx2
}  // namespace ninegrid
