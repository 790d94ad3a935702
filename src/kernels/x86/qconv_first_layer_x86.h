// Entry points of the x86 int8 first-layer convolution (qconv_first_layer_impl.h), one per instruction set:
// ninegrid::vnni (vpdpbusd on 16-lane zmm vectors) and ninegrid::avx2 (vpmaddwd on 8-lane ymm vectors).
// ops/qconv_fast.h drives them; call an ISA's function only when the CPU has it. The arithmetic is
// kernels/quantized.h's, bit for bit the reference's (kernels/ref/qconv2d_ref.h).
//
// A plain NCHW uint8 image of a few channels (RGB) in, few output channels out. The other int8 kernels put
// output channels across the vector lanes and multiply a pixel's input bytes, broadcast; an image has 3
// channels, so each of their multiply-adds uses 3 of its 4 bytes and a 3->8 conv fills half a 16-lane
// vector. Here the lanes are consecutive output pixels of one row, like the fp32 first-layer kernel's
// (conv_first_layer_impl.h): one multiply-add takes, in every lane, `depth` adjacent kernel columns of one
// input row (the row's bytes at that pixel's window, which a load and one or two shuffles put there), times
// those columns' weights of one output channel, broadcast. The sums (pixels x 8 channels) are transposed at
// the store into the output's blocks.
//
// Plain data only, as in conv_kernels_x86.h. Its own header, so that no other int8 kernel file depends on it.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"  // X86Requantize

namespace ninegrid {

struct X86QFirstLayerArgs {
  int64_t in_channels = 0, in_h = 0, in_w = 0;  // input: plain NCHW, one image
  int64_t out_channels = 0, out_h = 0, out_w = 0;
  int64_t out_block = 8;  // 8 or 1; 16 on vnni
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, pad_top = 0, pad_left = 0;
  // Kernel columns are taken `depth` at a time (vnni 4, avx2 2): ceil(kernel_w / depth) column groups, the
  // columns past kernel_w with zero weights.
  int64_t column_groups = 1;
  // Output channels in passes of `pass_channels` (8, or 16 for vnni's 16-channel blocks). Per pass, input
  // channel, kernel row, column group and output channel: one 32-bit word that the kernel broadcasts (vnni:
  // 4 int8 weights; avx2: 2 int16 weights), zeros for channels past out_channels:
  // [pass][in_channels][kernel_h][column_groups][pass_channels].
  int64_t pass_channels = 8;
  const int32_t* weights = nullptr;
  // Per output channel, padded to whole passes: the bias minus x_zero_point times the sum of all the
  // channel's weights (padding columns read the zero point, so this is exact at the left and right borders).
  const int32_t* bias = nullptr;
  // Per pass, kernel row and channel of the pass: x_zero_point times the sum of the channel's weights in that
  // kernel row ([pass][kernel_h][pass_channels]). Kernel rows outside the image are skipped and these added
  // back (the top and bottom borders).
  const int32_t* row_zero_sums = nullptr;
  uint8_t x_zero_point = 0;
  // Requantisation without a residual (the multipliers padded to whole passes).
  X86Requantize requantize;
  const uint8_t* x = nullptr;
  uint8_t* y = nullptr;  // NCHW[out_block]c
};

// Output rows [row_begin, row_end) of one image, every pass; the rows of disjoint ranges are disjoint.
namespace vnni {
constexpr int kQFirstLayerLanes = 16;
constexpr int kQFirstLayerDepth = 4;
void qconv2d_first_layer(const X86QFirstLayerArgs& a, int64_t row_begin, int64_t row_end);
}  // namespace vnni

namespace avx2 {
constexpr int kQFirstLayerLanes = 8;
constexpr int kQFirstLayerDepth = 2;
void qconv2d_first_layer(const X86QFirstLayerArgs& a, int64_t row_begin, int64_t row_end);
}  // namespace avx2

// The shapes the kernels take (both ISAs): stride_w 1 or 2 (the depth's divisors), dilation_w 1, 1 to 4
// input channels, kernels up to 11 x 11 (the border window on the stack), out_block as above.
constexpr int64_t kQFirstLayerMaxChannels = 4;
constexpr int64_t kQFirstLayerMaxKernel = 11;

}  // namespace ninegrid
