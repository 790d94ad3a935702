// col2im for a vector type V (kernels/x86/col2im_x86.h): the scatter-add of a transposed convolution's
// column planes into its output, then bias and activation, one output row at a time.
//
// V is the ISA's vector type (simd_avx2.h / simd_avx512.h) plus
//   static void interleave(T a, T b, T* first, T* second)
// writing a0 b0 a1 b1 ... into *first (the lower halves) and *second (the upper halves): the stride-2
// rows of the common 2x2 stride-2 layer are two column rows woven together.
//
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/col2im_x86.h"
#include "kernels/x86/conv_epilogue_impl.h"

namespace ninegrid {
namespace {

// floor(a / b) and ceil(a / b) for b > 0 and a of either sign.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The finished output value of channel m from the vector v of its column sums.
template <class V>
inline typename V::T finish(const Col2imArgs& a, typename V::T v, typename V::T bias, int64_t m) {
  return activate_channel<V>(a.epilogue, V::add(v, bias), m);
}

// y = activation(y + bias) over y[begin, end) of an output row of channel m.
template <class V>
void finish_range(const Col2imArgs& a, float* yr, int64_t begin, int64_t end, typename V::T bias, int64_t m) {
  constexpr int L = V::kLanes;
  int64_t i = begin;
  for (; i + L <= end; i += L) V::store(yr + i, finish<V>(a, V::load(yr + i), bias, m));
  if (i < end) {
    const int rest = static_cast<int>(end - i);
    V::store_first(yr + i, finish<V>(a, V::load_first(yr + i, rest), bias, m), rest);
  }
}

template <class V>
inline void fill_zero(float* y, int64_t n) {
  constexpr int L = V::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) V::store(y + i, V::zero());
  for (; i < n; ++i) y[i] = 0.f;
}

// y[0, n) = finished src[0, n).
template <class V>
inline void finish_run(const Col2imArgs& a, float* y, const float* src, int64_t n, typename V::T bias, int64_t m) {
  constexpr int L = V::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) V::store(y + i, finish<V>(a, V::load(src + i), bias, m));
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    V::store_first(y + i, finish<V>(a, V::load_first(src + i, rest), bias, m), rest);
  }
}

template <class V>
inline void add_run(float* y, const float* src, int64_t n) {
  constexpr int L = V::kLanes;
  int64_t i = 0;
  for (; i + L <= n; i += L) V::store(y + i, V::add(V::load(y + i), V::load(src + i)));
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    V::store_first(y + i, V::add(V::load_first(y + i, rest), V::load_first(src + i, rest)), rest);
  }
}

// Output row oh of channel m when the taps tile the output (kernel == stride, dilation 1): each output
// pixel receives exactly one value (or none, past the input: output_padding), so the row is written once,
// finished (bias, activation) in registers, without a zeroing pass; only the few scalar-copied pixels at
// the ends are finished afterwards. `taps` points at the channel's first column plane (kh = kw = 0).
template <class V>
void make_row_disjoint(const Col2imArgs& a, const float* taps, int64_t plane, int64_t m, int64_t oh, float* yr) {
  constexpr int L = V::kLanes;
  const typename V::T bias = V::set1(a.bias ? a.bias[m] : 0.f);
  const int64_t t = oh + a.pad_top;
  const int64_t ih = t / a.stride_h, kh = t % a.stride_h;
  int64_t ow = 0, done_begin = 0, done_end = 0;  // [done_begin, done_end) is finished already
  if (ih < a.in_h) {
    // Tap (kh, kw) of input row ih: row + kw * plane. Output column ow reads tap (ow + pad) % stride at
    // input column (ow + pad) / stride; past in_w * stride - pad there is no input column.
    const float* row = taps + kh * a.kernel_w * plane + (ih - a.cols_row0) * a.in_w;
    const int64_t sw = a.stride_w, pad = a.pad_left;
    const int64_t valid = imax(0, imin(a.out_w, a.in_w * sw - pad));
    if (sw == 1) {
      finish_run<V>(a, yr, row + pad, valid, bias, m);
      ow = done_end = valid;
    } else if (sw == 2) {
      for (; ow < valid && (ow + pad) % 2 != 0; ++ow) yr[ow] = row[plane + (ow + pad) / 2];
      done_begin = ow;
      for (; ow + 2 * L <= valid; ow += 2 * L) {
        const int64_t iw = (ow + pad) / 2;
        typename V::T first, second;
        V::interleave(V::load(row + iw), V::load(row + plane + iw), &first, &second);
        V::store(yr + ow, finish<V>(a, first, bias, m));
        V::store(yr + ow + L, finish<V>(a, second, bias, m));
      }
      done_end = ow;
    }
    for (; ow < valid; ++ow) {
      const int64_t u = ow + pad;
      yr[ow] = row[(u % sw) * plane + u / sw];
    }
  }
  for (; ow < a.out_w; ++ow) yr[ow] = 0.f;
  finish_range<V>(a, yr, 0, done_begin, bias, m);
  finish_range<V>(a, yr, done_end, a.out_w, bias, m);
}

// Output row oh of channel m in general (taps overlap, dilation, gaps between strided taps): zero, add
// every (kh, kw) tap's run of input columns that lands in the row, then finish the row while it is in L1.
template <class V>
void make_row_overlapping(const Col2imArgs& a, const float* taps, int64_t plane, int64_t m, int64_t oh, float* yr) {
  fill_zero<V>(yr, a.out_w);
  for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
    const int64_t t = oh + a.pad_top - kh * a.dilation_h;  // = ih * stride_h for a contributing row ih
    if (t < 0) break;                                      // and for every later kh too
    if (t % a.stride_h != 0 || t / a.stride_h >= a.in_h) continue;
    const float* row = taps + kh * a.kernel_w * plane + (t / a.stride_h - a.cols_row0) * a.in_w;
    for (int64_t kw = 0; kw < a.kernel_w; ++kw) {
      const int64_t offset = kw * a.dilation_w - a.pad_left;  // output column of input column iw: iw * sw + offset
      const int64_t iw_begin = imax(0, ceil_div(-offset, a.stride_w));
      const int64_t iw_end = imin(a.in_w, floor_div(a.out_w - 1 - offset, a.stride_w) + 1);
      if (iw_begin >= iw_end) continue;
      const float* src = row + kw * plane;
      if (a.stride_w == 1) {
        add_run<V>(yr + iw_begin + offset, src + iw_begin, iw_end - iw_begin);
      } else {
        for (int64_t iw = iw_begin; iw < iw_end; ++iw) yr[iw * a.stride_w + offset] += src[iw];
      }
    }
  }
  finish_range<V>(a, yr, 0, a.out_w, V::set1(a.bias ? a.bias[m] : 0.f), m);
}

template <class V>
void col2im_rows(const Col2imArgs& a, int64_t channel_begin, int64_t channel_end, int64_t row_begin,
                 int64_t row_end) {
  const int64_t plane = a.cols_rows * a.in_w;
  const int64_t taps = a.kernel_h * a.kernel_w;
  const bool disjoint =
      a.kernel_h == a.stride_h && a.kernel_w == a.stride_w && a.dilation_h == 1 && a.dilation_w == 1;
  for (int64_t m = channel_begin; m < channel_end; ++m) {
    const float* channel_taps = a.cols + m * taps * plane;
    for (int64_t oh = row_begin; oh < row_end; ++oh) {
      float* yr = a.y + (m * a.out_h + oh) * a.out_w;
      if (disjoint) make_row_disjoint<V>(a, channel_taps, plane, m, oh, yr);
      else make_row_overlapping<V>(a, channel_taps, plane, m, oh, yr);
    }
  }
}

}  // namespace
}  // namespace ninegrid
