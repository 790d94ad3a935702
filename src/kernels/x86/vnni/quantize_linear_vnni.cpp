// vnni instantiation of per-tensor QuantizeLinear / DequantizeLinear on uint8 (kernels/x86/quantize_linear_impl.h).
#include "kernels/x86/simd_int8_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/quantize_linear_impl.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace vnni {

void quantize_u8(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n) {
  quantize_u8_impl<QVecVnni>(x, scale, zero_point, q, n);
}

void dequantize_u8(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n) {
  dequantize_u8_impl<QVecVnni>(q, scale, zero_point, x, n);
}

}  // namespace vnni
}  // namespace ninegrid
