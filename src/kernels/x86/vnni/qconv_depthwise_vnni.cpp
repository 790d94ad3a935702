// vnni instantiation of the int8 depthwise kernels (kernels/x86/qconv_depthwise_impl.h): vpdpbusd sums 4
// taps per lane, each group is 4 pixels of a row interleaved by QVecVnni::pixels_to_taps.
#include "kernels/x86/qconv_depthwise_vnni.h"
// (the policies must be declared before the kernels that use them)
#include "kernels/x86/qconv_depthwise_impl.h"

namespace ninegrid {
namespace vnni {

X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t in_block) {
  X86QDepthwiseLayout l;
  l.lanes = in_block % 16 == 0 ? 16 : 8;
  l.taps = 4;
  l.weight_bytes = 1;
  return l;
}

void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r) {
  if (a.in_block % 16 == 0) return qdepthwise_conv<DwVnni512>(a, r);
  qdepthwise_conv<DwVnni256>(a, r);
}

}  // namespace vnni
}  // namespace ninegrid
