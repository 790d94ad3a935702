// Entry points of the x86 int8 indirect convolution kernels (QNNPACK's algorithm, kernels/indirection.h, on
// the fp32 indirect kernel's tiles: qconv_indirect_impl.h on conv_indirect_impl.h), one per instruction set:
// ninegrid::vnni (vpdpbusd on 8-lane ymm vectors, AVX512VL) and ninegrid::avx2 (vpmaddwd). ops/qconv_fast.h
// drives them; call an ISA's function only when the CPU has it. The arithmetic is kernels/quantized.h's, bit
// for bit the reference's (kernels/ref/qconv2d_ref.h).
//
// A register tile is kQIndirectPixels output pixels (one tile of the indirection buffer) x up to
// kQIndirectOcVectors vectors of L = kQIndirectLanes output channels. Any kernel, stride, dilation and
// padding; any number of output channels per group (each group padded to whole vectors); input blocks 16, 8
// or 4 with in_channels_per_group a multiple of the multiply-add depth (the op stages other inputs, as for
// the direct kernel), or packed rows (below). Padding taps read zero_row, input values equal to the zero
// point, so the folded bias is exact everywhere (no per-tap correction as the direct kernels' borders need).
//
// Its own header (not qconv_kernels_x86.h), so that the direct and depthwise kernel files, which take
// minutes each to compile, do not depend on it. Plain data only, as in conv_kernels_x86.h.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"  // X86Requantize

namespace ninegrid {

struct X86QIndirectArgs {
  int64_t in_channels = 0, in_plane = 0, in_block = 4;
  int64_t out_channels = 0, out_plane = 0, out_block = 1;
  int64_t groups = 1, in_channels_per_group = 0, out_channels_per_group = 0, oc_padded_per_group = 0;
  int64_t taps = 1;
  int64_t tiles = 0;                       // tiles of kQIndirectPixels output pixels
  // The items' tiles are [first_tile, first_tile + tiles) of the image's: a band of output rows, all of
  // whose channels one thread computes (0 and all tiles: the whole image).
  int64_t first_tile = 0;
  const int32_t* indirection = nullptr;    // IndirectionBuffer::entries for kQIndirectPixels
  const uint8_t* tile_interior = nullptr;  // per tile: 1 when none of its entries is padding
  // Packed per conv group g and vector group v (kQIndirectOcVectors vectors of L channels, the last one of a
  // group maybe narrower): [g][v][tap][icpg / depth][lanes of v][depth], zeros for padding channels.
  const int8_t* weights = nullptr;
  // groups * oc_padded_per_group values each (padding channels: anything finite): the bias minus the zero
  // point times the channel's weight sum, and the requantisation's multipliers (requantize.multiplier).
  const int32_t* bias = nullptr;
  X86Requantize requantize;
  const uint8_t* zero_row = nullptr;  // 64 bytes of the input zero point
  // Packed rows (qconv_indirect_impl.h): x is in_channels / 4 planes of in_plane bytes (an image's rows,
  // padded), an entry addresses the byte x + entry, and every 4 "input channels" of a group are 4
  // consecutive bytes from there; in_block is 4. Otherwise entries count pixels of in_block bytes.
  bool packed_rows = false;
  const uint8_t* x = nullptr;  // one image, NCHW[in_block]c
  uint8_t* y = nullptr;        // NCHW[out_block]c (out_block: any dividing out_channels)
};

// Work items [item_begin, item_end) of groups * vector_groups * tiles, item = (g * vector_groups + v) * tiles +
// tile, vector_groups = ceil(oc_padded_per_group / (kQIndirectOcVectors * kQIndirectLanes)): consecutive
// items share their weights. Disjoint items write disjoint outputs.
namespace vnni {
// 8 lanes (vpdpbusd on ymm), which on this kernel's targets (few output channels per group: a first layer,
// detection heads, narrow groups) waste half as many lanes as the direct kernel's 16; 32 registers hold 12
// pixels x 2 vectors of sums beside 2 weight vectors and the broadcast input.
constexpr int kQIndirectLanes = 8;
constexpr int kQIndirectPixels = 12;
constexpr int kQIndirectOcVectors = 2;
void qconv2d_indirect(const X86QIndirectArgs& a, int64_t item_begin, int64_t item_end);
}  // namespace vnni

namespace avx2 {
// 16 registers hold 5 pixels x 2 vectors of sums, 2 weight vectors, the broadcast input and vpmaddwd's
// product (as the direct kernel's tile).
constexpr int kQIndirectLanes = 8;
constexpr int kQIndirectPixels = 5;
constexpr int kQIndirectOcVectors = 2;
void qconv2d_indirect(const X86QIndirectArgs& a, int64_t item_begin, int64_t item_end);
}  // namespace avx2

}  // namespace ninegrid
