// NEON instantiation of the indirect convolution kernel (kernels/x86/conv_indirect_impl.h): 4 channels per
// register, register tiles of 12 output pixels x 2 vectors (24 of the 32 registers).
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_indirect_impl.h"

namespace ninegrid {
namespace neon {

void conv2d_indirect(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  indirect_conv<VecNeon, kIndirectPixels, kIndirectOcVectors>(a, item_begin, item_end);
}

}  // namespace neon
}  // namespace ninegrid
