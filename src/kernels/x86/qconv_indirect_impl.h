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
// Packed rows (X86QIndirectArgs::packed_rows): a first layer reads its plain image without interleaving
// channels. Each multiply-add takes kDepth consecutive bytes of one row of one channel (kernel columns
// kw .. kw + kDepth - 1 of one tap row), so the kernel's "channels" are (channel, column within a group of 4)
// and its taps (kernel row, group of 4 columns): a 3-channel 3x3 conv is 3 taps of 12 such channels (one
// column of 4 unused), the same 36 bytes a pixel as 9 taps of 4 channels (one unused) in NCHW4c, but one
// indirection entry serves 3 multiply-adds instead of one, and the input is copied row by row (padded with
// the zero point) instead of interleaved. conv_indirect_impl.h runs it as input block 4 with pixel stride 1.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_indirect_impl.h"
#include "kernels/x86/qconv_epilogue_impl.h"
#include "kernels/x86/qconv_indirect_x86.h"

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
  static constexpr bool kInteriorTiles = true;
  static constexpr bool kPackedRows = true;
  static bool interior(const Args& a, int64_t tile) { return a.tile_interior[tile] != 0; }
  __attribute__((always_inline)) static W load_weights(const int8_t* p) { return QV::load_weights(p); }
  __attribute__((always_inline)) static X broadcast(const uint8_t* p) { return QV::broadcast_inputs(p); }
  __attribute__((always_inline)) static T madd(X x, W w, T acc) { return QV::madd(x, w, acc); }
  __attribute__((always_inline)) static T start(const Args& a, int64_t cp) { return QV::load_acc(a.bias + cp); }

  // The tile's sums of padded channels [cp, cp + NB L) (real channels from c, one conv group's, which ends at
  // (c / out_channels_per_group + 1) * out_channels_per_group) at pixels [pixel0, pixel0 + rows),
  // requantised and stored. A whole vector within one output block (four pixels at a time packed when the
  // block is the vector's and the multipliers allow: qconv_epilogue_impl.h), or in two half blocks, is
  // inlined, so the sums go from registers through the requantisation to memory; anything else (a group's
  // last, narrower vector, plain NCHW, other blocks) is a call on the vector's value, so that the
  // accumulators' address never escapes (as in QuantConvArith::store_tile, qconv_arith_impl.h). Everything
  // per vector is worked out once per tile: after the first byte store the compiler must assume `a` changed.
  template <int MR, int NB>
  __attribute__((always_inline)) static void store_tile(const Args& a, T (&acc)[MR][NB], int64_t cp, int64_t c,
                                                        int64_t pixel0, int64_t rows) {
    constexpr int L = kLanes, H = L / 2;
    const int64_t ocpg = a.out_channels_per_group, B = a.out_block, plane = a.out_plane;
    const int64_t group_end = (c / ocpg + 1) * ocpg;
    uint8_t* const y = a.y;
    const uint8_t* const residual = a.requantize.residual;
    const X86Requantize& q = a.requantize;
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      const int64_t cj = c + j * L, lanes = imin(L, group_end - cj);
      const RequantizeBlock<QV> k = requantize_block<QV>(q, cp / L + j);
      if (lanes == L && B % L == 0 && cj % L == 0) {
        const int64_t at = ((cj / B) * plane + pixel0) * B + cj % B;
        uint8_t* const yj = y + at;
        const uint8_t* const rj = residual ? residual + at : nullptr;
        if (B == L) {
          const RequantizePacked<QV> kp = requantize_packed_block<QV>(q, cp / L + j, (cp / L + j + 1) * L);
          if (kp.usable) {
#pragma GCC unroll 4
            for (int r = 0; r < MR; r += 4) {
              if (r >= rows) break;
              T quad[4];
#pragma GCC unroll 4
              for (int i = 0; i < 4; ++i) quad[i] = acc[r + i < MR ? r + i : r][j];  // (past MR: never stored)
              const int n = static_cast<int>(imin(4, rows - r));
              requantize_store_packed<QV>(k, kp, quad, n, yj + r * L, rj ? rj + r * L : nullptr);
            }
            continue;
          }
        }
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          if (r >= rows) break;
          QV::store_u8(yj + r * B, requantize_vector<QV>(k, acc[r][j], rj ? rj + r * B : nullptr));
        }
        continue;
      }
      if (B == 1 && !residual && L == 8) {
        // Plain NCHW (a detection head's output, read by a DequantizeLinear and a Reshape): four pixels at a
        // time requantised together, then stored channel by channel (requantize_store_quad_plain); the tile's
        // last pixels of the plane one at a time.
        const RequantizePacked<QV> kp = requantize_packed_block<QV>(q, cp / L + j, cp + j * L + lanes);
        uint8_t* const yj = y + cj * plane + pixel0;
        int r0 = 0;
        if (kp.usable) {
#pragma GCC unroll 4
          for (int r = 0; r + 4 <= MR; r += 4) {
            if (r + 4 > rows) break;
            const T quad[4] = {acc[r][j], acc[r + 1][j], acc[r + 2][j], acc[r + 3][j]};
            requantize_store_quad_plain<QV>(k, kp, quad, yj + r, plane, lanes);
            r0 = r + 4;
          }
        }
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          if (r >= rows) break;
          if (r >= r0) store_scattered(a, acc[r][j], cp + j * L, cj, lanes, pixel0 + r);
        }
        continue;
      }
      if ((lanes == L || lanes == H) && B == H && cj % H == 0) {
        const int64_t lo = ((cj / H) * plane + pixel0) * H, hi = lo + plane * H;
        const bool has_hi = lanes == L;
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          if (r >= rows) break;
          T v;
          if (residual) {
            const T rv = QV::load_u8_halves(residual + lo + r * H, has_hi ? residual + hi + r * H : nullptr);
            v = requantize_lanes<QV>(k, acc[r][j], &rv);
          } else {
            v = requantize_lanes<QV>(k, acc[r][j], nullptr);
          }
          QV::store_u8_halves(y + lo + r * H, has_hi ? y + hi + r * H : nullptr, v);
        }
        continue;
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        if (r >= rows) break;
        store_scattered(a, acc[r][j], cp + j * L, cj, lanes, pixel0 + r);
      }
    }
  }

  // The first `lanes` lanes of v to channels c, c + 1, ... of `pixel`, wherever the output's block puts them.
  __attribute__((noinline)) static void store_scattered(const Args& a, T v, int64_t cp, int64_t c, int64_t lanes,
                                                        int64_t pixel) {
    constexpr int L = kLanes;
    const RequantizeBlock<QV> k = requantize_block<QV>(a.requantize, cp / L);
    int64_t at[L];
    if (a.out_block == 1) {
      for (int64_t j = 0; j < lanes; ++j) at[j] = (c + j) * a.out_plane + pixel;
    } else {
      for (int64_t j = 0; j < lanes; ++j) at[j] = int8_blocked_offset(c + j, pixel, a.out_plane, a.out_block);
    }
    uint8_t residual[L] = {}, out[L];
    if (a.requantize.residual)
      for (int64_t j = 0; j < lanes; ++j) residual[j] = a.requantize.residual[at[j]];
    QV::store_u8(out, requantize_vector<QV>(k, v, a.requantize.residual ? residual : nullptr));
    for (int64_t j = 0; j < lanes; ++j) a.y[at[j]] = out[j];
  }
};

}  // namespace
}  // namespace ninegrid
