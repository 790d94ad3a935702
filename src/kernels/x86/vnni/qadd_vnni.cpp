// vnni instantiation of the element-wise quantised addition (kernels/x86/qadd_impl.h).
#include "kernels/x86/simd_int8_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/qadd_impl.h"

namespace ninegrid {
namespace vnni {

void quantized_add(const X86QuantizedAdd& q, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n) {
  quantized_add_impl<QVecVnni>(q, a, b, y, n);
}

}  // namespace vnni
}  // namespace ninegrid
