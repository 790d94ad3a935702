// ng.QAdd's element-wise quantised addition (kernels/quantized.h's QuantizedAdd) on uint8 vectors, for an
// int32 vector type QV (simd_int8_avx512.h / simd_int8_avx2.h): P bytes of each operand widened to int32
// lanes, then QuantizedAdd's single-precision steps, so the result is the scalar definition's bit for bit.
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

template <class QV>
struct QAddConstants {
  typename QV::Acc a_zero_point, b_zero_point, out_zero_point;
  typename QV::F a_multiplier, b_multiplier, lo, hi;
};

template <class QV>
__attribute__((always_inline)) inline typename QV::Acc quantized_add_lanes(const QAddConstants<QV>& k,
                                                                           typename QV::Acc a, typename QV::Acc b) {
  const typename QV::F fa = QV::to_float(QV::sub(a, k.a_zero_point));
  const typename QV::F fb = QV::to_float(QV::sub(b, k.b_zero_point));
  typename QV::F v = QV::fmadd(fb, k.b_multiplier, QV::mul(fa, k.a_multiplier));
  v = QV::min(QV::max(v, k.lo), k.hi);  // NaN cannot occur: finite multipliers, |operands| <= 255
  return QV::add(QV::round_to_int(v), k.out_zero_point);
}

// y[i] = QuantizedAdd(a[i], b[i]) for i in [0, n); y may be a or b.
template <class QV>
void quantized_add_impl(const X86QuantizedAdd& q, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n) {
  constexpr int P = QV::kLanes;
  QAddConstants<QV> k;
  k.a_zero_point = QV::set1_i32(q.a_zero_point);
  k.b_zero_point = QV::set1_i32(q.b_zero_point);
  k.out_zero_point = QV::set1_i32(q.out_zero_point);
  k.a_multiplier = QV::set1_f(q.a_multiplier);
  k.b_multiplier = QV::set1_f(q.b_multiplier);
  k.lo = QV::set1_f(static_cast<float>(q.qmin - q.out_zero_point));
  k.hi = QV::set1_f(static_cast<float>(q.qmax - q.out_zero_point));
  int64_t i = 0;
  for (; i + 4 * P <= n; i += 4 * P) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      QV::store_u8(y + i + j * P, quantized_add_lanes<QV>(k, QV::load_u8(a + i + j * P), QV::load_u8(b + i + j * P)));
  }
  for (; i + P <= n; i += P) QV::store_u8(y + i, quantized_add_lanes<QV>(k, QV::load_u8(a + i), QV::load_u8(b + i)));
  if (i == n) return;
  // The last n - i < P values through a copy (their padding lanes computed and dropped).
  uint8_t ta[P] = {}, tb[P] = {}, ty[P];
  const int64_t rest = n - i;
  for (int64_t j = 0; j < rest; ++j) ta[j] = a[i + j], tb[j] = b[i + j];
  QV::store_u8(ty, quantized_add_lanes<QV>(k, QV::load_u8(ta), QV::load_u8(tb)));
  for (int64_t j = 0; j < rest; ++j) y[i + j] = ty[j];
}

}  // namespace
}  // namespace ninegrid
