// The fused epilogue of every x86 conv kernel, for a vector type V (simd_avx512.h / simd_avx2.h):
// residual add, activation and the single store of an output vector, in the blocked or the plain NCHW
// layout. Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/vector_math_impl.h"

namespace ninegrid {
namespace {

// Integer helpers (the ISA files may not use std::min/max, see CMakeLists.txt).
inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// Small stand-ins for std::integral_constant and std::conditional (no std templates in ISA files).
template <int N>
struct IntConstant {
  static constexpr int value = N;
};
template <bool C, class A, class B>
struct IfThen {
  using type = A;
};
template <class A, class B>
struct IfThen<false, A, B> {
  using type = B;
};

// The kernel taps [*begin, *end) along one axis that read inside the input for output coordinate o.
inline void valid_taps(int64_t o, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t in_len,
                       int64_t* begin, int64_t* end) {
  const int64_t i0 = o * stride - pad;  // input coordinate of tap 0
  int64_t b = i0 >= 0 ? 0 : (-i0 + dilation - 1) / dilation;
  int64_t e = in_len - 1 - i0 < 0 ? 0 : (in_len - 1 - i0) / dilation + 1;
  e = imin(e, kernel);
  *begin = imin(b, e);
  *end = e;
}

// The outputs [*begin, *end) along one axis whose every tap reads inside the input (the nine-grid centre).
inline void centre_outputs(int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t in_len,
                           int64_t out_len, int64_t* begin, int64_t* end) {
  const int64_t b = (pad + stride - 1) / stride;  // first o with o * stride - pad >= 0
  const int64_t last_start = in_len - 1 - (kernel - 1) * dilation + pad;  // o * stride must not exceed it
  const int64_t e = last_start < 0 ? 0 : last_start / stride + 1;
  *begin = imin(imax(b, 0), out_len);
  *end = imax(*begin, imin(e, out_len));
}

// The affine after the activation, where there is one (X86ConvArgs::affine_after). One fused multiply-add:
// within an ulp of the scalar reference's separate product and sum.
template <class V>
__attribute__((always_inline)) inline typename V::T affine_after(const X86ConvArgs& a, typename V::T v) {
  return a.affine_after ? V::fmadd(v, V::set1(a.scale_after), V::set1(a.shift_after)) : v;
}

// The fused activation's function alone on the output vector of channel block `block`, with the scalar
// reference's semantics (kernels/activation.h), NaN handling included.
template <class V>
inline typename V::T activate_kind(const X86ConvArgs& a, typename V::T v, int64_t block) {
  using T = typename V::T;
  switch (a.activation) {
    case ActivationKind::None: return v;
    case ActivationKind::Relu: return V::max(V::zero(), v);  // x < 0 ? 0 : x
    case ActivationKind::Clip: return V::min(V::set1(a.clip_max), V::max(V::set1(a.clip_min), v));
    case ActivationKind::LeakyRelu: return V::scale_negative(v, V::set1(a.alpha));
    case ActivationKind::PRelu: return V::scale_negative(v, V::load(a.slope + block * V::kLanes));
    case ActivationKind::Sigmoid: return sigmoid_v<V>(v);
    case ActivationKind::HardSigmoid:
      return V::max(V::min(V::fmadd(v, V::set1(a.alpha), V::set1(a.beta)), V::set1(1.f)), V::zero());
    case ActivationKind::HardSwish: {
      const T gate = V::fmadd(v, V::set1(1.f / 6.f), V::set1(0.5f));
      return V::mul(v, V::max(V::min(gate, V::set1(1.f)), V::zero()));
    }
    case ActivationKind::Silu: return V::mul(v, sigmoid_v<V>(v));
  }
  return v;
}

// The fused activation and the affine after it on the output vector of channel block `block`.
template <class V>
inline typename V::T activate(const X86ConvArgs& a, typename V::T v, int64_t block) {
  return affine_after<V>(a, activate_kind<V>(a, v, block));
}

// activate() on a vector whose lanes all belong to output channel `channel` (the plain-layout store
// works on transposed tiles): only PRelu's slope differs.
template <class V>
inline typename V::T activate_channel(const X86ConvArgs& a, typename V::T v, int64_t channel) {
  if (a.activation == ActivationKind::PRelu) return affine_after<V>(a, V::scale_negative(v, V::set1(a.slope[channel])));
  return activate<V>(a, v, 0);
}

// activate_kind() on N vectors of one channel block, the switch hoisted out of the loop.
template <class V, int N>
__attribute__((always_inline)) inline void activate_all_kind(const X86ConvArgs& a, typename V::T* v, int64_t block) {
  using T = typename V::T;
  const T zero = V::zero(), one = V::set1(1.f);
  switch (a.activation) {
    case ActivationKind::None: return;
    case ActivationKind::Relu:
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::max(zero, v[i]);
      return;
    case ActivationKind::Clip: {
      const T lo = V::set1(a.clip_min), hi = V::set1(a.clip_max);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::min(hi, V::max(lo, v[i]));
      return;
    }
    case ActivationKind::LeakyRelu: {
      const T alpha = V::set1(a.alpha);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::scale_negative(v[i], alpha);
      return;
    }
    case ActivationKind::PRelu: {
      const T slope = V::load(a.slope + block * V::kLanes);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::scale_negative(v[i], slope);
      return;
    }
    case ActivationKind::Sigmoid:
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = sigmoid_v<V>(v[i]);
      return;
    case ActivationKind::HardSigmoid: {
      const T alpha = V::set1(a.alpha), beta = V::set1(a.beta);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::max(V::min(V::fmadd(v[i], alpha, beta), one), zero);
      return;
    }
    case ActivationKind::HardSwish: {
      const T sixth = V::set1(1.f / 6.f), half = V::set1(0.5f);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::mul(v[i], V::max(V::min(V::fmadd(v[i], sixth, half), one), zero));
      return;
    }
    case ActivationKind::Silu:
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::mul(v[i], sigmoid_v<V>(v[i]));
      return;
  }
}

// activate() on N vectors of one channel block.
template <class V, int N>
__attribute__((always_inline)) inline void activate_all(const X86ConvArgs& a, typename V::T* v, int64_t block) {
  activate_all_kind<V, N>(a, v, block);
  if (!a.affine_after) return;
  const typename V::T scale = V::set1(a.scale_after), shift = V::set1(a.shift_after);
#pragma GCC unroll 32
  for (int i = 0; i < N; ++i) v[i] = V::fmadd(v[i], scale, shift);
}

// The blocked layouts of the store below (output in the vector's own block, or NCHW8c from 16-lane
// vectors): residual added, `activate(acc)` applied to the N vectors in place, stored once. False, with
// nothing done, for the plain layout.
template <class V, int N, class Activate>
__attribute__((always_inline)) inline bool store_blocked(const X86ConvArgs& a, typename V::T* acc, int64_t block,
                                                         int64_t pixel, int64_t pixel_stride, Activate activate) {
  constexpr int P = V::kLanes;
  const int64_t plane = a.out_h * a.out_w;
  if constexpr (P == 16) {
    if (a.out_block == 8) {
      // NCHW8c output from 16-lane vectors: each vector is 8-channel blocks 2 block and 2 block + 1 (the
      // second absent past out_channels: padding).
      float* const y_lo = a.y + (2 * block * plane + pixel) * 8;
      float* const y_hi = (2 * block + 1) * 8 < a.out_channels ? y_lo + plane * 8 : nullptr;
      const int64_t step = pixel_stride * 8;
      if (a.residual) {
        const float* const r_lo = a.residual + (2 * block * plane + pixel) * 8;
        const float* const r_hi = y_hi ? r_lo + plane * 8 : nullptr;
#pragma GCC unroll 32
        for (int i = 0; i < N; ++i)
          acc[i] = V::add(acc[i], V::load_halves(r_lo + i * step, r_hi ? r_hi + i * step : nullptr));
      }
      activate(acc);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) V::store_halves(y_lo + i * step, y_hi ? y_hi + i * step : nullptr, acc[i]);
      return true;
    }
  }
  if (a.out_block == 1) return false;
  // Locals, so the stores below cannot make the compiler reload the pointers from the args.
  const int64_t offset = (block * plane + pixel) * P, step = pixel_stride * P;
  float* const y = a.y + offset;
  const float* const residual = a.residual ? a.residual + offset : nullptr;
  if (residual)
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[i] = V::add(acc[i], V::load(residual + i * step));
  activate(acc);
#pragma GCC unroll 32
  for (int i = 0; i < N; ++i) V::store(y + i * step, acc[i]);
  return true;
}

// Writes N output vectors of channel block `block` at the output pixels pixel + i * pixel_stride of the
// plane (stride 1: along a row; out_w: down a column): residual added, activation applied, stored once.
// The accumulators already hold the bias.
// store_pixels_inline is for the kernels whose tiles are too small to pay for a call (depthwise).
template <class V, int N>
__attribute__((always_inline)) inline void store_pixels_inline(const X86ConvArgs& a, typename V::T* acc,
                                                               int64_t block, int64_t pixel,
                                                               int64_t pixel_stride = 1) {
  constexpr int P = V::kLanes;
  const int64_t plane = a.out_h * a.out_w;
  if (store_blocked<V, N>(a, acc, block, pixel, pixel_stride,
                          [&](typename V::T* v) { activate_all<V, N>(a, v, block); }))
    return;
  // Plain NCHW: lane j is channel block * P + j; the lanes past out_channels are padding, never stored.
  const int64_t c0 = block * P;
  const int64_t lanes = imin(P, a.out_channels - c0);
  if (pixel_stride == 1) {
    // Consecutive pixels: transpose up to P of them at a time, so each channel's run of pixels is one
    // (masked) vector; residual, activation and store then work on whole vectors.
#pragma GCC unroll 4
    for (int c = 0; c < N; c += P) {
      const int n = N - c < P ? N - c : P;
      typename V::T r[P];
#pragma GCC unroll 16
      for (int k = 0; k < P; ++k) r[k] = k < n ? acc[c + k] : V::zero();
      V::transpose(r);
      for (int64_t j = 0; j < lanes; ++j) {
        const int64_t at = (c0 + j) * plane + pixel + c;
        typename V::T v = r[j];
        if (a.residual) v = V::add(v, V::load_first(a.residual + at, n));
        v = activate_channel<V>(a, v, c0 + j);
        V::store_first(a.y + at, v, n);
      }
    }
    return;
  }
  alignas(64) float tile[N][P];
  if (a.residual) {
    for (int64_t j = 0; j < P; ++j)
      for (int i = 0; i < N; ++i)
        tile[i][j] = j < lanes ? a.residual[(c0 + j) * plane + pixel + i * pixel_stride] : 0.f;
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[i] = V::add(acc[i], V::load(tile[i]));
  }
  activate_all<V, N>(a, acc, block);
#pragma GCC unroll 32
  for (int i = 0; i < N; ++i) V::store(tile[i], acc[i]);
  for (int64_t j = 0; j < lanes; ++j) {
    float* y = a.y + (c0 + j) * plane + pixel;
    for (int i = 0; i < N; ++i) y[i * pixel_stride] = tile[i][j];
  }
}

template <class V, int N>
void store_pixels(const X86ConvArgs& a, typename V::T* acc, int64_t block, int64_t pixel, int64_t pixel_stride = 1) {
  store_pixels_inline<V, N>(a, acc, block, pixel, pixel_stride);
}

// Asks for the output lines of N output vectors of channel block `block` (pixels pixel + i), and their
// residual lines, to be brought into L1 while the tile accumulates, the output's for writing (prefetchw).
// Touched only at the store, they would otherwise miss all at once at the end of every tile (measured
// with the caches evicted: bench/REPORT.md, "Design decisions and their measurements"). The common
// blocked layout only.
template <class V, int N>
__attribute__((always_inline)) inline void prefetch_output(const X86ConvArgs& a, int64_t block, int64_t pixel) {
  constexpr int P = V::kLanes;
  if (a.out_block != P) return;
  constexpr int kLineFloats = 16;
  const int64_t offset = (block * a.out_h * a.out_w + pixel) * P;
  float* y = a.y + offset;
#pragma GCC unroll 32
  for (int f = 0; f < N * P; f += kLineFloats) __builtin_prefetch(y + f, 1, 3);
  if (!a.residual) return;
  const float* r = a.residual + offset;
#pragma GCC unroll 32
  for (int f = 0; f < N * P; f += kLineFloats) __builtin_prefetch(r + f);
}

// Whether the epilogue's activation is a clamp (None, Relu, Clip, with no affine after it): one min/max
// pair with activate()'s NaN behaviour, since max and min return their second operand, the value, when it
// is NaN.
inline bool clamp_activation(const X86ConvArgs& a) {
  const ActivationKind act = a.activation;
  return !a.affine_after && (act == ActivationKind::None || act == ActivationKind::Relu || act == ActivationKind::Clip);
}

// The bounds of a clamp activation: [0, inf) for Relu, [clip_min, clip_max] for Clip, everything for None.
struct ClampBounds {
  float lo, hi;
};
inline ClampBounds clamp_bounds(const X86ConvArgs& a) {
  const bool relu = a.activation == ActivationKind::Relu, clip = a.activation == ActivationKind::Clip;
  return {relu ? 0.f : clip ? a.clip_min : -__builtin_inff(), clip ? a.clip_max : __builtin_inff()};
}

// The register tiles' store. The common case (a blocked output layout, a clamp activation) is inlined
// with no call and no switch, so the accumulators go from registers through the epilogue to
// memory; any other layout or activation takes the call, on a copy, so that the accumulators' address
// never escapes and they are not kept on the stack for it. (As a call for every case the accumulators
// went through the stack twice, and with 16 input channels the epilogue took a large share of a
// pointwise layer's time; with the activation switch inlined GCC still spilled them. Measured:
// bench/REPORT.md, "Design decisions and their measurements".)
template <class V, int N>
__attribute__((always_inline)) inline void store_tile_pixels(const X86ConvArgs& a, typename V::T* acc, int64_t block,
                                                             int64_t pixel, int64_t pixel_stride = 1) {
  using T = typename V::T;
  if (clamp_activation(a)) {
    const ClampBounds bounds = clamp_bounds(a);
    const T lo = V::set1(bounds.lo), hi = V::set1(bounds.hi);
    auto clamp = [&](T* v) {
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) v[i] = V::min(hi, V::max(lo, v[i]));
    };
    if (store_blocked<V, N>(a, acc, block, pixel, pixel_stride, clamp)) return;
  }
  T copy[N];
#pragma GCC unroll 32
  for (int i = 0; i < N; ++i) copy[i] = acc[i];
  store_pixels<V, N>(a, copy, block, pixel, pixel_stride);
}

}  // namespace
}  // namespace ninegrid
