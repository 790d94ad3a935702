// avx512 instantiation of the depthwise kernels (kernels/x86/conv_depthwise_impl.h).
#include "kernels/x86/simd_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_depthwise_impl.h"

namespace ninegrid {
namespace avx512 {

void conv2d_depthwise(const X86ConvArgs& a, const X86ConvRange& r) { depthwise_conv<VecAvx512>(a, r); }

}  // namespace avx512
}  // namespace ninegrid
