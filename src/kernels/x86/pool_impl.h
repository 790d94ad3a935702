// MaxPool and AveragePool on channel-blocked tensors NCHW[B]c for a vector type V with B = V::kLanes: one
// vector holds the B channels of one pixel, so every tap is one load and one max (or add) into the pixel's
// accumulator, which stays in a register across the window. The elements are floats, or for MaxPool also
// the bytes of int8 tensors (V::Elem uint8_t or int8_t: kernels/x86/simd_int8_pixel.h), whose max is exact.
// Bit for bit the results of max_pool_blocked_ref / average_pool_blocked_ref: each pixel visits its valid
// taps in the reference's order (kernel rows, then columns) with the same operation on each, and neither
// operation reassociates (max(v, acc) = v > acc ? v : acc is not commutative for NaN and signed zeros, float
// addition is not associative). Include only from ISA files, after the simd header.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/x86/pool_x86.h"

namespace ninegrid {
namespace {

// The element a pool vector type holds: V::Elem where it declares one (the int8 pixel types), else float
// (the fp32 vector types the conv kernels share, which do not).
template <class V, class = void>
struct PoolElemOf {
  using type = float;
};
template <class V>
struct PoolElemOf<V, std::void_t<typename V::Elem>> {
  using type = typename V::Elem;
};
template <class V>
using PoolElem = typename PoolElemOf<V>::type;

// What a window computes, as the reference does. kFromFirstTap: the accumulator starts from the window's
// first tap rather than from start() (a NaN there must stay, which no start value would give);
// finish() makes the output from the accumulator and the divisor (the window's count; unused by the max).
template <class V>
struct MaxTaps {
  using T = typename V::T;
  static constexpr bool kFromFirstTap = true;
  // V::max(a, b) is MAXPS: a > b ? a : b, which returns b (the accumulator) for NaN and equal operands,
  // as the reference's `v > out ? v : out`.
  static T add(T acc, T v) { return V::max(v, acc); }
  static T start() { return V::zero(); }
  static T finish(T acc, T) { return acc; }
};

template <class V>
struct SumTaps {
  using T = typename V::T;
  static constexpr bool kFromFirstTap = false;
  static T add(T acc, T v) { return V::add(acc, v); }  // acc + v, as `acc[l] += v[l]`
  static T start() { return V::zero(); }               // 0 + -0 = +0, as in the reference
  static T finish(T acc, T divisor) { return V::div(acc, divisor); }
};

// Inputs larger than this (bytes; Zen 4's L2 per core) are assumed to come from L3 or memory, and the
// kernels prefetch the rows the next output row will read (see full_pixels). Smaller ones are likely still
// in L2 from the op that wrote them, where the prefetches only take load slots. (ResNet's stem pool is
// slower with them in the kernel bench, its input in cache, and faster in ResNet-18, its input mostly from
// memory; measured: bench/REPORT.md, "Design decisions and their measurements".)
constexpr int64_t kPrefetchInputBytes = 1 << 20;

// kG neighbouring output pixels starting at column ow whose windows lie wholly inside the input row
// (every column tap valid), with kKw > 0 the kernel width known at compile time (0: p.kernel[2]). The
// kG accumulators are independent chains, so the max (or add) latency overlaps across pixels.
template <class Taps, class V, int kKw, int kG>
void full_pixels(const PoolParams& p, const PoolAxisWindow& wh, const PoolElem<V>* xp, PoolElem<V>* yr, int64_t ow,
                 typename V::T divisor, bool prefetch) {
  using T = typename V::T;
  using E = PoolElem<V>;
  constexpr int64_t B = V::kLanes;
  const int64_t kernel_w = kKw > 0 ? kKw : p.kernel[2];
  const int64_t in_w = p.in[2], dh = p.dilation[1], dw = p.dilation[2], step = p.stride[2] * B;
  // Tap (kh, kw) of pixel ow + g is at row_of(kh) + g * step + kw * dw * B.
  const E* x0 = xp + (ow * p.stride[2] - p.pad_begin[2]) * B;
  T acc[kG];
  // The first row, from the first tap on (kFromFirstTap: the accumulator holds it already), then the others.
  const E* r = x0 + (wh.start + wh.k_begin * dh) * in_w * B;
  for (int g = 0; g < kG; ++g) acc[g] = Taps::kFromFirstTap ? V::load(r + g * step) : Taps::start();
  for (int64_t kw = Taps::kFromFirstTap ? 1 : 0; kw < kernel_w; ++kw)
    for (int g = 0; g < kG; ++g) acc[g] = Taps::add(acc[g], V::load(r + g * step + kw * dw * B));
  for (int64_t kh = wh.k_begin + 1; kh < wh.k_end; ++kh) {
    r = x0 + (wh.start + kh * dh) * in_w * B;
    for (int64_t kw = 0; kw < kernel_w; ++kw)
      for (int g = 0; g < kG; ++g) acc[g] = Taps::add(acc[g], V::load(r + g * step + kw * dw * B));
  }
  for (int g = 0; g < kG; ++g) V::store(yr + (ow + g) * B, Taps::finish(acc[g], divisor));
  if (!prefetch) return;
  // The next output row reads the same columns down to row next_last; bring the rows below this window's
  // last into L1 (at most stride_h of them: all the new rows for dilation 1) while this row finishes.
  const int64_t last = wh.start + (wh.k_end - 1) * dh, next_last = wh.start + p.stride[1] + (p.kernel[1] - 1) * dh;
  const int64_t first_new = next_last - p.stride[1] + 1 > last + 1 ? next_last - p.stride[1] + 1 : last + 1;
  for (int64_t row = first_new; row <= next_last && row < p.in[1]; ++row) {
    const char* line = reinterpret_cast<const char*>(x0 + row * in_w * B);
    const int64_t bytes = kG * step * static_cast<int64_t>(sizeof(E));
    for (int64_t byte = 0; byte < bytes; byte += 64) __builtin_prefetch(line + byte);
  }
}

// Output columns [begin, end) of one row, all with whole windows along the width.
template <class Taps, class V, int kKw>
void full_run(const PoolParams& p, const PoolAxisWindow& wh, const PoolElem<V>* xp, PoolElem<V>* yr, int64_t begin,
              int64_t end, typename V::T divisor, bool prefetch) {
  // Four pixels at a time: each window is a chain of dependent maxes (or adds), and four independent
  // chains hide their latency behind the loads. Eight on AVX-512 ran slower in the kernel bench (measured:
  // bench/REPORT.md, "Design decisions and their measurements").
  constexpr int kGroup = 4;
  int64_t ow = begin;
  for (; ow + kGroup <= end; ow += kGroup) full_pixels<Taps, V, kKw, kGroup>(p, wh, xp, yr, ow, divisor, prefetch);
  for (; ow < end; ++ow) full_pixels<Taps, V, kKw, 1>(p, wh, xp, yr, ow, divisor, prefetch);
}

template <class Taps, class V>
void full_run_any(const PoolParams& p, const PoolAxisWindow& wh, const PoolElem<V>* xp, PoolElem<V>* yr, int64_t begin,
                  int64_t end, typename V::T divisor) {
  const bool prefetch =
      p.planes * p.in[1] * p.in[2] * static_cast<int64_t>(sizeof(PoolElem<V>)) > kPrefetchInputBytes;
  // The common widths unrolled: 2 (2x2 downsampling), 3 (ResNet's stem), 5 (YOLO's SPPF).
  switch (p.kernel[2]) {
    case 2: return full_run<Taps, V, 2>(p, wh, xp, yr, begin, end, divisor, prefetch);
    case 3: return full_run<Taps, V, 3>(p, wh, xp, yr, begin, end, divisor, prefetch);
    case 5: return full_run<Taps, V, 5>(p, wh, xp, yr, begin, end, divisor, prefetch);
    default: return full_run<Taps, V, 0>(p, wh, xp, yr, begin, end, divisor, prefetch);
  }
}

// One output pixel with any window (the columns near the left and right edges): its valid taps, the
// reference's way. The window must hold at least one tap when Taps::kFromFirstTap.
template <class Taps, class V>
typename V::T edge_pixel(const PoolParams& p, const PoolAxisWindow& wh, const PoolAxisWindow& ww,
                         const PoolElem<V>* xp) {
  using T = typename V::T;
  constexpr int64_t B = V::kLanes;
  const int64_t in_w = p.in[2], dh = p.dilation[1], dw = p.dilation[2];
  // The first tap is visited again when the accumulator starts from it: max(v, v) returns the
  // accumulator, so this changes nothing (a NaN stays).
  T acc = Taps::kFromFirstTap ? V::load(xp + ((wh.start + wh.k_begin * dh) * in_w + ww.start + ww.k_begin * dw) * B)
                              : Taps::start();
  for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
    const PoolElem<V>* r = xp + (wh.start + kh * dh) * in_w * B;
    for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw) acc = Taps::add(acc, V::load(r + (ww.start + kw * dw) * B));
  }
  return acc;
}

template <class V>
void max_pool_rows(const PoolParams& p, const PoolBlockedWindows& w, const PoolElem<V>* x, PoolElem<V>* y,
                   int64_t row_begin, int64_t row_end) {
  using T = typename V::T;
  using E = PoolElem<V>;
  constexpr int64_t B = V::kLanes;
  const int64_t out_h = p.out[1], out_w = p.out[2], in_plane = p.in[1] * p.in[2] * B;
  const T lowest = V::set1(std::numeric_limits<E>::lowest());  // a window without input, as the reference
  for (int64_t r = row_begin; r < row_end; ++r) {
    const E* xp = x + (r / out_h) * in_plane;
    E* yr = y + r * out_w * B;
    const PoolAxisWindow& wh = w.rows[r % out_h];
    if (wh.k_begin >= wh.k_end) {
      for (int64_t ow = 0; ow < out_w; ++ow) V::store(yr + ow * B, lowest);
      continue;
    }
    for (int64_t ow = 0; ow < out_w; ++ow) {
      if (ow == w.full_begin && w.full_begin < w.full_end) {
        full_run_any<MaxTaps<V>, V>(p, wh, xp, yr, w.full_begin, w.full_end, lowest);
        ow = w.full_end - 1;
        continue;
      }
      const PoolAxisWindow& ww = w.cols[ow];
      V::store(yr + ow * B, ww.k_begin < ww.k_end ? edge_pixel<MaxTaps<V>, V>(p, wh, ww, xp) : lowest);
    }
  }
}

template <class V>
void average_pool_rows(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,
                       float* y, int64_t row_begin, int64_t row_end) {
  using T = typename V::T;
  constexpr int64_t B = V::kLanes;
  const int64_t out_h = p.out[1], out_w = p.out[2], in_plane = p.in[1] * p.in[2] * B;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* xp = x + (r / out_h) * in_plane;
    float* yr = y + r * out_w * B;
    const PoolAxisWindow& wh = w.rows[r % out_h];
    // The reference's divisor: the taps inside the input, or with count_include_pad those inside the
    // padding too; a window without any gives 0 (as does one whose sum of no taps is divided: +0).
    auto count_of = [&](const PoolAxisWindow& ww) {
      return count_include_pad ? wh.counted * ww.counted : (wh.k_end - wh.k_begin) * (ww.k_end - ww.k_begin);
    };
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const PoolAxisWindow& ww = w.cols[ow];
      if (ow == w.full_begin && w.full_begin < w.full_end && wh.k_begin < wh.k_end) {
        // Whole-width windows all have the same count (every column tap inside the input and the padding).
        const float divisor = static_cast<float>(count_of(ww));
        full_run_any<SumTaps<V>, V>(p, wh, xp, yr, w.full_begin, w.full_end, V::set1(divisor));
        ow = w.full_end - 1;
        continue;
      }
      const int64_t count = count_of(ww);
      const T sum = edge_pixel<SumTaps<V>, V>(p, wh, ww, xp);
      V::store(yr + ow * B, count > 0 ? V::div(sum, V::set1(static_cast<float>(count))) : V::zero());
    }
  }
}

}  // namespace
}  // namespace ninegrid
