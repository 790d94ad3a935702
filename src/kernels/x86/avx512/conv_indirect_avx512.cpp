// avx512 instantiation of the indirect convolution kernel (kernels/x86/conv_indirect_impl.h):
// 16 channels per zmm, register tiles of 12 output pixels x 2 vectors (24 of the 32 zmm registers).
#include "kernels/x86/simd_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_indirect_impl.h"

namespace ninegrid {
namespace avx512 {

void conv2d_indirect(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  indirect_conv<VecAvx512, kIndirectPixels, kIndirectOcVectors>(a, item_begin, item_end);
}

}  // namespace avx512
}  // namespace ninegrid
