// Entry points of the x86 indirect convolution kernels (QNNPACK's algorithm; kernels/indirection.h), one
// set per instruction set: ninegrid::avx512 (16 channels per zmm) and ninegrid::avx2 (8 per ymm).
// ops/conv_indirect.h drives them; call an ISA's functions only when the CPU has it.
//
// A register tile is kIndirectPixels output pixels (one tile of the indirection buffer) x up to
// kIndirectOcVectors vectors of L output channels: for each input channel run and tap, the tile's input
// pixels are fetched through the buffer (broadcast one value each) and multiplied by the packed weight
// vectors. Any kernel size, stride, dilation and padding; groups whose output channels per group are a
// multiple of L (or one group).
//
// Layouts. x is NCHW[in_block]c and y (and the residual) NCHW[out_block]c, blocks 1, 8 or 16. Weights are
// packed per conv group g and vector group v (kIndirectOcVectors vectors of L channels, the last one of a
// conv group maybe narrower): [g][v][tap][ic of the group][lanes of v], zeros for padding channels; a conv
// group spans oc_padded_per_group channels (out_channels_per_group rounded up to L).
// Plain data only: the ISA files must not share inline or template code with generic code (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {

struct IndirectX86Args {
  int64_t in_channels = 0, in_plane = 0, in_block = 1;
  int64_t out_channels = 0, out_plane = 0, out_block = 1;
  int64_t groups = 1, in_channels_per_group = 0, out_channels_per_group = 0, oc_padded_per_group = 0;
  int64_t taps = 1;
  int64_t tiles = 0;               // tiles of kIndirectPixels output pixels
  // The items' tiles are [first_tile, first_tile + tiles) of the image's: a band of output rows, all of
  // whose channels one thread computes (0 and all tiles: the whole image).
  int64_t first_tile = 0;
  const int32_t* indirection = nullptr;  // IndirectionBuffer::entries for kIndirectPixels
  const float* weights = nullptr;  // packed (layout above)
  const float* bias = nullptr;     // groups * oc_padded_per_group values, never null
  // The fused activation (activation, alpha, beta, clip_min, clip_max and slope with groups *
  // oc_padded_per_group values), as the direct kernels' epilogue reads it.
  X86ConvArgs epilogue;
  const float* x = nullptr;  // one image
  float* y = nullptr;
  const float* residual = nullptr;  // may be y itself
};

#define NINEGRID_X86_INDIRECT_KERNELS                                                                        \
  /* Work items [item_begin, item_end) of groups * vector_groups * tiles, item = (g * vector_groups + v) *  \
     tiles + tile with vector_groups = ceil(oc_padded_per_group / (kIndirectOcVectors * L)): consecutive  \
     items share their weights. Disjoint items write disjoint outputs. */                                   \
  void conv2d_indirect(const IndirectX86Args& a, int64_t item_begin, int64_t item_end);

namespace avx512 {
constexpr int kIndirectPixels = 12;
constexpr int kIndirectOcVectors = 2;
NINEGRID_X86_INDIRECT_KERNELS
}  // namespace avx512

namespace avx2 {
constexpr int kIndirectPixels = 6;
constexpr int kIndirectOcVectors = 2;
NINEGRID_X86_INDIRECT_KERNELS
}  // namespace avx2

namespace neon {  // AArch64 (src/kernels/arm/neon/), 4 lanes
// 32 registers: 12 pixels x 2 vectors, as AVX-512.
constexpr int kIndirectPixels = 12;
constexpr int kIndirectOcVectors = 2;
NINEGRID_X86_INDIRECT_KERNELS
}  // namespace neon

#undef NINEGRID_X86_INDIRECT_KERNELS

}  // namespace ninegrid
