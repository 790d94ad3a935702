// uint8 -> uint8 requantisation as one float multiply-add per byte (kernels/ref/qlookup_ref.h, AffineU8), for
// the ops that requantise by table (ng.QConcat, ng.QRequantize) where fit_affine_u8 found the table exact:
// bit for bit affine_u8_ref, so bit for bit the table. Call only when the CPU has AVX2 and FMA (AVX-512 CPUs
// too).
#pragma once

#include <cstdint>

#include "kernels/ref/qlookup_ref.h"

namespace ninegrid {
namespace avx2 {

// y[i] = affine_u8_ref(m, x[i]) for i < n; x and y may be the same array.
void requantize_u8_affine(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n);

}  // namespace avx2
}  // namespace ninegrid
