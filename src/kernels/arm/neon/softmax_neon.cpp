// NEON instantiation of the strided-axis Softmax / LogSoftmax kernels (kernels/x86/softmax_impl.h).
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/softmax_impl.h"
#include "kernels/x86/softmax_x86.h"

namespace ninegrid {
namespace neon {

void softmax_f32_columns(bool log, const float* x, float* y, int64_t axis, int64_t count, int64_t stride) {
  softmax_columns_vectors<VecNeon>(log, x, y, axis, count, stride);
}

}  // namespace neon
}  // namespace ninegrid
