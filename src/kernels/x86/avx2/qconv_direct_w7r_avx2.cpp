// avx2 instantiations of the int8 direct and pointwise kernels on vpmaddubsw for any 8-bit weights
// (QVecAvx2W7R: the packed weights within vpmaddubsw's bound, plus each block's rest vectors), on the same
// tiles as qconv_direct_w7_avx2.cpp (kernels/x86/qconv_arith_impl.h on kernels/x86/conv_direct_impl.h).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_arith_impl.h"

namespace ninegrid {
namespace avx2 {

static_assert(QVecAvx2W7R::kDepth == kInt8DepthW7, "qconv_kernels_x86.h promises depth 4");
static_assert(sizeof(X86QRestVector::weights) == QVecAvx2W7R::kLanes * QVecAvx2W7R::kDepth,
              "a rest vector is one weight vector");

void qconv2d_direct_w7r(const X86QConvArgs& a, const X86ConvRange& r) {
  direct_conv_tiles<QuantConvArith<QVecAvx2W7R>>(a, r);
}

void qconv2d_pointwise_w7r(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<QuantConvArith<QVecAvx2W7R>>(a, r);
}

}  // namespace avx2
}  // namespace ninegrid
