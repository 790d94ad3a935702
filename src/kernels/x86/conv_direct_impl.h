// The direct and pointwise convolution kernels for a vector type V (NeoCPU Algorithm 1 with register
// blocking): a tile of OCB output blocks x N output pixels lives in OCB * N vector accumulators while the
// input channels and kernel taps stream by; each step loads OCB weight vectors (P output channels of one
// tap of one input channel) and, for each of the N pixels, broadcasts one input value and issues OCB FMAs.
// The input may have any channel block PIN (1 = plain NCHW, the first layer of a network: Algorithm 2).
//
// Nine-grid borders: along the width, the centre outputs (every tap inside the input) run the unrolled
// tiles; the border outputs run one pixel at a time over their valid taps only. Along the height, each
// output row simply loops over its valid kernel rows. No padded copy of the input is ever made.
//
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {
namespace {

// What every tile of one conv needs, computed once per call.
struct DirectGeometry {
  int64_t in_plane;         // in_h * in_w
  int64_t weights_per_block;  // floats of packed weights per output block: icpg * kh * kw * P
  int64_t centre_begin, centre_end;  // output columns whose taps are all inside the input
};

// Input element of channel ic at pixel `pixel` for channel block PIN.
template <int PIN>
inline const float* input_at(const X86ConvArgs& a, int64_t in_plane, int64_t ic, int64_t pixel) {
  return a.x + ((ic / PIN) * in_plane + pixel) * PIN + ic % PIN;
}

// Output row oh, columns [ow0, ow0 + N) of output blocks [block, block + OCB), all centre columns.
// SW: the stride along the width, or 0 for "read it from the args".
template <class V, int OCB, int N, int PIN, int SW>
inline void direct_tile(const X86ConvArgs& a, const DirectGeometry& g, int64_t block, int64_t oh, int64_t ow0,
                        int64_t kh_begin, int64_t kh_end) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  T acc[OCB][N];
  for (int o = 0; o < OCB; ++o) {
    const T bias = V::load(a.bias + (block + o) * P);
    for (int i = 0; i < N; ++i) acc[o][i] = bias;
  }
  const int64_t kw_count = a.kernel_w;
  const int64_t pixel_step = (SW ? SW : a.stride_w) * PIN;  // floats between neighbouring output pixels' inputs
  const int64_t row_step = a.dilation_h * a.in_w * PIN;
  const int64_t tap_step = a.dilation_w * PIN;
  const int64_t ih = oh * a.stride_h - a.pad_top + kh_begin * a.dilation_h;  // first valid input row
  const int64_t iw = ow0 * (SW ? SW : a.stride_w) - a.pad_left;              // >= 0 in the centre
  const int64_t ic_begin = (block * P / a.out_channels_per_group) * a.in_channels_per_group;
  const int64_t ic_end = ic_begin + a.in_channels_per_group;
  const int64_t taps = a.kernel_h * kw_count;
  const float* w = a.weights + block * g.weights_per_block + kh_begin * kw_count * P;

  for (int64_t ic = ic_begin; ic < ic_end && kh_begin < kh_end;) {
    // Channels ic .. ic + run - 1 sit in one input block: their values are PIN-interleaved.
    const int64_t run = imin(PIN - ic % PIN, ic_end - ic);
    const float* xc = input_at<PIN>(a, g.in_plane, ic, ih * a.in_w + iw);
    for (int64_t j = 0; j < run; ++j, ++xc, w += taps * P) {
      const float* xr = xc;
      const float* wr = w;
      for (int64_t kh = kh_begin; kh < kh_end; ++kh, xr += row_step, wr += kw_count * P) {
        const float* xk = xr;
        const float* wk = wr;
        for (int64_t kw = 0; kw < kw_count; ++kw, xk += tap_step, wk += P) {
          T wv[OCB];
          for (int o = 0; o < OCB; ++o) wv[o] = V::load(wk + o * g.weights_per_block);
#pragma GCC unroll 16
          for (int i = 0; i < N; ++i) {
            const T xv = V::broadcast(xk + i * pixel_step);
            for (int o = 0; o < OCB; ++o) acc[o][i] = V::fmadd(xv, wv[o], acc[o][i]);
          }
        }
      }
    }
    ic += run;
  }
  for (int o = 0; o < OCB; ++o) store_pixels<V, N>(a, acc[o], block + o, oh * a.out_w + ow0);
}

// One output pixel (oh, ow) of output blocks [block, block + OCB), any position: only its valid taps.
template <class V, int OCB, int PIN>
inline void direct_pixel(const X86ConvArgs& a, const DirectGeometry& g, int64_t block, int64_t oh, int64_t ow,
                         int64_t kh_begin, int64_t kh_end) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  int64_t kw_begin, kw_end;
  valid_taps(ow, a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, &kw_begin, &kw_end);
  T acc[OCB][1];
  for (int o = 0; o < OCB; ++o) acc[o][0] = V::load(a.bias + (block + o) * P);
  const int64_t ic_begin = (block * P / a.out_channels_per_group) * a.in_channels_per_group;
  const int64_t ic_end = ic_begin + a.in_channels_per_group;
  const int64_t taps = a.kernel_h * a.kernel_w;
  if (kw_begin < kw_end && kh_begin < kh_end) {
    const int64_t ih = oh * a.stride_h - a.pad_top + kh_begin * a.dilation_h;
    const int64_t iw = ow * a.stride_w - a.pad_left + kw_begin * a.dilation_w;
    const float* w = a.weights + block * g.weights_per_block + (kh_begin * a.kernel_w + kw_begin) * P;
    for (int64_t ic = ic_begin; ic < ic_end; ++ic, w += taps * P) {
      const float* xr = input_at<PIN>(a, g.in_plane, ic, ih * a.in_w + iw);
      const float* wr = w;
      for (int64_t kh = kh_begin; kh < kh_end; ++kh, xr += a.dilation_h * a.in_w * PIN, wr += a.kernel_w * P) {
        for (int64_t kw = kw_begin; kw < kw_end; ++kw) {
          const T xv = V::broadcast(xr + (kw - kw_begin) * a.dilation_w * PIN);
          for (int o = 0; o < OCB; ++o)
            acc[o][0] = V::fmadd(xv, V::load(wr + (kw - kw_begin) * P + o * g.weights_per_block), acc[o][0]);
        }
      }
    }
  }
  for (int o = 0; o < OCB; ++o) store_pixels<V, 1>(a, acc[o], block + o, oh * a.out_w + ow);
}

// Output rows [row_begin, row_end) of output blocks [block, block + OCB).
template <class V, int OCB, int PIN, int SW>
void direct_rows(const X86ConvArgs& a, const DirectGeometry& g, int64_t block, int64_t row_begin,
                 int64_t row_end) {
  constexpr int N = V::kTilePixels;
  for (int64_t oh = row_begin; oh < row_end; ++oh) {
    int64_t kh_begin, kh_end;
    valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
    for (int64_t ow = 0; ow < g.centre_begin; ++ow) direct_pixel<V, OCB, PIN>(a, g, block, oh, ow, kh_begin, kh_end);
    int64_t ow = g.centre_begin;
    for (; ow + N <= g.centre_end; ow += N) direct_tile<V, OCB, N, PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
    if (N > 8 && ow + 8 <= g.centre_end) {
      direct_tile<V, OCB, (N > 8 ? 8 : 1), PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
      ow += 8;
    }
    if (N > 4 && ow + 4 <= g.centre_end) {
      direct_tile<V, OCB, (N > 4 ? 4 : 1), PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
      ow += 4;
    }
    if (N > 2 && ow + 2 <= g.centre_end) {
      direct_tile<V, OCB, 2, PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
      ow += 2;
    }
    if (ow < g.centre_end) {
      direct_tile<V, OCB, 1, PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
      ow += 1;
    }
    for (; ow < a.out_w; ++ow) direct_pixel<V, OCB, PIN>(a, g, block, oh, ow, kh_begin, kh_end);
  }
}

using DirectRowsFn = void (*)(const X86ConvArgs&, const DirectGeometry&, int64_t, int64_t, int64_t);

template <class V, int OCB, int PIN>
DirectRowsFn pick_direct_stride(int64_t stride_w) {
  if (stride_w == 1) return direct_rows<V, OCB, PIN, 1>;
  if (stride_w == 2) return direct_rows<V, OCB, PIN, 2>;
  return direct_rows<V, OCB, PIN, 0>;
}

template <class V, int OCB>
DirectRowsFn pick_direct(int64_t in_block, int64_t stride_w) {
  if (in_block == 16) return pick_direct_stride<V, OCB, 16>(stride_w);
  if (in_block == 8) return pick_direct_stride<V, OCB, 8>(stride_w);
  return pick_direct_stride<V, OCB, 1>(stride_w);
}

// Whether output blocks b and b + 1 read the same input channels (so one tile can hold both).
inline bool same_group(const X86ConvArgs& a, int64_t b, int P) {
  return a.groups == 1 || (b * P) / a.out_channels_per_group == ((b + 1) * P) / a.out_channels_per_group;
}

template <class V>
void direct_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  constexpr int P = V::kLanes;
  static_assert(V::kTileOcBlocks == 2, "the block loop below pairs output blocks");
  DirectGeometry g;
  g.in_plane = a.in_h * a.in_w;
  g.weights_per_block = a.in_channels_per_group * a.kernel_h * a.kernel_w * P;
  centre_outputs(a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, a.out_w, &g.centre_begin, &g.centre_end);
  const DirectRowsFn pair = pick_direct<V, 2>(a.in_block, a.stride_w);
  const DirectRowsFn single = pick_direct<V, 1>(a.in_block, a.stride_w);
  for (int64_t b = r.oc_block_begin; b < r.oc_block_end;) {
    if (b + 1 < r.oc_block_end && same_group(a, b, P)) {
      pair(a, g, b, r.row_begin, r.row_end);
      b += 2;
    } else {
      single(a, g, b, r.row_begin, r.row_end);
      b += 1;
    }
  }
}

// Pointwise (1x1, stride 1, no padding): output pixel p reads input pixel p, so the plane is one row and
// tiles run across row ends. Pixels [p0, p0 + N) of output blocks [block, block + OCB).
template <class V, int OCB, int N, int PIN>
inline void pointwise_tile(const X86ConvArgs& a, int64_t plane, int64_t weights_per_block, int64_t block,
                           int64_t p0) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  T acc[OCB][N];
  for (int o = 0; o < OCB; ++o) {
    const T bias = V::load(a.bias + (block + o) * P);
    for (int i = 0; i < N; ++i) acc[o][i] = bias;
  }
  const int64_t ic_begin = (block * P / a.out_channels_per_group) * a.in_channels_per_group;
  const int64_t ic_end = ic_begin + a.in_channels_per_group;
  const float* w = a.weights + block * weights_per_block;
  for (int64_t ic = ic_begin; ic < ic_end;) {
    const int64_t run = imin(PIN - ic % PIN, ic_end - ic);
    const float* xc = input_at<PIN>(a, plane, ic, p0);
    for (int64_t j = 0; j < run; ++j, ++xc, w += P) {
      T wv[OCB];
      for (int o = 0; o < OCB; ++o) wv[o] = V::load(w + o * weights_per_block);
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) {
        const T xv = V::broadcast(xc + i * PIN);
        for (int o = 0; o < OCB; ++o) acc[o][i] = V::fmadd(xv, wv[o], acc[o][i]);
      }
    }
    ic += run;
  }
  for (int o = 0; o < OCB; ++o) store_pixels<V, N>(a, acc[o], block + o, p0);
}

template <class V, int OCB, int PIN>
void pointwise_pixels(const X86ConvArgs& a, int64_t block, int64_t p_begin, int64_t p_end) {
  constexpr int N = V::kTilePixels;
  const int64_t plane = a.out_h * a.out_w;
  const int64_t wpb = a.in_channels_per_group * V::kLanes;
  int64_t p = p_begin;
  for (; p + N <= p_end; p += N) pointwise_tile<V, OCB, N, PIN>(a, plane, wpb, block, p);
  if (N > 8 && p + 8 <= p_end) {
    pointwise_tile<V, OCB, (N > 8 ? 8 : 1), PIN>(a, plane, wpb, block, p);
    p += 8;
  }
  if (N > 4 && p + 4 <= p_end) {
    pointwise_tile<V, OCB, (N > 4 ? 4 : 1), PIN>(a, plane, wpb, block, p);
    p += 4;
  }
  if (N > 2 && p + 2 <= p_end) {
    pointwise_tile<V, OCB, 2, PIN>(a, plane, wpb, block, p);
    p += 2;
  }
  for (; p < p_end; ++p) pointwise_tile<V, OCB, 1, PIN>(a, plane, wpb, block, p);
}

using PointwiseFn = void (*)(const X86ConvArgs&, int64_t, int64_t, int64_t);

template <class V, int OCB>
PointwiseFn pick_pointwise(int64_t in_block) {
  if (in_block == 16) return pointwise_pixels<V, OCB, 16>;
  if (in_block == 8) return pointwise_pixels<V, OCB, 8>;
  return pointwise_pixels<V, OCB, 1>;
}

template <class V>
void pointwise_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  constexpr int P = V::kLanes;
  const PointwiseFn pair = pick_pointwise<V, 2>(a.in_block);
  const PointwiseFn single = pick_pointwise<V, 1>(a.in_block);
  const int64_t p_begin = r.row_begin * a.out_w, p_end = r.row_end * a.out_w;
  for (int64_t b = r.oc_block_begin; b < r.oc_block_end;) {
    if (b + 1 < r.oc_block_end && same_group(a, b, P)) {
      pair(a, b, p_begin, p_end);
      b += 2;
    } else {
      single(a, b, p_begin, p_end);
      b += 1;
    }
  }
}

}  // namespace
}  // namespace ninegrid
