// NEON instantiations of the int8 direct and pointwise kernels without the dot-product extension
// (kernels/arm/qconv_direct_arm_impl.h: kernels/x86/qconv_arith_impl.h on conv_direct_impl.h's tiles):
// smull + sadalp, 2 input channels per int32 lane, NCHW4c input.
#include "kernels/arm/simd_int8_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/qconv_direct_arm_impl.h"

namespace ninegrid {
namespace {

using NeonQConvArith = QuantConvArith<QVecNeonInt8>;
NINEGRID_ARM_INT8_NCHW4C_ONLY(NeonQConvArith)

}  // namespace

namespace neon {

void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r) { direct_conv_tiles<NeonQConvArith>(a, r); }

void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r) { pointwise_conv_tiles<NeonQConvArith>(a, r); }

}  // namespace neon
}  // namespace ninegrid
