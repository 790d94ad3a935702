// The int8 pointwise kernel on vpmaddwd over a staged int16 copy of its input (QVecAvx2Wide,
// simd_int8_avx2.h): the pixels of a thread's range go in chunks; each chunk's input (every input block) is
// widened once into the thread's scratch, then every output block of the range runs conv_direct_impl.h's
// pointwise tiles over it. The widening (one vpmovzxbw per 16 values) is shared by all the output blocks,
// where QVecAvx2's tiles widen each pair again for every pair of blocks.
//
// Constraints beyond qconv2d_pointwise's: one group, whole input blocks (the dense tiles), output blocks of
// the vector's 8 lanes (the chunk's output is addressed from its first pixel), and X86ConvRange::scratch
// holding pointwise_wide_scratch_floats(a) floats.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_arith_impl.h"

namespace ninegrid {
namespace {

// Pixels per chunk: its staged input (2 bytes per value) within about 96 KB, so that it stays in L2 while
// the range's output blocks read it one pair after another; a multiple of 4 pixels, at least 16. The tiles
// see the chunk as the plane: on short chunks (up to 14 x 14 pixels) each block pair asks for the next
// pair's weights ahead (pointwise_pixels' prefetch_next), as on small planes, since a pair's pixels again
// take little longer than fetching its weights.
inline int64_t pointwise_wide_chunk_pixels(const X86QConvArgs& a) {
  constexpr int64_t kChunkBytes = 96 * 1024;
  const int64_t pixels = kChunkBytes / (2 * a.in_channels) / 4 * 4;
  return pixels < 16 ? 16 : pixels;
}

inline int64_t pointwise_wide_scratch_floats(const X86QConvArgs& a) {
  return (pointwise_wide_chunk_pixels(a) * a.in_channels * 2 + 3) / 4;
}

template <class A>
void pointwise_wide_conv(const X86QConvArgs& a, const X86ConvRange& r) {
  using QV = typename A::Vec;
  constexpr int P = A::kLanes;
  const int64_t plane = a.in_h * a.in_w, in_blocks = a.in_channels / a.in_block;
  const int64_t p_begin = r.row_begin * a.out_w, p_end = r.row_end * a.out_w;
  const int64_t chunk = pointwise_wide_chunk_pixels(a);
  int16_t* const staged = reinterpret_cast<int16_t*>(r.scratch);
  DirectGeometry g;
  g.weights_per_block = a.in_channels_per_group * P;
  for (int64_t c_begin = p_begin; c_begin < p_end; c_begin += chunk) {
    const int64_t len = imin(chunk, p_end - c_begin);
    for (int64_t b = 0; b < in_blocks; ++b)
      QV::widen(a.x + (b * plane + c_begin) * a.in_block, staged + b * len * a.in_block, len * a.in_block);
    // The chunk as a conv of its own: input planes of len pixels, output from pixel c_begin on (the tiles
    // address an output block's pixels from the full plane's block start, so only the base moves).
    X86QConvArgs c = a;
    c.x = reinterpret_cast<const uint8_t*>(staged);
    c.y = a.y + c_begin * P;
    if (a.requantize.residual) c.requantize.residual = a.requantize.residual + c_begin * P;
    g.in_plane = len;
    pointwise_block_range<A>(c, g, r.oc_block_begin, r.oc_block_end, 0, len);
  }
}

}  // namespace
}  // namespace ninegrid
