// The first-layer convolution for a vector type V: a plain NCHW image with few channels in (RGB), few
// output channels out (8 to 32), stride 1 or 2 along the width.
//
// Why not the direct kernel: it puts output channels across the vector lanes and broadcasts one input value
// per FMA. With 8 or 16 output channels that is one or two FMAs per broadcast, so the loads, not the FMAs,
// bound it (RetinaFace's 3->8 3x3/s2 layer ran far below the FMA peak; measured: bench/REPORT.md, "Design
// decisions and their measurements"). Here the lanes are P consecutive output pixels of one row instead:
// each kernel tap loads NV input vectors (the stride-2 columns gathered by one permute) and multiplies them
// by 8 broadcast weights, 8 x NV FMAs for NV + 8 loads, with 8 x NV accumulators (AVX-512: 8 channels x 3
// vectors = 24 of 32 registers; AVX2: 8 x 1). The accumulators hold 8 channels x P pixels; they are
// transposed in registers into the blocked output layout (8 channels per pixel) at the store.
//
// Borders: tiles whose every tap reads inside the input rows read them in place; the others (the first
// and last tiles of a row) first copy their window of the input, zeros outside it, and run the same
// code on the copy. Kernel rows outside the input are skipped (nine-grid along the height).
//
// V must provide, besides the simd header's members (see the ISA files, which extend VecAvx512/VecAvx2):
//   even(a, b)            lanes 0, 2, 4, ... of the 2P floats a:b
//   load_range(p, b, e)   p[0..P) with lanes outside [b, e) zero and not read (0 <= b <= e <= P)
//   transpose_octets(r)   r[0..8) = 8 channel rows of P pixels -> r[k] = the 8 channels of pixels
//                         k*G .. k*G + G - 1 (G = P / 8), pixel-major
//   octet(p)              the 8 floats at p, repeated across the vector
//
// Include only from ISA files; internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {
namespace {

constexpr int kFirstLayerChannels = 8;  // output channels per pass (one octet)

#define NG_TILE __attribute__((noinline))

// The input rows a tile reads: row (ic, kh) starts at base + ic * ic_stride + kh * kh_stride, at the
// tile's first input column; every load stays inside what that row holds.
struct TileInput {
  const float* base;
  int64_t ic_stride, kh_stride;
};

// Output row oh, pixels [ow0, ow0 + count) (count <= NV * P; the lanes past it are computed and dropped),
// channels [8 * chunk, 8 * chunk + 8); kernel rows [kh_begin, kh_end) read inside the input.
template <class V, int S, int NV>
NG_TILE void first_layer_tile(const X86ConvArgs& a, const TileInput& in, int64_t chunk, int64_t oh, int64_t ow0,
                              int64_t count, int64_t kh_begin, int64_t kh_end) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  constexpr int C = kFirstLayerChannels;
  T acc[C][NV];
#pragma GCC unroll 8
  for (int o = 0; o < C; ++o) {
    const T bias = V::set1(a.bias[chunk * C + o]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[o][v] = bias;
  }
  const int64_t taps = a.kernel_h * a.kernel_w;
  for (int64_t ic = 0; ic < a.in_channels; ++ic) {
    const float* w_ic = a.weights + (chunk * a.in_channels + ic) * taps * C;
    for (int64_t kh = kh_begin; kh < kh_end; ++kh) {
      const float* row = in.base + ic * in.ic_stride + kh * in.kh_stride;
      const float* w = w_ic + kh * a.kernel_w * C;
      for (int64_t kw = 0; kw < a.kernel_w; ++kw, w += C) {
        const float* x = row + kw * a.dilation_w;
        T xv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          xv[v] = S == 1 ? V::load(x + v * P) : V::even(V::load(x + 2 * v * P), V::load(x + 2 * v * P + P));
#pragma GCC unroll 8
        for (int o = 0; o < C; ++o) {
          const T wv = V::broadcast(w + o);
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[o][v] = V::fmadd(wv, xv[v], acc[o][v]);
        }
      }
    }
  }

  const int64_t plane = a.out_h * a.out_w;
  const int64_t pixel0 = oh * a.out_w + ow0;
  if (a.out_block == 1) {
    // Plain NCHW: each accumulator is one channel's run of P pixels already.
    // The loops run over the constants C and NV, with conditions inside rather than a bound of
    // `channels`: indexing acc with a run-time index can keep the whole array in memory, so that every
    // multiply-add above loads and stores its accumulator (the AVX2 tile did, in `perf annotate`).
    const int64_t channels = imin(C, a.out_channels - chunk * C);
#pragma GCC unroll 8
    for (int o = 0; o < C; ++o) {
      if (o >= channels) continue;
      const int64_t c = chunk * C + o;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const int64_t n = imin(P, count - v * P);
        if (n <= 0) continue;
        float* y = a.y + c * plane + pixel0 + v * P;
        T out = acc[o][v];
        if (a.residual) out = V::add(out, V::load_first(a.residual + c * plane + pixel0 + v * P, static_cast<int>(n)));
        V::store_first(y, activate_channel<V>(a, out, c), static_cast<int>(n));
      }
    }
    return;
  }
  // Blocked (8 or 16 channels per pixel): transpose each vector's 8 x P tile into pixel-major octets.
  constexpr int G = P / C;  // pixels per transposed vector
  const T slope = a.activation == ActivationKind::PRelu ? V::octet(a.slope + chunk * C) : V::zero();
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    if (count - v * P <= 0) continue;
    T r[C];
#pragma GCC unroll 8
    for (int o = 0; o < C; ++o) r[o] = acc[o][v];
    V::transpose_octets(r);
#pragma GCC unroll 8
    for (int k = 0; k < C; ++k) {
      const int64_t first = v * P + k * G;  // the first pixel of r[k], from ow0
      const int64_t n = imin(G, count - first);
      if (n <= 0) break;
      const int64_t pixel = pixel0 + first;
      T out = r[k];
      if (a.out_block == C) {
        const int64_t at = (chunk * plane + pixel) * C;
        if (a.residual) out = V::add(out, V::load_first(a.residual + at, static_cast<int>(n * C)));
        out = a.activation == ActivationKind::PRelu ? affine_after<V>(a, V::scale_negative(out, slope))
                                                   : activate<V>(a, out, 0);
        V::store_first(a.y + at, out, static_cast<int>(n * C));
      } else if constexpr (G == 2) {
        // 16-channel blocks (16-lane vectors only): this octet is half `chunk % 2` of block chunk / 2.
        const int64_t at = ((chunk / 2) * plane + pixel) * 16 + (chunk % 2) * C;
        if (a.residual) out = V::add(out, V::load_halves(a.residual + at, n > 1 ? a.residual + at + 16 : nullptr));
        out = a.activation == ActivationKind::PRelu ? affine_after<V>(a, V::scale_negative(out, slope))
                                                   : activate<V>(a, out, 0);
        V::store_halves(a.y + at, n > 1 ? a.y + at + 16 : nullptr, out);
      }
    }
  }
}

// Input columns a tile of `vectors` vectors reads from its first column: up to the last tap of the last
// vector's last load (S * P floats).
template <int P, int S>
inline int64_t tile_span(const X86ConvArgs& a, int vectors) {
  return (vectors - 1) * P * S + (a.kernel_w - 1) * a.dilation_w + S * P;
}

// One tile of NV vectors at ow0. A tile whose columns all lie inside the input rows reads them in place;
// one at a row end (padding columns, or loads running past the row) first copies its window, zeros
// outside the input, into `window` (per thread, on the stack of the caller), which costs a few loads per
// row of the window instead of a masked load per tap.
template <class V, int S, int NV>
void first_layer_any_tile(const X86ConvArgs& a, int64_t chunk, int64_t oh, int64_t ow0, int64_t count,
                          int64_t kh_begin, int64_t kh_end, float* window) {
  constexpr int P = V::kLanes;
  const int64_t col = ow0 * S - a.pad_left;
  const int64_t span = tile_span<P, S>(a, NV);
  const int64_t top = oh * a.stride_h - a.pad_top;  // input row of kernel row 0
  if (col >= 0 && col + span <= a.in_w) {
    const TileInput in{a.x + top * a.in_w + col, a.in_h * a.in_w, a.dilation_h * a.in_w};
    first_layer_tile<V, S, NV>(a, in, chunk, oh, ow0, count, kh_begin, kh_end);
    return;
  }
  const int64_t rows = kh_end - kh_begin;
  const int64_t stride = (span + P - 1) / P * P;
  // Valid columns of the window: [first, last) relative to col.
  const int64_t first = imin(imax(-col, 0), span), last = imax(first, imin(a.in_w - col, span));
  for (int64_t ic = 0; ic < a.in_channels; ++ic) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = a.x + ic * a.in_h * a.in_w + (top + (kh_begin + r) * a.dilation_h) * a.in_w + col;
      float* dst = window + (ic * rows + r) * stride;
      for (int64_t j = 0; j < stride; j += P) {
        const int64_t b = imin(imax(first - j, 0), P), e = imax(b, imin(last - j, P));
        V::store(dst + j, V::load_range(src + j, static_cast<int>(b), static_cast<int>(e)));
      }
    }
  }
  const TileInput in{window - kh_begin * stride, rows * stride, stride};
  first_layer_tile<V, S, NV>(a, in, chunk, oh, ow0, count, kh_begin, kh_end);
}

// Output row oh of channel octet `chunk`: tiles of NV vectors, then one narrower tile for the rest.
template <class V, int S, int NV>
void first_layer_row(const X86ConvArgs& a, int64_t chunk, int64_t oh, float* window) {
  constexpr int P = V::kLanes;
  int64_t kh_begin, kh_end;
  valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
  int64_t ow0 = 0;
  for (; ow0 + NV * P <= a.out_w; ow0 += NV * P)
    first_layer_any_tile<V, S, NV>(a, chunk, oh, ow0, NV * P, kh_begin, kh_end, window);
  // The rest (< NV vectors) in one tile of as many vectors as it needs, the last one partial.
  const int64_t rest = a.out_w - ow0;
  if (rest <= 0) return;
  if (rest <= P) first_layer_any_tile<V, S, 1>(a, chunk, oh, ow0, rest, kh_begin, kh_end, window);
  else if (NV > 2 && rest <= 2 * P) first_layer_any_tile<V, S, 2>(a, chunk, oh, ow0, rest, kh_begin, kh_end, window);
  else first_layer_any_tile<V, S, NV>(a, chunk, oh, ow0, rest, kh_begin, kh_end, window);
}

// The kernel: range blocks are channel octets. Every octet of a row runs before the next row, while the
// row's input lines are in L1.
// Floats of r.scratch the kernel needs: the widest tile's window (every input channel and kernel row,
// whole vectors of columns), copied there where the tile crosses the image's border.
template <class V, int NV>
int64_t first_layer_scratch_floats(const X86ConvArgs& a) {
  constexpr int P = V::kLanes;
  const int64_t span = a.stride_w == 1 ? tile_span<P, 1>(a, NV) : tile_span<P, 2>(a, NV);
  return a.in_channels * a.kernel_h * ((span + P - 1) / P * P);
}

template <class V, int NV>
void first_layer_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  const bool s1 = a.stride_w == 1;
  float* window = r.scratch;
  auto row = s1 ? first_layer_row<V, 1, NV> : first_layer_row<V, 2, NV>;
  for (int64_t oh = r.row_begin; oh < r.row_end; ++oh)
    for (int64_t chunk = r.oc_block_begin; chunk < r.oc_block_end; ++chunk) row(a, chunk, oh, window);
}

#undef NG_TILE

}  // namespace
}  // namespace ninegrid
