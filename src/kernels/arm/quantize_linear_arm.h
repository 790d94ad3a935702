// The AArch64 uint8 quantisation kernels: the x86 templates (kernels/x86/quantize_linear_impl.h,
// kernels/x86/requantize_u8_affine_impl.h) instantiated for 4-lane NEON vectors (simd_int8_neon.h), bit for
// bit the same references: quantize_linear_ref / dequantize_linear_ref's per-tensor uint8 case, and
// affine_u8_ref (kernels/ref/qlookup_ref.h). Every AArch64 core has NEON.
#pragma once

#include <cstdint>

#include "kernels/ref/qlookup_ref.h"

namespace ninegrid {
namespace neon {

// QuantizeLinear / DequantizeLinear between float and uint8 with one scale and zero point.
void quantize_u8(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n);
void dequantize_u8(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n);
// y[i] = affine_u8_ref(m, x[i]) for i < n; x and y may be the same array.
void requantize_u8_affine(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n);

}  // namespace neon
}  // namespace ninegrid
