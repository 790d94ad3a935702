// avx2 instantiation of the Strassen GEMM and combine kernels (kernels/x86/strassen_impl.h):
// register tiles of 6 pixels x 2 vectors of 8 output channels.
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/strassen_impl.h"

namespace ninegrid {
namespace avx2 {

void strassen_gemm(const StrassenGemmArgs& a, int64_t item_begin, int64_t item_end) {
  strassen_gemm_any<VecAvx2, kStrassenPixels, kStrassenOcVectors>(a, item_begin, item_end);
}

void strassen_combine(float* dst, int64_t dst_stride, const float* a, int64_t a_stride, const float* b,
                      int64_t b_stride, float sign, int64_t block, int64_t pixels, int64_t block_begin,
                      int64_t block_end) {
  strassen_combine_any<VecAvx2>(dst, dst_stride, a, a_stride, b, b_stride, sign, block, pixels, block_begin, block_end);
}

}  // namespace avx2
}  // namespace ninegrid
