#include "kernels/indirection.h"

namespace ninegrid {

IndirectionBuffer build_indirection(const Conv2dParams& p, int64_t pixel_tile) {
  IndirectionBuffer b;
  b.pixel_tile = pixel_tile;
  b.taps = p.kernel_h * p.kernel_w;
  const int64_t out_plane = p.out_h * p.out_w;
  b.tiles = (out_plane + pixel_tile - 1) / pixel_tile;
  b.entries.assign(static_cast<size_t>(b.tiles * b.taps * pixel_tile), IndirectionBuffer::kZero);
  for (int64_t pixel = 0; pixel < out_plane; ++pixel) {
    const int64_t oh = pixel / p.out_w, ow = pixel % p.out_w;
    int32_t* tile = b.entries.data() + (pixel / pixel_tile) * b.taps * pixel_tile;
    for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dilation_h;
      for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
        const int64_t iw = ow * p.stride_w - p.pad_left + kw * p.dilation_w;
        if (ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w)
          tile[(kh * p.kernel_w + kw) * pixel_tile + pixel % pixel_tile] = static_cast<int32_t>(ih * p.in_w + iw);
      }
    }
  }
  return b;
}

}  // namespace ninegrid
