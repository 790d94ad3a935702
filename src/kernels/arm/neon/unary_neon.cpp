// NEON instantiation of the float element-wise kernels (kernels/x86/unary_impl.h).
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/unary_impl.h"
#include "kernels/x86/unary_x86.h"

namespace ninegrid {
namespace neon {

bool unary_f32(ref::UnaryF32 op, const ref::UnaryParams& p, const float* x, float* y, int64_t n) {
  return unary_f32_vectors<VecNeon>(op, p, x, y, n);
}

}  // namespace neon
}  // namespace ninegrid
