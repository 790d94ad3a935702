#include "kernels/ref/depth_to_space_blocked.h"

#include <cstring>

namespace ninegrid {

namespace {

// One output row: pixel (w, j) is pixel w of `taps` + j * tap_stride, the input row of tap (i, j). kLanes
// floats per pixel (0: `block` at run time), so the common blocks copy a fixed number of lanes (a vector or
// two). The output never overlaps the input (the session gives every value its own bytes).
template <int64_t kLanes>
void interleave_taps(const float* taps, int64_t tap_stride, int64_t in_w, int64_t bs, int64_t block,
                     float* __restrict dst) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  for (int64_t w = 0; w < in_w; ++w)
    for (int64_t j = 0; j < bs; ++j)
      std::memcpy(dst + (w * bs + j) * B, taps + j * tap_stride + w * B, sizeof(float) * static_cast<size_t>(B));
}

}  // namespace

void depth_to_space_dcr_blocked(const float* x, float* y, int64_t out_channels, int64_t in_h, int64_t in_w,
                                int64_t bs, int64_t block, int64_t row_begin, int64_t row_end) {
  const int64_t out_h = in_h * bs, out_blocks = out_channels / block;
  const int64_t in_plane = in_h * in_w * block, out_row = in_w * bs * block;
  // Tap (i, j) of output block cb is input block plane (i*bs + j) * out_blocks + cb.
  const int64_t tap_stride = out_blocks * in_plane;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / out_h, oh = r % out_h, h = oh / bs, i = oh % bs;
    const int64_t n = plane / out_blocks, cb = plane % out_blocks;
    const float* taps = x + (n * bs * bs * out_blocks + i * bs * out_blocks + cb) * in_plane + h * in_w * block;
    float* dst = y + r * out_row;
    switch (block) {
      case 16: interleave_taps<16>(taps, tap_stride, in_w, bs, block, dst); break;
      case 8: interleave_taps<8>(taps, tap_stride, in_w, bs, block, dst); break;
      case 4: interleave_taps<4>(taps, tap_stride, in_w, bs, block, dst); break;
      default: interleave_taps<0>(taps, tap_stride, in_w, bs, block, dst); break;
    }
  }
}

void depth_to_space_dcr_plain(const float* x, int64_t x_block, float* y, int64_t out_channels, int64_t in_h,
                              int64_t in_w, int64_t bs, int64_t row_begin, int64_t row_end) {
  const int64_t out_h = in_h * bs, out_w = in_w * bs, in_plane = in_h * in_w;
  const int64_t in_channels = bs * bs * out_channels, P = x_block;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / out_h, oh = r % out_h, h = oh / bs, i = oh % bs;
    const int64_t n = plane / out_channels, c = plane % out_channels;
    float* __restrict dst = y + r * out_w;
    for (int64_t j = 0; j < bs; ++j) {
      // Tap (i, j) of channel c is input channel (i*bs + j) * C + c of image n: lane ch % P of block ch / P.
      const int64_t ch = (i * bs + j) * out_channels + c;
      const float* __restrict src = x + ((n * (in_channels / P) + ch / P) * in_plane + h * in_w) * P + ch % P;
      for (int64_t w = 0; w < in_w; ++w) dst[w * bs + j] = src[w * P];
    }
  }
}

}  // namespace ninegrid
