// uint8 -> uint8 requantisation by one float multiply-add per byte (kernels/ref/qlookup_ref.h, AffineU8;
// bit for bit affine_u8_ref) for an int32 vector type QV with the int8 epilogue's operations (simd_int8_avx2.h,
// simd_int8_neon.h): 4 vectors of P bytes per step, widened to float, one fmadd each, rounded halves to even
// (round_to_int), packed back with the epilogue's saturating packs (as requantize_store_packed does) and
// clamped. Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/ref/qlookup_ref.h"

namespace ninegrid {
namespace {

template <class QV>
void requantize_u8_affine_impl(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n) {
  constexpr int P = QV::kLanes;
  using Acc = typename QV::Acc;
  const typename QV::F a = QV::set1_f(m.a), b = QV::set1_f(m.b);
  const Acc qmin = QV::set1_u8(m.qmin), qmax = QV::set1_u8(m.qmax);
  int64_t i = 0;
  for (; i + 4 * P <= n; i += 4 * P) {
    Acc t[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) t[k] = QV::round_to_int(QV::fmadd(QV::to_float(QV::load_u8(x + i + k * P)), a, b));
    const Acc bytes = QV::pack_i16_to_u8(QV::pack_i32_to_i16(t[0], t[1]), QV::pack_i32_to_i16(t[2], t[3]));
    QV::store_vectors_u8(y + i, QV::bytes_in_vector_order(QV::min_u8(QV::max_u8(bytes, qmin), qmax)), 4);
  }
  for (; i < n; ++i) y[i] = affine_u8_ref(m, x[i]);
}

}  // namespace
}  // namespace ninegrid
