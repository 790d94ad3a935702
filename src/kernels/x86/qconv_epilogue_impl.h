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
  return k;
}

// One vector of sums (bias included) requantised to int32 lanes in [qmin, qmax]; `residual` points at the
// residual's P values already widened to int32 lanes, or is null. max and min take their second operand for
// a NaN first one, as the reference's fmax and fmin do: a NaN (from an infinite multiplier) becomes the
// lower bound in both.
template <class QV>
__attribute__((always_inline)) inline typename QV::Acc requantize_lanes(const RequantizeBlock<QV>& k,
                                                                        typename QV::Acc acc,
                                                                        const typename QV::Acc* residual) {
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
