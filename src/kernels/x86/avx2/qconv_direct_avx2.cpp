// avx2 instantiations of the int8 direct and pointwise kernels (kernels/x86/qconv_arith_impl.h on the tiles of
// kernels/x86/conv_direct_impl.h), and the pointwise kernel on widened inputs (qconv_pointwise_wide_impl.h).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_arith_impl.h"
#include "kernels/x86/qconv_pointwise_wide_impl.h"

namespace ninegrid {
namespace avx2 {

void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r) {
  direct_conv_tiles<QuantConvArith<QVecAvx2>>(a, r);
}

void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<QuantConvArith<QVecAvx2>>(a, r);
}

void qconv2d_pointwise_wide(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_wide_conv<QuantConvArith<QVecAvx2Wide>>(a, r);
}

int64_t qconv2d_pointwise_wide_scratch_floats(const X86QConvArgs& a) { return pointwise_wide_scratch_floats(a); }

}  // namespace avx2
}  // namespace ninegrid
