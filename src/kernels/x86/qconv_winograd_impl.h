// The x86 int8 Winograd convolution F(2x2, 3x3) (qconv_winograd_x86.h says what it computes and why it is
// exact), for a vector type QV with the int8 epilogue's operations (simd_int8_avx2.h) and these:
//   I16, a vector of 2P int16 lanes (kQWinogradChannelGroup channels): i16_zero, i16_add, i16_sub,
//   i16_set1, i16_store, widen_u8 (2P bytes at p, zero-extended), widen_u8_halves (P bytes at each of two
//   places); broadcast_i16_pair (the int32 at p in every lane), load_weights_i16, madd (vpmaddwd and add),
//   shift_right_2 (arithmetic, int32 lanes).
// Per strip of tiles: the input transform writes V as [16 positions][tiles][channels] int16, then per block
// of 16 output channels a register-tiled product per position (6 tiles x 16 channels, the input channel pairs
// broadcast from V) writes [tiles][16 positions][16] int32 sums, which the output transform turns into 2x2
// outputs, requantised and stored through the int8 epilogue (qconv_epilogue_impl.h). Include only from ISA
// files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/x86/qconv_epilogue_impl.h"
#include "kernels/x86/qconv_winograd_x86.h"

namespace ninegrid {
namespace {

// How the input transform reads 16 channels of one pixel, chosen once per call: one 16-byte load (blocks that
// are a multiple of 16), two 8-byte loads from consecutive blocks (blocks of 8), or byte by byte (other
// blocks, plain NCHW included, and any block when the channel count is not a multiple of 16).
enum class QWinogradLoad { Block16, Block8, Bytes };

// Channels [c0, c0 + 16) of input pixel `pixel` as int16 values minus the zero point; with Bytes, channels
// past in_channels read as the zero point (0 after the subtraction).
template <class QV, QWinogradLoad LOAD>
__attribute__((always_inline)) inline typename QV::I16 qwinograd_load_channels(const X86QWinogradArgs& a,
                                                                               int64_t plane, int64_t c0,
                                                                               int64_t pixel,
                                                                               typename QV::I16 zero_point) {
  constexpr int64_t G = kQWinogradChannelGroup;
  const int64_t B = a.in_block;
  if constexpr (LOAD == QWinogradLoad::Block16) {
    return QV::i16_sub(QV::widen_u8(a.x + ((c0 / B) * plane + pixel) * B + c0 % B), zero_point);
  } else if constexpr (LOAD == QWinogradLoad::Block8) {
    const uint8_t* lo = a.x + ((c0 / B) * plane + pixel) * B;
    return QV::i16_sub(QV::widen_u8_halves(lo, lo + plane * B), zero_point);
  } else {
    uint8_t bytes[G];
    std::memset(bytes, static_cast<int>(a.x_zero_point), sizeof(bytes));
    for (int64_t j = 0; j < G && c0 + j < a.in_channels; ++j) {
      const int64_t c = c0 + j;
      bytes[j] = a.x[((c / B) * plane + pixel) * B + c % B];
    }
    return QV::i16_sub(QV::widen_u8(bytes), zero_point);
  }
}

// V = B^T d B for one tile whose 4x4 window starts at input pixel (iy0, ix0), into v (channel c of
// position p at v[p * position_stride + c]). INSIDE: the window lies in the image (no per-pixel test); else
// pixels outside read as zeros. B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
template <class QV, QWinogradLoad LOAD, bool INSIDE>
__attribute__((always_inline)) inline void qwinograd_transform_tile(const X86QWinogradArgs& a, int64_t iy0,
                                                                    int64_t ix0, int64_t position_stride, int16_t* v) {
  using I16 = typename QV::I16;
  constexpr int64_t G = kQWinogradChannelGroup;
  const int64_t plane = a.in_h * a.in_w, C = a.channels_padded;
  const I16 zero_point = QV::i16_set1(static_cast<int16_t>(a.x_zero_point));
  bool row_in[4], col_in[4];
  for (int i = 0; i < 4; ++i) {
    row_in[i] = INSIDE || (iy0 + i >= 0 && iy0 + i < a.in_h);
    col_in[i] = INSIDE || (ix0 + i >= 0 && ix0 + i < a.in_w);
  }
  for (int64_t c0 = 0; c0 < C; c0 += G) {
    I16 d[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        d[i][j] = row_in[i] && col_in[j]
                      ? qwinograd_load_channels<QV, LOAD>(a, plane, c0, (iy0 + i) * a.in_w + ix0 + j, zero_point)
                      : QV::i16_zero();
    I16 r[4][4];  // B^T d
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      r[0][j] = QV::i16_sub(d[0][j], d[2][j]);
      r[1][j] = QV::i16_add(d[1][j], d[2][j]);
      r[2][j] = QV::i16_sub(d[2][j], d[1][j]);
      r[3][j] = QV::i16_sub(d[1][j], d[3][j]);
    }
    int16_t* out = v + c0;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {  // (B^T d) B, row i
      QV::i16_store(out + (4 * i + 0) * position_stride, QV::i16_sub(r[i][0], r[i][2]));
      QV::i16_store(out + (4 * i + 1) * position_stride, QV::i16_add(r[i][1], r[i][2]));
      QV::i16_store(out + (4 * i + 2) * position_stride, QV::i16_sub(r[i][2], r[i][1]));
      QV::i16_store(out + (4 * i + 3) * position_stride, QV::i16_sub(r[i][1], r[i][3]));
    }
  }
}

// V for `count` tiles of tile row ty from tile column tx0, into v[position][tile][channel] (`tiles`, the
// strip's capacity, tiles per position): windows inside the image without per-pixel tests, border windows
// with them.
template <class QV, QWinogradLoad LOAD>
void qwinograd_input_transform_as(const X86QWinogradArgs& a, int64_t ty, int64_t tx0, int64_t count, int64_t tiles,
                                  int16_t* v) {
  const int64_t C = a.channels_padded, position_stride = tiles * C;
  const int64_t iy0 = 2 * ty - a.pad_top;
  const bool rows_inside = iy0 >= 0 && iy0 + 4 <= a.in_h;
  for (int64_t t = 0; t < count; ++t) {
    const int64_t ix0 = 2 * (tx0 + t) - a.pad_left;
    if (rows_inside && ix0 >= 0 && ix0 + 4 <= a.in_w)
      qwinograd_transform_tile<QV, LOAD, true>(a, iy0, ix0, position_stride, v + t * C);
    else
      qwinograd_transform_tile<QV, LOAD, false>(a, iy0, ix0, position_stride, v + t * C);
  }
}

template <class QV>
void qwinograd_input_transform(const X86QWinogradArgs& a, int64_t ty, int64_t tx0, int64_t count, int64_t tiles,
                               int16_t* v) {
  constexpr int64_t G = kQWinogradChannelGroup;
  const int64_t B = a.in_block;
  if (a.in_channels % G == 0 && B % G == 0)
    qwinograd_input_transform_as<QV, QWinogradLoad::Block16>(a, ty, tx0, count, tiles, v);
  else if (a.in_channels % G == 0 && B == G / 2)
    qwinograd_input_transform_as<QV, QWinogradLoad::Block8>(a, ty, tx0, count, tiles, v);
  else
    qwinograd_input_transform_as<QV, QWinogradLoad::Bytes>(a, ty, tx0, count, tiles, v);
}

// The products of one position for kQWinogradTileGroup tiles and one block of 16 output channels: u, the
// block's weights at this position ([pairs][16][2]); v, the first tile's channels (tile stride C); m, the
// first tile's sums at this position (tile stride 16 x 16 int32).
template <class QV>
__attribute__((always_inline)) inline void qwinograd_tile_product(const int16_t* u, const int16_t* v, int64_t C,
                                                                  int32_t* m) {
  using Acc = typename QV::Acc;
  constexpr int T = static_cast<int>(kQWinogradTileGroup);
  constexpr int P = QV::kLanes;
  Acc acc[T][2];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t][0] = acc[t][1] = QV::zero();
  for (int64_t pair = 0; pair < C / 2; ++pair) {
    const typename QV::W w0 = QV::load_weights_i16(u + pair * 2 * kQWinogradOcBlock);
    const typename QV::W w1 = QV::load_weights_i16(u + pair * 2 * kQWinogradOcBlock + 2 * P);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const typename QV::X x = QV::broadcast_i16_pair(v + t * C + 2 * pair);
      acc[t][0] = QV::madd(x, w0, acc[t][0]);
      acc[t][1] = QV::madd(x, w1, acc[t][1]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    QV::store_acc(m + t * 16 * kQWinogradOcBlock, acc[t][0]);
    QV::store_acc(m + t * 16 * kQWinogradOcBlock + P, acc[t][1]);
  }
}

// Y = A^T M A / 4 + bias for `count` tiles' sums m ([tile][16 positions][16] int32) of output block ob,
// requantised and stored. A^T = [1 1 1 0; 0 1 -1 -1].
template <class QV>
void qwinograd_output_transform(const X86QWinogradArgs& a, int64_t ob, int64_t ty, int64_t tx0, int64_t count,
                                const int32_t* m) {
  using Acc = typename QV::Acc;
  constexpr int P = QV::kLanes;
  constexpr int64_t Q = kQWinogradOcBlock;
  const int64_t plane = a.out_h * a.out_w;
  for (int64_t half = 0; half < Q / P; ++half) {
    const int64_t block = (ob * Q) / P + half;  // the epilogue's block of P channels
    if (block * P >= a.out_channels) break;
    const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, block);
    const Acc bias = QV::load_acc(a.bias + block * P);
    for (int64_t t = 0; t < count; ++t) {
      const int32_t* mt = m + t * 16 * Q + half * P;
      Acc s[2][4];  // A^T M
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const Acc m0 = QV::load_acc(mt + (0 + j) * Q), m1 = QV::load_acc(mt + (4 + j) * Q);
        const Acc m2 = QV::load_acc(mt + (8 + j) * Q), m3 = QV::load_acc(mt + (12 + j) * Q);
        s[0][j] = QV::add(QV::add(m0, m1), m2);
        s[1][j] = QV::sub(QV::sub(m1, m2), m3);
      }
      const int64_t oy0 = 2 * ty, ox0 = 2 * (tx0 + t);
#pragma GCC unroll 2
      for (int i = 0; i < 2; ++i) {
        if (oy0 + i >= a.out_h) break;
        const Acc y0 = QV::add(QV::shift_right_2(QV::add(QV::add(s[i][0], s[i][1]), s[i][2])), bias);
        const Acc y1 = QV::add(QV::shift_right_2(QV::sub(QV::sub(s[i][1], s[i][2]), s[i][3])), bias);
        const int64_t pixel = (oy0 + i) * a.out_w + ox0;
        requantize_store<QV>(a.requantize, k, y0, a.y, a.out_channels, plane, a.out_block, block, pixel);
        if (ox0 + 1 < a.out_w)
          requantize_store<QV>(a.requantize, k, y1, a.y, a.out_channels, plane, a.out_block, block, pixel + 1);
      }
    }
  }
}

template <class QV>
void qconv2d_winograd_f2x3_impl(const X86QWinogradArgs& a, int64_t item_begin, int64_t item_end, void* scratch) {
  constexpr int64_t TG = kQWinogradTileGroup, Q = kQWinogradOcBlock;
  const int64_t C = a.channels_padded;
  const int64_t tiles = qwinograd_whole_tile_groups(a.strip_tiles);  // as qwinograd_f2x3_scratch_bytes lays out
  int16_t* v = static_cast<int16_t*>(scratch);                        // [16][tiles][C]
  int32_t* m = reinterpret_cast<int32_t*>(v + 16 * tiles * C);          // [tiles][16][Q]
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t ty = item / a.strips_per_row, tx0 = (item % a.strips_per_row) * a.strip_tiles;
    const int64_t count = a.tiles_w - tx0 < a.strip_tiles ? a.tiles_w - tx0 : a.strip_tiles;
    qwinograd_input_transform<QV>(a, ty, tx0, count, tiles, v);
    // The register tiles' tiles past `count` multiply zeros; their sums are never stored.
    const int64_t used = qwinograd_whole_tile_groups(count);
    for (int64_t position = 0; position < 16; ++position)
      std::memset(v + (position * tiles + count) * C, 0, static_cast<size_t>((used - count) * C) * sizeof(int16_t));
    for (int64_t ob = 0; ob < a.out_channels_padded / Q; ++ob) {
      for (int64_t position = 0; position < 16; ++position) {
        const int16_t* u = a.weights + (position * (a.out_channels_padded / Q) + ob) * (C / 2) * 2 * Q;
        for (int64_t t = 0; t < used; t += TG)
          qwinograd_tile_product<QV>(u, v + (position * tiles + t) * C, C, m + (t * 16 + position) * Q);
      }
      qwinograd_output_transform<QV>(a, ob, ty, tx0, count, m);
    }
  }
}

}  // namespace
}  // namespace ninegrid
