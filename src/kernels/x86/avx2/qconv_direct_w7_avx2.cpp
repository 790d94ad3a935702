// avx2 instantiations of the int8 direct and pointwise kernels on vpmaddubsw (QVecAvx2W7: 4 input channels
// per multiply-add, weights whose same-sign pairs sum to at most 128 in magnitude), on the same tiles as
// qconv_direct_avx2.cpp (kernels/x86/qconv_arith_impl.h on kernels/x86/conv_direct_impl.h).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_arith_impl.h"

namespace ninegrid {
namespace avx2 {

static_assert(QVecAvx2W7::kDepth == kInt8DepthW7, "qconv_kernels_x86.h promises depth 4");

void qconv2d_direct_w7(const X86QConvArgs& a, const X86ConvRange& r) {
  direct_conv_tiles<QuantConvArith<QVecAvx2W7>>(a, r);
}

void qconv2d_pointwise_w7(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<QuantConvArith<QVecAvx2W7>>(a, r);
}

}  // namespace avx2
}  // namespace ninegrid
