// QuantizeLinear and DequantizeLinear with one scale and zero point for the whole tensor, between float and
// uint8, for an int32 vector type QV (simd_int8_avx512.h / simd_int8_avx2.h; on AArch64
// kernels/arm/simd_int8_neon.h), bit for bit
// kernels/ref/quantize_linear_ref.cpp's per-tensor uint8 case:
//   quantize:   q = clamp(nearbyint(x / scale) + zero_point, 0, 255)   (NaN: 0)
//   dequantize: x = float(q - zero_point) * scale
// The quantisation clamps before rounding, to [-zero_point, 255 - zero_point]: rounding is monotonic and the
// bounds are integers, so the result is the reference's, and the conversion to int32 stays in range (an
// infinite or huge quotient included); max takes its second operand, the bound, for a NaN quotient, as the
// reference's fmax does. Include only from ISA files (after the int8 simd header); internal linkage
// throughout.
#pragma once

#include <cstdint>

namespace ninegrid {
namespace {

template <class QV>
void quantize_u8_impl(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n) {
  constexpr int P = QV::kLanes;
  const typename QV::F s = QV::set1_f(scale);
  const typename QV::F lo = QV::set1_f(static_cast<float>(-zero_point));
  const typename QV::F hi = QV::set1_f(static_cast<float>(255 - zero_point));
  const typename QV::Acc zp = QV::set1_i32(zero_point);
  auto one = [&](const float* from, uint8_t* to) {
    const typename QV::F v = QV::min(QV::max(QV::div(QV::load_f(from), s), lo), hi);
    QV::store_u8(to, QV::add(QV::round_to_int(v), zp));
  };
  int64_t i = 0;
  for (; i + P <= n; i += P) one(x + i, q + i);
  if (i == n) return;
  float tx[P] = {};
  uint8_t tq[P];
  for (int64_t j = i; j < n; ++j) tx[j - i] = x[j];
  one(tx, tq);
  for (int64_t j = i; j < n; ++j) q[j] = tq[j - i];
}

template <class QV>
void dequantize_u8_impl(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n) {
  constexpr int P = QV::kLanes;
  const typename QV::F s = QV::set1_f(scale);
  const typename QV::Acc zp = QV::set1_i32(zero_point);
  auto one = [&](const uint8_t* from, float* to) {
    QV::store_f(to, QV::mul(QV::to_float(QV::sub(QV::load_u8(from), zp)), s));
  };
  int64_t i = 0;
  for (; i + P <= n; i += P) one(q + i, x + i);
  if (i == n) return;
  uint8_t tq[P] = {};
  float tx[P];
  for (int64_t j = i; j < n; ++j) tq[j - i] = q[j];
  one(tq, tx);
  for (int64_t j = i; j < n; ++j) x[j] = tx[j - i];
}

}  // namespace
}  // namespace ninegrid
