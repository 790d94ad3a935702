// The int8 arithmetic policy of the indirect convolution tiles (conv_indirect_impl.h), for an int32
// accumulator vector type QV of L lanes (simd_int8_avx512.h: QVecVnni256, simd_int8_avx2.h: QVecAvx2): uint8
// inputs times int8 weights, kDepth input channels of one pixel per multiply-add, sums from the
// zero-point-folded bias, requantised by qconv_epilogue_impl.h and stored once in the output's block.
//
// The zero point: the indirection buffer's padding taps read X86QIndirectArgs::zero_row, a row of input
// zero points, so every tap of every output contributes x_zero_point times its weights where the reference
// skips it, and the bias's correction (minus x_zero_point times all the channel's weights) is exact
// everywhere: unlike the direct kernels' nine-grid borders, no tile needs a per-tap correction.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_indirect_impl.h"
#include "kernels/x86/qconv_epilogue_impl.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

template <class QV>
struct QuantIndirectArith {
  using Args = X86QIndirectArgs;
  using In = uint8_t;
  using Wt = int8_t;
  using T = typename QV::Acc;
  using X = typename QV::X;
  using W = typename QV::W;
  static constexpr int kLanes = QV::kLanes;
  static constexpr int kDepth = QV::kDepth;

  static const uint8_t* zero_row(const Args& a) { return a.zero_row; }
  __attribute__((always_inline)) static W load_weights(const int8_t* p) { return QV::load_weights(p); }
  __attribute__((always_inline)) static X broadcast(const uint8_t* p) { return QV::broadcast_inputs(p); }
  __attribute__((always_inline)) static T madd(X x, W w, T acc) { return QV::madd(x, w, acc); }
  __attribute__((always_inline)) static T start(const Args& a, int64_t cp) { return QV::load_acc(a.bias + cp); }

  // One vector of sums of padded channel cp (real channel c, its group's channels ending at
  // (c / out_channels_per_group + 1) * out_channels_per_group) at `pixel`, requantised and stored. A whole
  // vector within one output block, or in two half blocks, is inlined, so the tile's sums go from registers
  // through the requantisation to memory; anything else (a group's last, narrower vector, plain NCHW, a
  // block that splits the vector otherwise) is a call, on the vector's value, so that the accumulators'
  // address never escapes (as in QuantConvArith::store_tile, qconv_arith_impl.h).
  __attribute__((always_inline)) static void store(const Args& a, T v, int64_t cp, int64_t c, int64_t pixel) {
    constexpr int L = kLanes;
    const int64_t ocpg = a.out_channels_per_group;
    const int64_t lanes = imin(L, (c / ocpg + 1) * ocpg - c);
    const uint8_t* const residual = a.requantize.residual;
    if (lanes == L && a.out_block % L == 0 && c % L == 0) {  // the vector's L bytes lie together
      const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, cp / L);
      const int64_t B = a.out_block, at = ((c / B) * a.out_plane + pixel) * B + c % B;
      QV::store_u8(a.y + at, requantize_vector<QV>(k, v, residual ? residual + at : nullptr));
      return;
    }
    constexpr int H = L / 2;
    if (lanes > H && a.out_block == H && c % H == 0) {
      const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, cp / L);
      const int64_t lo = ((c / H) * a.out_plane + pixel) * H, hi = lo + a.out_plane * H;
      const bool has_hi = lanes == L;
      T q;
      if (residual) {
        const T r = QV::load_u8_halves(residual + lo, has_hi ? residual + hi : nullptr);
        q = requantize_lanes<QV>(k, v, &r);
      } else {
        q = requantize_lanes<QV>(k, v, nullptr);
      }
      QV::store_u8_halves(a.y + lo, has_hi ? a.y + hi : nullptr, q);
      return;
    }
    store_scattered(a, v, cp, c, lanes, pixel);
  }

  // The first `lanes` lanes of v to channels c, c + 1, ... of `pixel`, wherever the output's block puts them.
  __attribute__((noinline)) static void store_scattered(const Args& a, T v, int64_t cp, int64_t c, int64_t lanes,
                                                        int64_t pixel) {
    constexpr int L = kLanes;
    const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, cp / L);
    int64_t at[L];
    for (int64_t j = 0; j < lanes; ++j) at[j] = int8_blocked_offset(c + j, pixel, a.out_plane, a.out_block);
    uint8_t residual[L] = {}, out[L];
    if (a.requantize.residual)
      for (int64_t j = 0; j < lanes; ++j) residual[j] = a.requantize.residual[at[j]];
    QV::store_u8(out, requantize_vector<QV>(k, v, a.requantize.residual ? residual : nullptr));
    for (int64_t j = 0; j < lanes; ++j) a.y[at[j]] = out[j];
  }
};

}  // namespace
}  // namespace ninegrid
