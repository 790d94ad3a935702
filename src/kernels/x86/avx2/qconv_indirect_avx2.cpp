// avx2 instantiation of the int8 indirect convolution kernel (kernels/x86/qconv_indirect_impl.h on the tiles
// of kernels/x86/conv_indirect_impl.h): 8 lanes per ymm (vpmaddwd on input pairs), register tiles of 5 output
// pixels x 2 vectors.
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_indirect_impl.h"

namespace ninegrid {
namespace avx2 {

static_assert(QVecAvx2::kLanes == kQIndirectLanes, "qconv_kernels_x86.h promises 8 lanes");

void qconv2d_indirect(const X86QIndirectArgs& a, int64_t item_begin, int64_t item_end) {
  indirect_conv_tiles<QuantIndirectArith<QVecAvx2>, kQIndirectPixels, kQIndirectOcVectors>(a, item_begin, item_end);
}

}  // namespace avx2
}  // namespace ninegrid
