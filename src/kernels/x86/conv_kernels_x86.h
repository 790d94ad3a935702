// Entry points of the fast x86 convolution kernels, one set per instruction set:
//   ninegrid::avx512 (src/kernels/x86/avx512/, 16 channels per zmm register, output block 16)
//   ninegrid::avx2   (src/kernels/x86/avx2/,   8 channels per ymm register, output block 8)
// Call an ISA's functions only when the CPU has it (runtime/cpu_features.h); ops/conv_fast.h chooses.
//
// Layouts. The input is NCHW[in_block]c with in_block 1, 8 or 16 (any block works with either ISA). The
// output is NCHW[P]c with P the ISA's lane count, or plain NCHW (out_block 1): then the kernels compute
// whole P-channel vectors and store only the real channels. Weights are prepacked (kernels/pack_weights.h)
// for the same P.
//
// These structs are plain data on purpose: the ISA files must not instantiate any inline or template code
// shared with generic code (see the ODR note in CMakeLists.txt), so they only read fields.
#pragma once

#include <cstdint>

#include "kernels/activation.h"

namespace ninegrid {

// One image's convolution with everything prepared for a kernel. `P` below is the ISA's lane count.
struct X86ConvArgs {
  // Geometry (as in Conv2dParams, kernels/conv_params.h).
  int64_t in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;  // out_channels: the real count; stores stop there
  int64_t groups = 1, in_channels_per_group = 0, out_channels_per_group = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t in_block = 1;   // 1, 8 or 16, dividing in_channels
  int64_t out_block = 1;  // P, 1 (plain NCHW), or 8 with P = 16 (each vector stored as two 8-blocks)
  // Direct and pointwise kernels: output blocks per register tile, 2 (pairs where a group allows) or 1.
  int64_t oc_blocks_per_tile = 2;

  // Prepacked: direct/pointwise [ceil(out_channels / P)][in_channels_per_group][kernel_h][kernel_w][P],
  // depthwise [channels / P][kernel_h][kernel_w][P]; zero weights for the padding output channels.
  const float* weights = nullptr;
  const float* bias = nullptr;  // ceil(out_channels / P) * P values, never null (zeros for no bias)

  // The fused activation. slope (PRelu) holds ceil(out_channels / P) * P values.
  ActivationKind activation = ActivationKind::None;
  float alpha = 0.f, beta = 0.f, clip_min = 0.f, clip_max = 0.f;
  const float* slope = nullptr;
  // Then y * scale_after + shift_after where affine_after (Activation's fields of the same names).
  bool affine_after = false;
  float scale_after = 1.f, shift_after = 0.f;

  // The image: x in the input layout, y and the optional residual in the output layout. The residual may
  // be y itself (each residual value is read just before the output value at its place is written).
  const float* x = nullptr;
  float* y = nullptr;
  const float* residual = nullptr;
};

// Copies `act` into the arguments' activation fields (all but slope: each driver pads PRelu's slopes to its
// own channel layout and points slope at them).
inline void set_activation(X86ConvArgs& a, const Activation& act) {
  a.activation = act.kind;
  a.alpha = act.alpha, a.beta = act.beta;
  a.clip_min = act.min, a.clip_max = act.max;
  a.affine_after = act.affine_after;
  a.scale_after = act.scale_after, a.shift_after = act.shift_after;
}

// A part of one image's output: output-channel blocks [oc_block_begin, oc_block_end) (blocks of P
// channels; for depthwise, channel blocks) times output rows [row_begin, row_end). Disjoint ranges write
// disjoint outputs, so a caller can run them on different threads.
struct X86ConvRange {
  int64_t oc_block_begin = 0, oc_block_end = 0;
  int64_t row_begin = 0, row_end = 0;
  // The calling thread's work area, for the kernels that need one (conv2d_first_layer: as many floats
  // as conv2d_first_layer_scratch_floats says; the int8 avx2::qconv2d_pointwise_wide: as many as
  // qconv2d_pointwise_wide_scratch_floats says); null for the others.
  float* scratch = nullptr;
};

#define NINEGRID_X86_CONV_KERNELS                                                                          \
  /* General direct convolution: any kernel, stride, dilation, padding; groups whose output channels are  \
     a multiple of P (or groups == 1). Register-blocked tiles of output pixels x output blocks. */         \
  void conv2d_direct(const X86ConvArgs& a, const X86ConvRange& r);                                           \
  /* 1x1, stride 1, no padding: the plane as one long row. Same weight packing and constraints. */          \
  void conv2d_pointwise(const X86ConvArgs& a, const X86ConvRange& r);                                        \
  /* A network's first layer: plain NCHW input (in_block 1), groups == 1, stride_w 1 or 2, any kernel,    \
     stride_h, dilation and padding; output pixels across the lanes, 8 output channels per pass. Weights  \
     packed [ceil(out_channels / 8)][in_channels][kernel_h][kernel_w][8]; range blocks are 8-channel       \
     octets; output block 1, 8 or (P = 16 only) 16. */                                                     \
  void conv2d_first_layer(const X86ConvArgs& a, const X86ConvRange& r);                                      \
  /* The floats of X86ConvRange::scratch conv2d_first_layer needs for these arguments. */                   \
  int64_t conv2d_first_layer_scratch_floats(const X86ConvArgs& a);                                          \
  /* Depthwise (groups == in_channels == out_channels, in_block == P): any kernel, stride and dilation;   \
     3x3 and 5x5 with stride 1 or 2 and dilation 1 run unrolled register tiles. */                          \
  void conv2d_depthwise(const X86ConvArgs& a, const X86ConvRange& r);                                        \
  /* NCHW <-> NCHW[P]c for one image's channel blocks [block_begin, block_end); to blocked, the last      \
     block may be partial (its lanes past `channels` become zeros); to NCHW, channels % P == 0. */          \
  void reorder_nchw_to_blocked(const float* src, float* dst, int64_t channels, int64_t plane,               \
                               int64_t block_begin, int64_t block_end);                                     \
  void reorder_blocked_to_nchw(const float* src, float* dst, int64_t channels, int64_t plane,               \
                               int64_t block_begin, int64_t block_end);

namespace avx512 {
constexpr int kLanes = 16;
// How many output blocks the direct and pointwise kernels handle together: ranges given to them should
// start at multiples of this so no pair is split (any range is still correct).
constexpr int kOcBlocksPerTile = 2;
NINEGRID_X86_CONV_KERNELS
}  // namespace avx512

namespace avx2 {
constexpr int kLanes = 8;
constexpr int kOcBlocksPerTile = 2;
NINEGRID_X86_CONV_KERNELS
}  // namespace avx2

// The same templates on AArch64 (src/kernels/arm/neon/, 4 channels per register, output block 4; input
// blocks 1 and 4). No conv2d_first_layer there: its octet transposes need 8 lanes or more, and the direct
// kernel reads a plain image (input block 1) as the paper's Algorithm 2 does.
namespace neon {
constexpr int kLanes = 4;
constexpr int kOcBlocksPerTile = 2;
void conv2d_direct(const X86ConvArgs& a, const X86ConvRange& r);
void conv2d_pointwise(const X86ConvArgs& a, const X86ConvRange& r);
void conv2d_depthwise(const X86ConvArgs& a, const X86ConvRange& r);
void reorder_nchw_to_blocked(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end);
void reorder_blocked_to_nchw(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end);
}  // namespace neon

#undef NINEGRID_X86_CONV_KERNELS

}  // namespace ninegrid
