// The indirection buffer of indirect convolution (QNNPACK; Dukhan, "The Indirect Convolution Algorithm"):
// instead of copying input patches into an im2col matrix, record for every output pixel and kernel tap
// which input pixel it reads. A kernel then computes a tile of output pixels as a GEMM whose rows are
// fetched through these entries, for any kernel size, stride, dilation and padding alike; taps that fall
// in the zero padding point at a zero row instead. Built once per input shape (at load time, since the
// conv's shape is fixed then), shared by every image of the batch and by every channel block: an entry is
// a pixel index in the input plane, so the same buffer serves plain and blocked layouts.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/conv_params.h"

namespace ninegrid {

struct IndirectionBuffer {
  static constexpr int32_t kZero = -1;  // a tap in the padding: read the zero row
  int64_t pixel_tile = 1;  // output pixels per tile (the kernel's register tile)
  int64_t taps = 1;        // kernel_h * kernel_w
  int64_t tiles = 0;       // ceil(out_h * out_w / pixel_tile)
  // [tile][tap][pixel of the tile]: input pixel ih * in_w + iw read by output pixel tile * pixel_tile + r
  // (raster order over the output plane) at tap kh * kernel_w + kw, or kZero. The pixels past the plane in
  // the last tile read only the zero row.
  std::vector<int32_t> entries;

  const int32_t* tile(int64_t t) const { return entries.data() + t * taps * pixel_tile; }
};

// For a conv with positive strides and dilations, non-negative pads (kernels/conv_params.h) and an input
// plane of fewer than 2^31 pixels (entries are 32-bit: 36 bytes per output pixel of a 3x3 conv).
IndirectionBuffer build_indirection(const Conv2dParams& p, int64_t pixel_tile);

}  // namespace ninegrid
