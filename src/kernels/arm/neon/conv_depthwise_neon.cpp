// NEON instantiation of the depthwise kernels (kernels/x86/conv_depthwise_impl.h): 3x3 in tiles of 2 rows x
// 4 pixels (the paper's Algorithm 4), 5x5 in 1 x 4, nine-grid borders as on x86.
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_depthwise_impl.h"

namespace ninegrid {
namespace {

// The centre runs' clamp as FMAX/FMIN: one instruction each, NaN in gives NaN out (VecNeon::max/min are a
// compare and a select each, for the operand order x86's MAXPS/MINPS have, which pooling's bit-exactness
// needs; the clamp only needs NaN kept). Declared before depthwise_conv<VecNeon> is instantiated below.
template <>
struct DepthwiseClamp<VecNeon> {
  static float32x4_t lower(float32x4_t v, float32x4_t lo) { return vmaxq_f32(v, lo); }
  static float32x4_t upper(float32x4_t v, float32x4_t hi) { return vminq_f32(v, hi); }
};

}  // namespace

namespace neon {

void conv2d_depthwise(const X86ConvArgs& a, const X86ConvRange& r) { depthwise_conv<VecNeon>(a, r); }

}  // namespace neon
}  // namespace ninegrid
