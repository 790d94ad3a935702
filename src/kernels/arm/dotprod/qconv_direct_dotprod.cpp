// Dot-product instantiations of the int8 direct and pointwise kernels (kernels/arm/qconv_direct_arm_impl.h:
// kernels/x86/qconv_arith_impl.h on conv_direct_impl.h's tiles): sdot, 4 input channels per int32 lane,
// NCHW4c input.
#include "kernels/arm/simd_int8_dotprod.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/qconv_direct_arm_impl.h"

namespace ninegrid {
namespace {

using DotprodQConvArith = QuantConvArith<QVecDotprod>;
NINEGRID_ARM_INT8_NCHW4C_ONLY(DotprodQConvArith)

}  // namespace

namespace dotprod {

void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r) { direct_conv_tiles<DotprodQConvArith>(a, r); }

void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<DotprodQConvArith>(a, r);
}

}  // namespace dotprod
}  // namespace ninegrid
