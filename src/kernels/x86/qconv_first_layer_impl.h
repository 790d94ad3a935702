// The int8 first-layer convolution (qconv_first_layer_x86.h) for a vector policy FV: L int32 lanes, one output
// pixel each, and D input bytes per lane per multiply-add (vnni: vpdpbusd, D = 4; avx2: vpmaddwd on
// zero-extended bytes, D = 2).
//
// Why: RetinaFace's 3->8 3x3/2 first conv on the indirect kernel ran at 0.18 of the vpdpbusd peak (channels
// across the lanes: 8 of them, and 3 of every 4 bytes used). Here one multiply-add covers L output pixels x
// D kernel columns of one input row for one output channel, so a 3x3 kernel over 3 channels is 9 per L
// pixels and channel (one column of 4 unused) and the window of input bytes, built once per row, serves all
// 8 channels of a pass. For stride 2 the D bytes of pixel k start at byte 2k of the row: one vpermw (vnni) or
// none (avx2: vpmovzxbw makes word pairs (2k, 2k + 1) by itself); stride 1 takes one more shuffle.
//
// A register tile is NV vectors of L consecutive pixels of one output row x 8 * NO output channels (one pass),
// accumulated from the pass's start values (the folded bias, plus the zero-point sums of kernel rows
// outside the image, which the tile skips: nine-grid rows). Columns: a tile whose bytes all lie inside the
// rows reads them in place; the first and last tiles of a row copy their window first, the zero point
// outside the image (so the folded bias is exact there). The store requantises 8 channels of L pixels,
// packs them to bytes with saturating packs (as requantize_store_packed does, qconv_epilogue_impl.h) and
// transposes them in registers to 8 bytes per pixel: NCHW8c directly, NCHW16c from two octets, plain
// NCHW needs no transpose.
//
// FV provides the int32 requantisation steps of QVecVnni / QVecAvx2 (simd_int8_*.h) and:
//   window<S>(s)           lane k: the D bytes (avx2: zero-extended to int16) at s + S * k
//   kWindowBytes<S>        how many bytes from s window<S> reads
//   weight(w)              the 32-bit word at w in every lane (vnni: 4 int8 weights; avx2: 2 int16)
//   madd(x, w, acc)        acc + the lane's dot product of x and w
//   transpose_4x4_bytes(v) in each 128-bit lane, bytes [c][i] (4 x 4) to [i][c]
//   unpacklo_i32/hi_i32, unpacklo_i64/hi_i64 (within 128-bit lanes)
//   store_octets(y, lo, hi)  lo's lane j: pixels 4j, 4j + 1 (8 bytes each), hi's: 4j + 2, 4j + 3 -> 8L bytes
//   store_sixteens(y, u)     u[m]'s lane j: pixel 4j + m (16 bytes) -> 16L bytes (vnni only)
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"  // imin, imax, valid_taps
#include "kernels/x86/qconv_first_layer_x86.h"

namespace ninegrid {
namespace {

#define NG_QFIRST_TILE __attribute__((noinline))

// Where a tile's input rows start: row (ic, kh) at base + ic * ic_stride + kh * kh_stride, at the tile's first
// column; every byte the tile reads is there.
struct QFirstTileInput {
  const uint8_t* base;
  int64_t ic_stride, kh_stride;
};

// Per pass and output row: the sums' start values, whether the requantisation must clamp before it rounds
// (a multiplier outside the packed stores' bound, see qconv_epilogue_impl.h), the pass's weights.
struct QFirstPass {
  int32_t start[16];
  bool clamp_first;
  int64_t pass;
  const int32_t* weights;
};

// The requantised int32 lanes of one channel's vector (the zero point not yet added): clamped in float when
// clamp_first, else rounded only (packs and the byte clamp then give the same bytes).
template <class FV>
__attribute__((always_inline)) inline typename FV::Acc qfirst_requantize(const X86QFirstLayerArgs& a, typename FV::Acc acc,
                                                                        int64_t c, bool clamp_first) {
  const X86Requantize& q = a.requantize;
  typename FV::F v = FV::mul(FV::to_float(acc), FV::set1_f(q.multiplier[c]));
  if (clamp_first)
    v = FV::min(FV::max(v, FV::set1_f(static_cast<float>(q.qmin - q.out_zero_point))),
                FV::set1_f(static_cast<float>(q.qmax - q.out_zero_point)));
  return FV::round_to_int(v);
}

// Output row oh, pixels [ow0, ow0 + count) (count <= NV * L: lanes past it are computed and dropped), the
// pass's channels; kernel rows [kh_begin, kh_end) read inside the image.
template <class FV, int S, int NO, int NV>
NG_QFIRST_TILE void qfirst_tile(const X86QFirstLayerArgs& a, const QFirstTileInput& in, const QFirstPass& pass,
                                int64_t oh, int64_t ow0, int64_t count, int64_t kh_begin, int64_t kh_end) {
  using Acc = typename FV::Acc;
  using X = typename FV::X;
  constexpr int L = FV::kLanes, D = FV::kDepth, C = 8 * NO;
  Acc acc[C][NV];
#pragma GCC unroll 16
  for (int o = 0; o < C; ++o) {
    const Acc s = FV::set1_i32(pass.start[o]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[o][v] = s;
  }
  const int64_t groups = a.column_groups, kernel_h = a.kernel_h;
  for (int64_t ic = 0; ic < a.in_channels; ++ic) {
    for (int64_t kh = kh_begin; kh < kh_end; ++kh) {
      const uint8_t* row = in.base + ic * in.ic_stride + kh * in.kh_stride;
      const int32_t* w = pass.weights + (ic * kernel_h + kh) * groups * C;
      for (int64_t g = 0; g < groups; ++g, w += C) {
        X xv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) xv[v] = FV::template window<S>(row + v * L * S + g * D);
#pragma GCC unroll 16
        for (int o = 0; o < C; ++o) {
          const X wv = FV::weight(w + o);
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) acc[o][v] = FV::madd(xv[v], wv, acc[o][v]);
        }
      }
    }
  }

  const int64_t plane = a.out_h * a.out_w, pixel0 = oh * a.out_w + ow0;
  const X86Requantize& q = a.requantize;
  const int64_t c0 = pass.pass * C;
  if (a.out_block == 1) {
    // Plain NCHW: each vector is one channel's run of L pixels already.
    const Acc zero_point = FV::set1_i32(q.out_zero_point);
    const int64_t channels = imin(C, a.out_channels - c0);
#pragma GCC unroll 16
    for (int o = 0; o < C; ++o) {
      if (o >= channels) break;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const int64_t n = imin(L, count - v * L);
        if (n <= 0) break;
        const Acc t = FV::add(qfirst_requantize<FV>(a, acc[o][v], c0 + o, true), zero_point);
        uint8_t* y = a.y + (c0 + o) * plane + pixel0 + v * L;
        if (n == L) {
          FV::store_u8(y, t);
        } else {
          uint8_t bytes[L];
          FV::store_u8(bytes, t);
          __builtin_memcpy(y, bytes, static_cast<size_t>(n));
        }
      }
    }
    return;
  }
  // Blocked: per vector, each octet of channels packed to bytes ([channel][pixel] in each 128-bit lane: 4
  // channels x 4 pixels), transposed to [pixel][channel] and its two halves of 4 channels interleaved.
  const Acc zero_point = FV::set1_i16(static_cast<int16_t>(q.out_zero_point));
  const Acc qmin = FV::set1_u8(static_cast<uint8_t>(q.qmin)), qmax = FV::set1_u8(static_cast<uint8_t>(q.qmax));
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t n = imin(L, count - v * L);
    if (n <= 0) break;
    Acc lo[NO], hi[NO];
#pragma GCC unroll 2
    for (int h = 0; h < NO; ++h) {
      Acc t[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) t[i] = qfirst_requantize<FV>(a, acc[8 * h + i][v], c0 + 8 * h + i, pass.clamp_first);
      const Acc p01 = FV::adds_i16(FV::pack_i32_to_i16(t[0], t[1]), zero_point);
      const Acc p23 = FV::adds_i16(FV::pack_i32_to_i16(t[2], t[3]), zero_point);
      const Acc p45 = FV::adds_i16(FV::pack_i32_to_i16(t[4], t[5]), zero_point);
      const Acc p67 = FV::adds_i16(FV::pack_i32_to_i16(t[6], t[7]), zero_point);
      const Acc first = FV::transpose_4x4_bytes(FV::min_u8(FV::max_u8(FV::pack_i16_to_u8(p01, p23), qmin), qmax));
      const Acc second = FV::transpose_4x4_bytes(FV::min_u8(FV::max_u8(FV::pack_i16_to_u8(p45, p67), qmin), qmax));
      lo[h] = FV::unpacklo_i32(first, second);
      hi[h] = FV::unpackhi_i32(first, second);
    }
    const int64_t pixel = pixel0 + v * L;
    constexpr int B = 8 * NO;  // the output block: one pass
    alignas(64) uint8_t bytes[B * L];
    uint8_t* y = a.y + (pass.pass * plane + pixel) * B;
    uint8_t* to = n == L ? y : bytes;
    if constexpr (NO == 1) {
      FV::store_octets(to, lo[0], hi[0]);
    } else {
      const Acc u[4] = {FV::unpacklo_i64(lo[0], lo[1]), FV::unpackhi_i64(lo[0], lo[1]), FV::unpacklo_i64(hi[0], hi[1]),
                        FV::unpackhi_i64(hi[0], hi[1])};
      FV::store_sixteens(to, u);
    }
    if (n < L) __builtin_memcpy(y, bytes, static_cast<size_t>(n * B));
  }
}

// Bytes a tile of NV vectors reads from its first column in each row.
template <class FV, int S, int NV>
inline int64_t qfirst_span(const X86QFirstLayerArgs& a) {
  return S * FV::kLanes * (NV - 1) + FV::kDepth * (a.column_groups - 1) + FV::template kWindowBytes<S>;
}

// Room for the widest window on the stack: every channel and kernel row, each row padded to 128 bytes (the
// widest span: vnni 2 x 16 x 2 + 4 x 2 + 34 = 106).
constexpr int64_t kQFirstWindowRow = 128;
constexpr int64_t kQFirstWindowBytes = kQFirstLayerMaxChannels * kQFirstLayerMaxKernel * kQFirstWindowRow;
// (A wider tile must not outgrow the window's rows.)
template <class FV, int S, int NV>
constexpr bool qfirst_span_fits() {
  return S * FV::kLanes * (NV - 1) + FV::kDepth * ((kQFirstLayerMaxKernel + FV::kDepth - 1) / FV::kDepth - 1) +
             FV::template kWindowBytes<S> <= kQFirstWindowRow;
}

// Output row oh of one pass: tiles of NV vectors, those at the row's ends from a window copy.
template <class FV, int S, int NO, int NV>
void qfirst_row(const X86QFirstLayerArgs& a, int64_t oh, const QFirstPass& pass, uint8_t* window) {
  constexpr int L = FV::kLanes;
  static_assert(qfirst_span_fits<FV, S, NV>(), "the tile reads past its window's rows");
  int64_t kh_begin, kh_end;
  valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
  const int64_t top = oh * a.stride_h - a.pad_top;  // input row of kernel row 0
  const int64_t span = qfirst_span<FV, S, NV>(a), plane = a.in_h * a.in_w;
  for (int64_t ow0 = 0; ow0 < a.out_w; ow0 += NV * L) {
    const int64_t count = imin(NV * L, a.out_w - ow0);
    const int64_t col = ow0 * S - a.pad_left;
    if (col >= 0 && col + span <= a.in_w) {
      const QFirstTileInput in{a.x + top * a.in_w + col, plane, a.dilation_h * a.in_w};
      qfirst_tile<FV, S, NO, NV>(a, in, pass, oh, ow0, count, kh_begin, kh_end);
      continue;
    }
    const int64_t rows = kh_end - kh_begin;
    const int64_t first = imin(imax(-col, 0), span), last = imax(first, imin(a.in_w - col, span));
    for (int64_t ic = 0; ic < a.in_channels; ++ic)
      for (int64_t r = 0; r < rows; ++r) {
        const uint8_t* src = a.x + ic * plane + (top + (kh_begin + r) * a.dilation_h) * a.in_w + col;
        uint8_t* dst = window + (ic * rows + r) * kQFirstWindowRow;
        __builtin_memset(dst, a.x_zero_point, static_cast<size_t>(first));
        __builtin_memcpy(dst + first, src + first, static_cast<size_t>(last - first));
        __builtin_memset(dst + last, a.x_zero_point, static_cast<size_t>(span - last));
      }
    const QFirstTileInput in{window - kh_begin * kQFirstWindowRow, rows * kQFirstWindowRow, kQFirstWindowRow};
    qfirst_tile<FV, S, NO, NV>(a, in, pass, oh, ow0, count, kh_begin, kh_end);
  }
}

template <class FV, int NO, int NV>
void qfirst_conv(const X86QFirstLayerArgs& a, int64_t row_begin, int64_t row_end) {
  constexpr int C = 8 * NO;
  static_assert(C <= 16, "QFirstPass holds 16 start values");
  alignas(64) uint8_t window[kQFirstWindowBytes];
  const int64_t passes = (a.out_channels + C - 1) / C, kernel_h = a.kernel_h;
  auto row = a.stride_w == 1 ? qfirst_row<FV, 1, NO, NV> : qfirst_row<FV, 2, NO, NV>;
  for (int64_t oh = row_begin; oh < row_end; ++oh) {
    int64_t kh_begin, kh_end;
    valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
    for (int64_t p = 0; p < passes; ++p) {
      QFirstPass pass;
      pass.pass = p;
      pass.weights = a.weights + p * a.in_channels * kernel_h * a.column_groups * C;
      pass.clamp_first = false;
      for (int o = 0; o < C; ++o) {
        // (int32 arithmetic wraps, as the sums do.)
        uint32_t s = static_cast<uint32_t>(a.bias[p * C + o]);
        for (int64_t kh = 0; kh < kernel_h; ++kh)
          if (kh < kh_begin || kh >= kh_end) s += static_cast<uint32_t>(a.row_zero_sums[(p * kernel_h + kh) * C + o]);
        pass.start[o] = static_cast<int32_t>(s);
        if (p * C + o < a.out_channels && !packed_store_multiplier_fits(a.requantize.multiplier[p * C + o]))
          pass.clamp_first = true;
      }
      row(a, oh, pass, window);
    }
  }
}

#undef NG_QFIRST_TILE

}  // namespace
}  // namespace ninegrid
