// avx2 instantiation of the int8 depthwise kernels (kernels/x86/qconv_depthwise_impl.h): vpmaddwd sums 2
// taps per lane, each group is 2 pixels of a row interleaved and widened by QVecAvx2::pixels_to_tap_pairs.
#include "kernels/x86/qconv_depthwise_avx2.h"
// (the policies must be declared before the kernels that use them)
#include "kernels/x86/qconv_depthwise_impl.h"

namespace ninegrid {
namespace avx2 {

X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t /*in_block*/) {
  X86QDepthwiseLayout l;
  l.lanes = 8;
  l.taps = 2;
  l.weight_bytes = 2;
  return l;
}

void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r) {
  if (a.in_block % 16 == 0) return qdepthwise_conv<DwAvx2<16>>(a, r);
  qdepthwise_conv<DwAvx2<8>>(a, r);
}

}  // namespace avx2
}  // namespace ninegrid
