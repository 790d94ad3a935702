// The input pixels a strided 1x1 conv reads, (oh * stride_h, ow * stride_w), gathered into a plane of
// out_h x out_w pixels in the same channel block, so that the pointwise kernel (stride 1) can run the conv:
// the float conv (ops/conv_fast.cpp) and the int8 one (ops/qconv_fast.cpp) both do. Tensors in NCHW[B]c
// with B = in_block elements of type T per pixel; blocks [block_begin, block_end) counted from src and dst,
// which may run on across images (an image's blocks follow the previous image's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/conv_params.h"

namespace ninegrid {

namespace gather_detail {
// One block's plane; B > 0: B elements per pixel known at compile time (a fixed-size copy, inlined),
// else in_block at run time.
template <int B, class T>
inline void gather_block(const Conv2dParams& p, int64_t in_block, const T* block, T* out) {
  const int64_t n = B > 0 ? B : in_block;
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    const T* row = block + oh * p.stride_h * p.in_w * n;
    for (int64_t ow = 0; ow < p.out_w; ++ow, out += n) {
      if constexpr (B > 0) std::memcpy(out, row + ow * p.stride_w * B, B * sizeof(T));
      else std::copy_n(row + ow * p.stride_w * n, n, out);
    }
  }
}
}  // namespace gather_detail

template <class T>
inline void gather_strided_pixels(const Conv2dParams& p, int64_t in_block, const T* src, T* dst, int64_t block_begin,
                                  int64_t block_end) {
  const int64_t in_plane = p.in_h * p.in_w * in_block, out_plane = p.out_h * p.out_w * in_block;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const T* in = src + b * in_plane;
    T* out = dst + b * out_plane;
    switch (in_block) {
      case 4: gather_detail::gather_block<4>(p, in_block, in, out); break;
      case 8: gather_detail::gather_block<8>(p, in_block, in, out); break;
      case 16: gather_detail::gather_block<16>(p, in_block, in, out); break;
      default: gather_detail::gather_block<0>(p, in_block, in, out); break;
    }
  }
}

}  // namespace ninegrid
