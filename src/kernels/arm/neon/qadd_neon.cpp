// NEON instantiation of the element-wise quantised addition (kernels/x86/qadd_impl.h, kernels/arm/qadd_arm.h).
#include "kernels/arm/simd_int8_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/qadd_arm.h"
#include "kernels/x86/qadd_impl.h"

namespace ninegrid {
namespace neon {

void quantized_add(const X86QuantizedAdd& q, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n) {
  quantized_add_impl<QVecNeonInt8>(q, a, b, y, n);
}

}  // namespace neon
}  // namespace ninegrid
