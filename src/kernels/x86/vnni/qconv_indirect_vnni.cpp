// vnni instantiation of the int8 indirect convolution kernel (kernels/x86/qconv_indirect_impl.h on the tiles
// of kernels/x86/conv_indirect_impl.h): 8 lanes per ymm (vpdpbusd with AVX512VL), register tiles of 12 output
// pixels x 2 vectors (24 of the 32 ymm registers). Its own file: the direct kernels' file takes minutes to
// compile, this one a fraction of that.
#include "kernels/x86/simd_int8_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_indirect_impl.h"

namespace ninegrid {
namespace vnni {

static_assert(QVecVnni256::kLanes == kQIndirectLanes, "qconv_kernels_x86.h promises 8 lanes");

void qconv2d_indirect(const X86QIndirectArgs& a, int64_t item_begin, int64_t item_end) {
  indirect_conv_tiles<QuantIndirectArith<QVecVnni256>, kQIndirectPixels, kQIndirectOcVectors>(a, item_begin, item_end);
}

}  // namespace vnni
}  // namespace ninegrid
