// Entry point of the x86 int8 Winograd convolution F(2x2, 3x3) (qconv_winograd_impl.h): 3x3 kernels, stride
// 1, dilation 1, one group. ops/qconv_fast.h drives it; call it only when the CPU has AVX2. The arithmetic is
// kernels/quantized.h's, bit for bit the reference's (kernels/ref/qconv2d_ref.h).
//
// Why it is exact. Each 4x4 input tile d (values x - x_zero_point, in [-255, 255]; zero outside the image,
// which is what the reference's skipped padding taps contribute) becomes V = B^T d B (entries 0 and +-1:
// |V| <= 1020), each 3x3 filter g becomes U = G' g G'^T with G' = 2G, the usual G with its halves doubled,
// so that U is an integer (|U| <= 9 x 128 = 1152); both fit int16, and their products summed over channel
// pairs fit vpmaddwd's int32 (no saturation: neither operand is -32768). The output transform
// A^T (sum over channels of U . V) A is then exactly 4 times the 2x2 outputs' sums modulo 2^32 (int32 sums
// may wrap on the way; the wrapping cancels), which is the true value while |4 x sum| < 2^31:
// qwinograd_f2x3_exact below bounds it by the channel count. A shift right by 2 gives the sum, the bias is
// added and kernels/quantized.h's requantisation follows (any fused residual or addition, any output block).
// Against the direct kernels it does 16 multiplies per 2x2 outputs instead of 36, on int16 lanes.
//
// Plain data only, as in conv_kernels_x86.h. Its own header, so that no other int8 kernel file depends on it.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"  // X86Requantize

namespace ninegrid {

// Work is split into items, each one strip of up to strip_tiles tiles (2x2 outputs each) along one tile row
// of one image: item = tile_row * strips_per_row + strip.
struct X86QWinogradArgs {
  int64_t in_channels = 0, in_h = 0, in_w = 0, in_block = 1;  // input: NCHW[in_block]c uint8, one image
  int64_t out_channels = 0, out_h = 0, out_w = 0, out_block = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0;  // ceil(out_h / 2), ceil(out_w / 2)
  int64_t strip_tiles = 1, strips_per_row = 1;
  int64_t channels_padded = 0;      // in_channels rounded up to kQWinogradChannelGroup
  int64_t out_channels_padded = 0;  // out_channels rounded up to kQWinogradOcBlock
  // The transformed filters U as int16, per tile position (16), block of kQWinogradOcBlock output channels and
  // pair of input channels: [16][out_channels_padded / 16][channels_padded / 2][16][2] (pack_qwinograd_f2x3,
  // kernels/qpack_winograd.h), zeros for padding channels.
  const int16_t* weights = nullptr;
  // Per output channel, out_channels_padded values: the bias alone (the zero point is subtracted from the
  // input before the transform, so nothing is folded in).
  const int32_t* bias = nullptr;
  int32_t x_zero_point = 0;
  X86Requantize requantize;  // multipliers for out_channels_padded channels
  const uint8_t* x = nullptr;
  uint8_t* y = nullptr;  // NCHW[out_block]c
};

// Channels of one transform vector (16 int16 lanes) and of one weight block (two 8-lane accumulators), and
// the tiles of one register tile (6 tiles x 2 vectors: 12 accumulators of the 16 ymm registers).
constexpr int64_t kQWinogradChannelGroup = 16;
constexpr int64_t kQWinogradOcBlock = 16;
constexpr int64_t kQWinogradTileGroup = 6;

// Whether F(2,3) on int16 is exact for this many input channels (see above): the largest sum of one output,
// 9 taps x 255 x 128 per channel, times 4, below 2^31.
inline bool qwinograd_f2x3_exact(int64_t in_channels) {
  return in_channels >= 1 && in_channels * 9 * 255 * 128 < (int64_t(1) << 29);
}

// `tiles` rounded up to whole register tiles: the tiles a strip's buffers hold and its products compute.
inline int64_t qwinograd_whole_tile_groups(int64_t tiles) {
  return (tiles + kQWinogradTileGroup - 1) / kQWinogradTileGroup * kQWinogradTileGroup;
}

// Bytes of scratch one call of the kernel needs: for one strip, its transformed inputs (int16
// [16][tiles][channels_padded]) and then its products (int32 [tiles][16][kQWinogradOcBlock]).
inline int64_t qwinograd_f2x3_scratch_bytes(const X86QWinogradArgs& a) {
  const int64_t tiles = qwinograd_whole_tile_groups(a.strip_tiles);
  return 16 * tiles * a.channels_padded * 2 + tiles * 16 * kQWinogradOcBlock * 4;
}

namespace avx2 {
// Items [item_begin, item_end) of one image; `scratch`: qwinograd_f2x3_scratch_bytes bytes, 32-byte aligned,
// the calling thread's.
void qconv2d_winograd_f2x3(const X86QWinogradArgs& a, int64_t item_begin, int64_t item_end, void* scratch);
}  // namespace avx2

}  // namespace ninegrid
