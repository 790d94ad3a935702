// NEON instantiation of the depthwise kernels (kernels/x86/conv_depthwise_impl.h): 3x3 in tiles of 2 rows x
// 4 pixels (the paper's Algorithm 4), 5x5 in 1 x 4, nine-grid borders as on x86.
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_depthwise_impl.h"

namespace ninegrid {
namespace neon {

void conv2d_depthwise(const X86ConvArgs& a, const X86ConvRange& r) { depthwise_conv<VecNeon>(a, r); }

}  // namespace neon
}  // namespace ninegrid
