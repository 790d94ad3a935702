// avx2 instantiation of the uint8 requantisation by multiply-add (kernels/x86/requantize_u8_affine_impl.h).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/requantize_u8_affine_impl.h"
#include "kernels/x86/requantize_u8_affine_x86.h"

namespace ninegrid {
namespace avx2 {

void requantize_u8_affine(const AffineU8& m, const uint8_t* x, uint8_t* y, int64_t n) {
  requantize_u8_affine_impl<QVecAvx2>(m, x, y, n);
}

}  // namespace avx2
}  // namespace ninegrid
