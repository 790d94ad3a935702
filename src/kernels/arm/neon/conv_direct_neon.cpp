// NEON instantiations of the direct and pointwise kernels (kernels/x86/conv_direct_impl.h): 4 output
// channels per register, input blocks 4 (NCHW4c) and 1 (a plain image: the paper's Algorithm 2).
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_direct_impl.h"

namespace ninegrid {
namespace {

// The tile widths for 4-lane vectors. AArch64 has 32 vector registers, as AVX-512 does, so the tiles
// take AVX-512's shapes: 2 output blocks x 12 pixels = 24 accumulators beside the 2 weight vectors and the
// broadcast input (the Cortex-A72 needs 14 independent FMLA chains to cover its 7-cycle latency on two
// pipes, 24 leave room for the loads), or 1 block x 16 pixels.
template <>
struct DirectMenu<4, 2> {
  using Full = TileWidths<12, 10, 8, 6, 4, 3, 2, 1>;
  using Reduced = TileWidths<12, 4, 2, 1>;
  using Column = TileWidths<6, 4, 3, 2, 1>;
};
template <>
struct DirectMenu<4, 1> {
  using Full = TileWidths<16, 12, 8, 4, 2, 1>;
  using Reduced = TileWidths<16, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};

}  // namespace

namespace neon {

void conv2d_direct(const X86ConvArgs& a, const X86ConvRange& r) { direct_conv<VecNeon>(a, r); }

void conv2d_pointwise(const X86ConvArgs& a, const X86ConvRange& r) { pointwise_conv<VecNeon>(a, r); }

}  // namespace neon
}  // namespace ninegrid
