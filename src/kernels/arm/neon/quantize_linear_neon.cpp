// NEON instantiations of per-tensor QuantizeLinear / DequantizeLinear on uint8 and of the uint8 requantisation
// by multiply-add (kernels/arm/quantize_linear_arm.h): the x86 templates on QVecNeonInt8, whose max and min
// keep x86's NaN rule and whose round_to_int (fcvtns) rounds halves to even as the references' nearbyint does
// in the default rounding mode (fcvtns ignores the mode; the engine never changes it).
#include "kernels/arm/simd_int8_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/quantize_linear_arm.h"
#include "kernels/x86/quantize_linear_impl.h"
#include "kernels/x86/requantize_u8_affine_impl.h"

namespace ninegrid {
namespace neon {

void quantize_u8(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n) {
  quantize_u8_impl<QVecNeonInt8>(x, scale, zero_point, q, n);
}

void dequantize_u8(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n) {
  dequantize_u8_impl<QVecNeonInt8>(q, scale, zero_point, x, n);
}

void requantize_u8_affine(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n) {
  requantize_u8_affine_impl<QVecNeonInt8>(m, x, y, n);
}

}  // namespace neon
}  // namespace ninegrid
