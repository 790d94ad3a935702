// The requantisation epilogue of every x86 int8 kernel, for an int32 vector type QV (simd_int8_avx512.h /
// simd_int8_avx2.h): P int32 sums of one output-channel block become P uint8 outputs, computed in the same
// single-precision steps as kernels/quantized.h's requantize (so the kernels match the reference bit for bit),
// stored once in the output's layout. Include only from ISA files (after the int8 simd header); internal
// linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

// The requantisation constants of one output-channel block, in registers.
template <class QV>
struct RequantizeBlock {
  typename QV::F multiplier, lo, hi, residual_multiplier;
  typename QV::Acc out_zero_point, residual_zero_point;
  // A fused quantised addition (X86Requantize::residual_add): the requantised output's operand is
  // float(round(v) + add_conv_offset) (its value minus the addition's zero point for it) times
  // add_conv_multiplier, the residual's float(r - add_residual_zero_point) times add_residual_multiplier.
  bool residual_add = false, conv_is_first = true;
  typename QV::F add_conv_multiplier, add_residual_multiplier, add_lo, add_hi;
  typename QV::Acc add_conv_offset, add_residual_zero_point, add_out_zero_point;
};

template <class QV>
inline RequantizeBlock<QV> requantize_block(const X86Requantize& q, int64_t block) {
  RequantizeBlock<QV> k;
  k.multiplier = QV::load_f(q.multiplier + block * QV::kLanes);
  k.lo = QV::set1_f(static_cast<float>(q.qmin - q.out_zero_point));
  k.hi = QV::set1_f(static_cast<float>(q.qmax - q.out_zero_point));
  k.residual_multiplier = QV::set1_f(q.residual_multiplier);
  k.out_zero_point = QV::set1_i32(q.out_zero_point);
  k.residual_zero_point = QV::set1_i32(q.residual_zero_point);
  k.residual_add = q.residual_add;
  k.conv_is_first = q.conv_is_first;
  if (q.residual_add) {
    const int32_t conv_zero_point = q.conv_is_first ? q.add.a_zero_point : q.add.b_zero_point;
    const int32_t residual_zero_point = q.conv_is_first ? q.add.b_zero_point : q.add.a_zero_point;
    k.add_conv_multiplier = QV::set1_f(q.conv_is_first ? q.add.a_multiplier : q.add.b_multiplier);
    k.add_residual_multiplier = QV::set1_f(q.conv_is_first ? q.add.b_multiplier : q.add.a_multiplier);
    k.add_lo = QV::set1_f(static_cast<float>(q.add.qmin - q.add.out_zero_point));
    k.add_hi = QV::set1_f(static_cast<float>(q.add.qmax - q.add.out_zero_point));
    k.add_conv_offset = QV::set1_i32(q.out_zero_point - conv_zero_point);
    k.add_residual_zero_point = QV::set1_i32(residual_zero_point);
    k.add_out_zero_point = QV::set1_i32(q.add.out_zero_point);
  }
  return k;
}

// requantize_lanes with a fused quantised addition (kernels/quantized.h, QuantizedAdd): the sums requantised
// as without a residual (the unfused conv's output, less its zero point), then added to the residual `r`
// (int32 lanes) in QuantizedAdd's steps, fma(float(b - zb), mb, float(a - za) * ma), with the conv's output
// as a (CONV_FIRST) or b.
template <class QV, bool CONV_FIRST>
__attribute__((always_inline)) inline typename QV::Acc requantize_add_lanes(const RequantizeBlock<QV>& k,
                                                                            typename QV::Acc acc,
                                                                            typename QV::Acc r) {
  typename QV::F v = QV::min(QV::max(QV::mul(QV::to_float(acc), k.multiplier), k.lo), k.hi);
  const typename QV::F conv = QV::to_float(QV::add(QV::round_to_int(v), k.add_conv_offset));
  const typename QV::F residual = QV::to_float(QV::sub(r, k.add_residual_zero_point));
  if constexpr (CONV_FIRST)
    v = QV::fmadd(residual, k.add_residual_multiplier, QV::mul(conv, k.add_conv_multiplier));
  else
    v = QV::fmadd(conv, k.add_conv_multiplier, QV::mul(residual, k.add_residual_multiplier));
  v = QV::min(QV::max(v, k.add_lo), k.add_hi);
  return QV::add(QV::round_to_int(v), k.add_out_zero_point);
}

// One vector of sums (bias included) requantised to int32 lanes in [qmin, qmax]; `residual` points at the
// residual's P values already widened to int32 lanes, or is null (added before the rounding, or with
// k.residual_add by requantize_add_lanes). max and min take their second operand for
// a NaN first one, as the reference's fmax and fmin do: a NaN (from an infinite multiplier) becomes the
// lower bound in both.
template <class QV>
__attribute__((always_inline)) inline typename QV::Acc requantize_lanes(const RequantizeBlock<QV>& k,
                                                                        typename QV::Acc acc,
                                                                        const typename QV::Acc* residual) {
  if (residual && k.residual_add)
    return k.conv_is_first ? requantize_add_lanes<QV, true>(k, acc, *residual)
                           : requantize_add_lanes<QV, false>(k, acc, *residual);
  typename QV::F v = QV::mul(QV::to_float(acc), k.multiplier);
  if (residual)
    v = QV::fmadd(QV::to_float(QV::sub(*residual, k.residual_zero_point)), k.residual_multiplier, v);
  v = QV::min(QV::max(v, k.lo), k.hi);
  return QV::add(QV::round_to_int(v), k.out_zero_point);
}

// requantize_lanes with the residual's P bytes at `residual` in lane order, or null.
template <class QV>
__attribute__((always_inline)) inline typename QV::Acc requantize_vector(const RequantizeBlock<QV>& k,
                                                                         typename QV::Acc acc,
                                                                         const uint8_t* residual) {
  if (!residual) return requantize_lanes<QV>(k, acc, nullptr);
  const typename QV::Acc r = QV::load_u8(residual);
  return requantize_lanes<QV>(k, acc, &r);
}

// Requantises acc[0, N) and stores vector i's P bytes at y + i * step, reading the residual (if any) at
// residual + i * step: the outputs in the vectors' own block. The residual's kind is chosen once for the N
// vectors, outside the unrolled loops.
template <class QV, int N>
__attribute__((always_inline)) inline void requantize_store_run(const RequantizeBlock<QV>& k,
                                                                const typename QV::Acc* acc, uint8_t* y,
                                                                const uint8_t* residual, int64_t step) {
  if (!residual) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) QV::store_u8(y + i * step, requantize_lanes<QV>(k, acc[i], nullptr));
  } else if (!k.residual_add) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) QV::store_u8(y + i * step, requantize_vector<QV>(k, acc[i], residual + i * step));
  } else if (k.conv_is_first) {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i)
      QV::store_u8(y + i * step, requantize_add_lanes<QV, true>(k, acc[i], QV::load_u8(residual + i * step)));
  } else {
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i)
      QV::store_u8(y + i * step, requantize_add_lanes<QV, false>(k, acc[i], QV::load_u8(residual + i * step)));
  }
}

// Offset of channel c at `pixel` of one image in NCHW[block]c.
inline int64_t int8_blocked_offset(int64_t c, int64_t pixel, int64_t plane, int64_t block) {
  return ((c / block) * plane + pixel) * block + c % block;
}

// Requantises one vector of sums of output-channel block `block` (P channels) at output pixel `pixel` and
// stores it in y's layout (block out_block: P, a divisor of P, or 1); the residual, if any, is read from the
// same places. Lanes past `channels` are neither read nor stored.
template <class QV>
__attribute__((always_inline)) inline void requantize_store(const X86Requantize& q, const RequantizeBlock<QV>& k,
                                                            typename QV::Acc acc, uint8_t* y, int64_t channels,
                                                            int64_t plane, int64_t out_block, int64_t block,
                                                            int64_t pixel) {
  constexpr int P = QV::kLanes;
  if (out_block == P) {
    const int64_t at = (block * plane + pixel) * P;
    QV::store_u8(y + at, requantize_vector<QV>(k, acc, q.residual ? q.residual + at : nullptr));
    return;
  }
  // Smaller blocks and plain NCHW: gather the residual and scatter the result through P bytes.
  const int64_t c0 = block * P;
  const int lanes = static_cast<int>(channels - c0 < P ? channels - c0 : P);
  int64_t at[P];
  for (int j = 0; j < lanes; ++j) at[j] = int8_blocked_offset(c0 + j, pixel, plane, out_block);
  uint8_t residual[P] = {}, out[P];
  if (q.residual)
    for (int j = 0; j < lanes; ++j) residual[j] = q.residual[at[j]];
  QV::store_u8(out, requantize_vector<QV>(k, acc, q.residual ? residual : nullptr));
  for (int j = 0; j < lanes; ++j) y[at[j]] = out[j];
}

// ---- Packed stores: up to 4 vectors of one block at consecutive output pixels whose bytes lie together
// (the output in the vectors' own block), in 5 vector operations per vector instead of requantize_store's 7.
// When |v| < 2^31, rounding v to int32 is exact, and clamping after rounding equals clamping before (the
// bounds are integers); the clamp and zero point then go to the packed values with saturating arithmetic:
// int32 -> int16 (saturating; the bounds lie within +-255, so a saturated value clamps the same), + zero
// point (saturating), -> uint8 (saturating to [0, 255]), max qmin, min qmax: 2 packs, 2 adds, 1 permute and
// 2 clamps for 4 vectors instead of 4 x 4 (float max, min, integer add, narrowing). The bound holds when every
// real channel's multiplier is finite with |m| <= 1/4 (|acc| <= 2^31 gives |v| <= 2^29) and the residual's
// |m_r| <= 2^20 (|r - zp_r| <= 255 adds under 2^29): true of real models (m = s_x s_w / s_y is tiny); other
// blocks use requantize_store. ----

template <class QV>
struct RequantizePacked {
  bool usable = false;  // the block's multipliers meet the bound above
  typename QV::Acc zero_point, qmin, qmax;  // int16 lanes; uint8 lanes
};

// The packed store's constants for a layer whose multipliers all meet the bound (X86Requantize::packed_store).
template <class QV>
inline RequantizePacked<QV> requantize_packed_layer(const X86Requantize& q) {
  RequantizePacked<QV> k;
  k.usable = true;
  k.zero_point = QV::set1_i16(static_cast<int16_t>(q.out_zero_point));
  k.qmin = QV::set1_u8(static_cast<uint8_t>(q.qmin));
  k.qmax = QV::set1_u8(static_cast<uint8_t>(q.qmax));
  return k;
}

// The same for one block, usable when its own channels' multipliers (and the residual's) meet the bound.
template <class QV>
inline RequantizePacked<QV> requantize_packed_block(const X86Requantize& q, int64_t block, int64_t channels) {
  constexpr int P = QV::kLanes;
  RequantizePacked<QV> k = requantize_packed_layer<QV>(q);
  // (A fused quantised addition takes requantize_store's path.)
  bool usable = !q.residual || packed_store_residual_fits(q.residual_add, q.residual_multiplier);
  for (int64_t j = 0; j < P && block * P + j < channels; ++j)
    usable = usable && packed_store_multiplier_fits(q.multiplier[block * P + j]);
  k.usable = usable;
  return k;
}

// Requantises acc[0, n) (n in [1, 4]; k.usable) and stores their n * P bytes at y; `residual` points at the
// residual's n * P bytes in the same order, or is null.
template <class QV>
__attribute__((always_inline)) inline void requantize_store_packed(const RequantizeBlock<QV>& k,
                                                                   const RequantizePacked<QV>& kp,
                                                                   const typename QV::Acc* acc, int n, uint8_t* y,
                                                                   const uint8_t* residual) {
  constexpr int P = QV::kLanes;
  using Acc = typename QV::Acc;
  Acc t[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    if (i >= n) {
      t[i] = t[0];  // padding: packed, never stored
      continue;
    }
    typename QV::F v = QV::mul(QV::to_float(acc[i]), k.multiplier);
    if (residual)
      v = QV::fmadd(QV::to_float(QV::sub(QV::load_u8(residual + i * P), k.residual_zero_point)), k.residual_multiplier,
                    v);
    t[i] = QV::round_to_int(v);
  }
  const Acc low = QV::adds_i16(QV::pack_i32_to_i16(t[0], t[1]), kp.zero_point);
  const Acc high = QV::adds_i16(QV::pack_i32_to_i16(t[2], t[3]), kp.zero_point);
  const Acc bytes = QV::min_u8(QV::max_u8(QV::pack_i16_to_u8(low, high), kp.qmin), kp.qmax);
  QV::store_vectors_u8(y, QV::bytes_in_vector_order(bytes), n);
}

// Four vectors of one block of 8 channels at consecutive pixels, requantised together (kp.usable, no residual)
// and stored into plain NCHW from y, channel 0's first pixel, `channels` of them (QV::store_quad_channel_major:
// the AVX2 vector types only).
template <class QV>
__attribute__((always_inline)) inline void requantize_store_quad_plain(const RequantizeBlock<QV>& k,
                                                                       const RequantizePacked<QV>& kp,
                                                                       const typename QV::Acc* four, uint8_t* y,
                                                                       int64_t plane, int64_t channels) {
  alignas(32) uint8_t bytes[4 * QV::kLanes];
  requantize_store_packed<QV>(k, kp, four, 4, bytes, nullptr);
  QV::store_quad_channel_major(y, plane, bytes, channels);
}

template <class QV>
void requantize_sums_impl(const int32_t* acc, int64_t channels, int64_t plane, const X86Requantize& q,
                          int64_t out_block, int64_t block_begin, int64_t block_end, uint8_t* y) {
  constexpr int P = QV::kLanes;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const RequantizeBlock<QV> k = requantize_block<QV>(q, b);
    for (int64_t p = 0; p < plane; ++p)
      requantize_store<QV>(q, k, QV::load_acc(acc + (b * plane + p) * P), y, channels, plane, out_block, b, p);
  }
}

}  // namespace
}  // namespace ninegrid
