// Entry points of the fast AArch64 int8 convolution kernels: the x86 int8 templates
// (kernels/x86/qconv_arith_impl.h on conv_direct_impl.h's tiles, qconv_depthwise_impl.h, the requantisation
// of qconv_epilogue_impl.h) instantiated for 4-lane NEON int32 vectors, on the same prepared arguments
// (X86QConvArgs, X86ConvRange, X86QDepthwiseLayout: kernels/x86/qconv_kernels_x86.h, plain data shared by
// both architectures), bit for bit the reference's arithmetic (kernels/quantized.h):
//   ninegrid::neon    (src/kernels/arm/neon/, every AArch64 core, the Raspberry Pi 4's Cortex-A72): smull
//                     16-bit products, added in pairs into int32 lanes by sadalp (simd_int8_neon.h)
//   ninegrid::dotprod (src/kernels/arm/dotprod/, Armv8.2 dot product: A55/A76 and later, the Pi 5): sdot,
//                     4 byte products per int32 lane (simd_int8_dotprod.h)
// Call dotprod's only when the CPU has it (core/cpu_features.h: asimddp).
//
// Layouts. Activations are uint8 in NCHW[B]c. The layout planner gives int8 tensors on Arm 4-channel blocks
// (graph/passes/plan_layout.cpp: the ISA's block, isa_block(Neon) = 4), which is also the block these
// kernels read: one int32 vector holds 4 output channels, and the 4 channels of one pixel are the 4 bytes a
// dot product takes. The direct and pointwise kernels read NCHW4c only (FastQConv2d stages anything else);
// outputs go to any block.
//
// Depthwise in NCHW4c, not MNN's C16. The MNN document (../shared/seeds/mnn-int8-depthwise-sdot.txt) moved
// its Armv8 depthwise from C4 to C16 because its C4 loop loaded 4 bytes per instruction; with sdot it
// rearranges NCHW4c with one tbl per 4 pixels x 4 channels (16 bytes, one load), as C8 or C16 need more
// shuffles for the same taps. Here the register tiles of qconv_depthwise_impl.h load each group of pixels
// once and feed it to every output of the tile that reads it, so NCHW4c's narrower loads are shared too:
//   dotprod: a group is 4 pixels x 4 channels (one 16-byte load, tbl, eor), 4 taps per sdot lane;
//   neon:    a group is 2 pixels x 4 channels (one 8-byte load, tbl, eor), 2 taps per smull + sadalp lane.
// Measured against MNN's own loops (bench/REPORT.md, "Arm64", llvm-mca): MNN's sdot depthwise is in fact C4
// (its C16 loop, smlal, is for cores without sdot and for stride 2), and this tile's arithmetic costs less
// per output than either.
//
// Zero points. The kernels multiply the inputs as signed bytes x - 128 (simd_int8_neon.h says why), so their
// arguments are prepared for the zero point zp - 128 of those values (kArmInputZeroPointShift below):
//   direct, pointwise: X86QConvArgs::bias = bias - (zp - 128) x (the channel's weight sum), tap_zero_sums
//                      with (zp - 128), and x_zero_point = zp - 128;
//   depthwise:         bias as above, but x_zero_point stays zp: padding taps read that byte, which the kernel
//                      shifts like every input.
//
// Plain data only (the ISA files must not share inline or template code with generic code).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"   // X86ConvRange
#include "kernels/x86/qconv_kernels_x86.h"  // X86QConvArgs, X86QDepthwiseLayout

namespace ninegrid {

// What the Arm kernels subtract from every uint8 input before multiplying (see above).
constexpr int32_t kArmInputZeroPointShift = 128;

#define NINEGRID_ARM_INT8_KERNELS                                                                           \
  /* Direct convolution: any kernel, stride, dilation, padding; groups == 1 or output channels per group a   \
     multiple of 4. Input block 4, in_channels_per_group a multiple of kInt8Depth. Weights packed          \
     [ceil(out_channels / 4)][in_channels_per_group / kInt8Depth][kernel_h][kernel_w][4][kInt8Depth]. */   \
  void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r);                                        \
  /* 1x1, stride 1, no padding: the plane as one long row. Same packing and constraints. */                 \
  void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r);                                     \
  /* Depthwise (groups == in_channels == out_channels), as x86's: 3x3 and 5x5, stride 1 or 2, dilation 1   \
     on NCHW4c input run register tiles with nine-grid borders; anything else (other kernels, strides,     \
     dilations, other input blocks gathered pixel by pixel) a slower path over each output's taps. Weights: \
     pack_qdepthwise_weights (kernels/qpack_depthwise.h) with qconv2d_depthwise_layout(in_block). */        \
  void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r);                                     \
  X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t in_block);

namespace neon {
constexpr int kInt8Lanes = 4;
constexpr int kInt8Depth = 2;  // input channels per smull + sadalp
constexpr int kInt8OcBlocksPerTile = 2;
NINEGRID_ARM_INT8_KERNELS
}  // namespace neon

namespace dotprod {
constexpr int kInt8Lanes = 4;
constexpr int kInt8Depth = 4;  // input channels per sdot
constexpr int kInt8OcBlocksPerTile = 2;
NINEGRID_ARM_INT8_KERNELS
}  // namespace dotprod

#undef NINEGRID_ARM_INT8_KERNELS

}  // namespace ninegrid
