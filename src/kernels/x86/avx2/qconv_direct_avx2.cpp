// avx2 instantiations of the int8 direct and pointwise kernels (kernels/x86/qconv_arith_impl.h on the tiles of
// kernels/x86/conv_direct_impl.h).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qconv_arith_impl.h"

namespace ninegrid {
namespace avx2 {

void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r) {
  direct_conv_tiles<QuantConvArith<QVecAvx2>>(a, r);
}

void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<QuantConvArith<QVecAvx2>>(a, r);
}

}  // namespace avx2
}  // namespace ninegrid
