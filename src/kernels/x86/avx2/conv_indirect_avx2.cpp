// avx2 instantiation of the indirect convolution kernel (kernels/x86/conv_indirect_impl.h):
// 8 channels per ymm, register tiles of 6 output pixels x 2 vectors (12 of the 16 ymm registers).
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_indirect_impl.h"

namespace ninegrid {
namespace avx2 {

void conv2d_indirect(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  indirect_conv<VecAvx2, kIndirectPixels, kIndirectOcVectors>(a, item_begin, item_end);
}

}  // namespace avx2
}  // namespace ninegrid
