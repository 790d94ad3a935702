// The int8 arithmetic policy of the direct and pointwise tiles (conv_direct_impl.h), for an int32
// accumulator vector type QV (simd_int8_avx512.h: QVecVnni, simd_int8_avx2.h: QVecAvx2, QVecAvx2W7 and
// QVecAvx2W7R): uint8 inputs times int8 weights, kDepth input channels of one pixel per multiply-add, sums
// in int32 lanes, requantised by qconv_epilogue_impl.h. The tile machinery is the fp32 kernels'; only the
// arithmetic and the epilogue differ (and QVecAvx2W7R's rest vectors, conv_direct_impl.h).
//
// The zero point. The kernels multiply the raw input bytes; a tile's sums start at X86QConvArgs::bias (the
// int32 bias minus x_zero_point times the sum of all the channel's weights), which is exact wherever every
// kernel tap reads inside the input. A border tile (the nine-grid's edge rows, columns and corners) skips the
// taps outside the input, as the reference does, so it adds back those taps' x_zero_point-weighted sums
// (X86QConvArgs::tap_zero_sums) once per tile, not per pixel.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_direct_impl.h"
#include "kernels/x86/qconv_epilogue_impl.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

// quad_channel_major_of<QV>(0): whether QV stores four pixels' requantised bytes into plain NCHW channel by
// channel (QVecAvx2::store_quad_channel_major, 8 lanes), else false.
template <class QV>
constexpr auto quad_channel_major_of(int) -> decltype(&QV::store_quad_channel_major, true) {
  return true;
}
template <class QV>
constexpr bool quad_channel_major_of(long) {
  return false;
}

// Tile widths per int32 lanes and output blocks per tile (the members of DirectMenu, conv_direct_impl.h).
// VNNI (32 zmm registers): vpdpbusd accumulates in place, so the fp32 kernels' shapes fit as they are:
// 2 blocks x 12 pixels = 24 accumulators beside 2 weight vectors and the broadcast input (27 of 32), with
// enough independent sums (24) to cover the instruction's latency many times over. Each step is one
// broadcast shared by the two blocks' vpdpbusd, 64 multiply-adds each. The 5-pixel tile is for 7x7 planes
// (3x3, padding 1): their 5 centre columns and the 5 rows of each border column become one tile each, where
// 4 + 1 left a 1-pixel tile of 2 sums, too few to cover vpdpbusd's latency (ResNet's 512-channel 3x3 layers
// went from 0.58 to 0.91 of the core's vpdpbusd peak; bench/REPORT.md, "A Zen 5 machine"). The fp32 menus did not take
// it: the same two widths added there made the other fp32 direct layers 15-23% slower (same REPORT section).
// AVX2 (16 ymm registers) without pixel groups (the vpmaddubsw policies; QVecAvx2's tiles of stride 2 or
// more take the grouped menu below): a multiply-add is vpmaddwd into a temporary, then vpaddd into the sum,
// so each tile needs a register more than fp32's FMA: 2 blocks x 5 pixels = 10 accumulators + 2 weights +
// the broadcast + the product (14 of 16) where fp32 fills 16 with 2 x 6 (measured: bench/REPORT.md, "int8").
// QVecAvx2W7 also holds a vector of ones for its vpmaddwd, 15 of 16, and GCC keeps two products in flight
// and spills one accumulator per step; a 6-pixel tile was measured no faster (bench/REPORT.md, "int8 on
// AVX2 with 7-bit weights").
// GROUPED: QV takes the stride-1 pixels in groups (QVecAvx2's vpbroadcastd + vpshufb pairs, whose tiles
// keep no group register): 2 blocks x 4 pixels, on NCHW8c input two whole groups of 2, where 5 pixels left
// one pixel to the broadcast and measured slower (bench/REPORT.md, "int8 pointwise on vpmaddwd"). The same
// menu serves its other tiles (NCHW4c: one group of 4; NCHW16c: no groups; strides above 1, column tiles),
// measured only on 3x3 stride 2 (1-4% slower than 5 pixels, that REPORT section). Without a specialisation
// of its own a grouped policy takes the ungrouped menu (the AArch64 ones: qconv_direct_arm_impl.h).
template <int LANES, int OCB, bool GROUPED = false>
struct QDirectMenu : QDirectMenu<LANES, OCB, false> {};
template <>
struct QDirectMenu<16, 2> {
  using Full = TileWidths<12, 13, 10, 8, 6, 5, 4, 3, 2, 1>;
  using Reduced = TileWidths<12, 4, 2, 1>;
  using Column = TileWidths<6, 5, 4, 3, 2, 1>;
};
template <>
struct QDirectMenu<16, 1> {
  using Full = TileWidths<16, 12, 8, 4, 2, 1>;
  using Reduced = TileWidths<16, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};
template <>
struct QDirectMenu<8, 2> {
  using Full = TileWidths<5, 4, 3, 2, 1>;
  using Reduced = TileWidths<5, 4, 2, 1>;
  using Column = TileWidths<4, 3, 2, 1>;
};
template <>
struct QDirectMenu<8, 1> {
  using Full = TileWidths<10, 8, 4, 2, 1>;
  using Reduced = TileWidths<10, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};
template <>
struct QDirectMenu<8, 2, true> {
  using Full = TileWidths<4, 3, 2, 1>;
  using Reduced = TileWidths<4, 2, 1>;
  using Column = TileWidths<4, 3, 2, 1>;
};
// The vector type of QV's pixel groups, or its broadcast type when it has none (declarations for decltype).
template <class QV>
auto group_vector_of(int) -> typename QV::XG;
template <class QV>
auto group_vector_of(long) -> typename QV::X;

// The type of the values QV multiplies: QV::In (QVecAvx2Wide's int16 staged copy), else the input's bytes.
template <class QV>
auto input_type_of(int) -> typename QV::In;
template <class QV>
auto input_type_of(long) -> uint8_t;

template <class QV>
struct QuantConvArith {
  using Vec = QV;
  using Args = X86QConvArgs;
  using In = decltype(input_type_of<QV>(0));
  using Wt = int8_t;
  using T = typename QV::Acc;
  using X = typename QV::X;
  using W = typename QV::W;
  static constexpr int kLanes = QV::kLanes;
  static constexpr int kDepth = QV::kDepth;
  static constexpr bool kHalfBlocks = false;
  static constexpr bool kPrefetchInputBlocks = true;  // (the fp32 policy says why 8-lane fp32 tiles do not)
  static constexpr bool kRest = rest_vectors_of<QV>(0);  // QVecAvx2W7R's (conv_direct_impl.h)
  template <int OCB>
  using Menu = QDirectMenu<QV::kLanes, OCB, (group_elements_of<QV>(0) > 0)>;

  // The input the tiles read: Args::x, which for a policy on int16 inputs points at their staged copy.
  __attribute__((always_inline)) static const In* input(const Args& a) {
    return reinterpret_cast<const In*>(a.x);
  }
  __attribute__((always_inline)) static W load_weights(const Wt* p) { return QV::load_weights(p); }
  __attribute__((always_inline)) static X broadcast(const In* p) { return QV::broadcast_inputs(p); }
  __attribute__((always_inline)) static T madd(X x, W w, T acc) { return QV::madd(x, w, acc); }
  // Pixel groups (conv_direct_impl.h), where QV has them (the AArch64 vectors and QVecAvx2; the other x86
  // ones have a kGroupElements of 0 or none, and XG is then a stand-in that nothing uses).
  static constexpr int kGroupElements = group_elements_of<QV>(0);
  using XG = decltype(group_vector_of<QV>(0));
  __attribute__((always_inline)) static XG load_group(const In* p) { return QV::load_group(p); }
  template <int L>
  __attribute__((always_inline)) static T madd_lane(XG g, W w, T acc) {
    return QV::template madd_lane<L>(g, w, acc);
  }

  // The folded bias, plus the zero-point sums of the taps outside [kh_begin, kh_end) x [kw_begin, kw_end).
  __attribute__((always_inline)) static T start(const Args& a, int64_t block, int64_t kh_begin, int64_t kh_end,
                                                int64_t kw_begin, int64_t kw_end) {
    T sum = QV::load_acc(a.bias + block * kLanes);
    const bool all_taps = kh_begin == 0 && kh_end == a.kernel_h && kw_begin == 0 && kw_end == a.kernel_w;
    if (all_taps || a.x_zero_point == 0) return sum;
    return QV::add(sum, skipped_tap_sums(a, block, kh_begin, kh_end, kw_begin, kw_end));
  }
  static T skipped_tap_sums(const Args& a, int64_t block, int64_t kh_begin, int64_t kh_end, int64_t kw_begin,
                            int64_t kw_end) {
    T sum = QV::zero();
    const int32_t* z = a.tap_zero_sums + block * a.kernel_h * a.kernel_w * kLanes;
    for (int64_t kh = 0; kh < a.kernel_h; ++kh)
      for (int64_t kw = 0; kw < a.kernel_w; ++kw, z += kLanes)
        if (kh < kh_begin || kh >= kh_end || kw < kw_begin || kw >= kw_end) sum = QV::add(sum, QV::load_acc(z));
    return sum;
  }

  // Every layout and clamp runs through the same requantisation, so the dense tiles need only one group
  // and whole input blocks.
  static bool dense_fits(const Args& a) { return a.groups == 1 && a.in_channels % a.in_block == 0; }

  // The output (and residual) lines of N vectors, as conv_epilogue_impl.h's prefetch_output does for fp32.
  template <int N>
  __attribute__((always_inline)) static void prefetch_output(const Args& a, int64_t block, int64_t pixel) {
    if (a.out_block != kLanes) return;
    constexpr int kLine = 64;
    const int64_t offset = (block * a.out_h * a.out_w + pixel) * kLanes;
#pragma GCC unroll 32
    for (int b = 0; b < N * kLanes; b += kLine) __builtin_prefetch(a.y + offset + b, 1, 3);
    if (!a.requantize.residual) return;
#pragma GCC unroll 32
    for (int b = 0; b < N * kLanes; b += kLine) __builtin_prefetch(a.requantize.residual + offset + b);
  }

  // N vectors of sums of output block `block` at pixels pixel + i * pixel_stride, requantised and stored.
  // The output in the vector's own block is inlined, so the accumulators go from registers through the
  // requantisation to memory; any other block takes a call on a copy (store_halves, store_scattered), so
  // that the accumulators' address never escapes. (With requantize_store's scatter path inlined for every pixel,
  // GCC kept the tile's accumulators on the stack and moved them around every vpdpbusd.)
  template <int N>
  __attribute__((always_inline)) static void store_tile(const Args& a, T* acc, int64_t block, int64_t pixel,
                                                        int64_t pixel_stride = 1) {
    if (a.out_block == kLanes) {
      const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, block);
      const int64_t offset = (block * a.out_h * a.out_w + pixel) * kLanes, step = pixel_stride * kLanes;
      uint8_t* const y = a.y + offset;
      const uint8_t* const residual = a.requantize.residual ? a.requantize.residual + offset : nullptr;
      if (a.requantize.packed_store && pixel_stride == 1) {
        // The N vectors' bytes lie together: the packed store, 4 vectors at a time (fewer operations per
        // vector, which bound pointwise convolutions over few input channels: bench/REPORT.md).
        const RequantizePacked<QV> kp = requantize_packed_layer<QV>(a.requantize);
#pragma GCC unroll 8
        for (int i = 0; i < N; i += 4)
          requantize_store_packed<QV>(k, kp, acc + i, N - i < 4 ? N - i : 4, y + i * kLanes,
                                      residual ? residual + i * kLanes : nullptr);
        return;
      }
      requantize_store_run<QV, N>(k, acc, y, residual, step);
      return;
    }
    T copy[N];
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) copy[i] = acc[i];
    if (a.out_block == kLanes / 2) return store_halves<N>(a, copy, block, pixel, pixel_stride);
    store_scattered<N>(a, copy, block, pixel, pixel_stride);
  }
  // Output blocks of half a vector: two half blocks per vector, the second absent past out_channels
  // (padding). Out of line as store_scattered, on a copy (a rare layout; inlined in every tile it was a
  // third of these files' code).
  template <int N>
  __attribute__((noinline)) static void store_halves(const Args& a, const T* acc, int64_t block, int64_t pixel,
                                                     int64_t pixel_stride) {
    const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, block);
    constexpr int kHalf = kLanes / 2;
    const int64_t plane = a.out_h * a.out_w, step = pixel_stride * kHalf;
    const int64_t offset_lo = (2 * block * plane + pixel) * kHalf;
    const bool has_hi = (2 * block + 1) * kHalf < a.out_channels;
    const uint8_t* const r = a.requantize.residual;
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) {
      const int64_t lo = offset_lo + i * step, hi = lo + plane * kHalf;
      T v;
      if (r) {
        const T residual = QV::load_u8_halves(r + lo, has_hi ? r + hi : nullptr);
        v = requantize_lanes<QV>(k, acc[i], &residual);
      } else {
        v = requantize_lanes<QV>(k, acc[i], nullptr);
      }
      QV::store_u8_halves(a.y + lo, has_hi ? a.y + hi : nullptr, v);
    }
  }
  // Any other block, and plain NCHW. Plain NCHW (a detection head's output, read by a DequantizeLinear and a
  // Reshape) with 8-lane vectors: four pixels at a time requantised together, then stored channel by channel
  // (QV::store_quad_channel_major), where storing each vector's bytes a plane apart took most of a head's
  // time; the rest one vector at a time.
  template <int N>
  __attribute__((noinline)) static void store_scattered(const Args& a, const T* acc, int64_t block, int64_t pixel,
                                                        int64_t pixel_stride) {
    const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, block);
    const int64_t plane = a.out_h * a.out_w;
    int i = 0;
    if constexpr (quad_channel_major_of<QV>(0)) {
      if (a.out_block == 1 && pixel_stride == 1 && a.requantize.packed_store && !a.requantize.residual) {
        const RequantizePacked<QV> kp = requantize_packed_layer<QV>(a.requantize);
        const int64_t channels = a.out_channels - block * kLanes < kLanes ? a.out_channels - block * kLanes : kLanes;
        uint8_t* const y = a.y + block * kLanes * plane + pixel;
        for (; i + 4 <= N; i += 4) requantize_store_quad_plain<QV>(k, kp, acc + i, y + i, plane, channels);
      }
    }
    for (; i < N; ++i)
      requantize_store<QV>(a.requantize, k, acc[i], a.y, a.out_channels, plane, a.out_block, block,
                           pixel + i * pixel_stride);
  }
  template <int N>
  __attribute__((always_inline)) static void store(const Args& a, T* acc, int64_t block, int64_t pixel,
                                                   int64_t pixel_stride = 1) {
    store_tile<N>(a, acc, block, pixel, pixel_stride);
  }
};

}  // namespace
}  // namespace ninegrid
