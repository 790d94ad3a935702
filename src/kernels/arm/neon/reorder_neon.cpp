// NEON instantiation of the NCHW <-> NCHW4c reorders (kernels/x86/reorder_impl.h): 4 x 4 register transposes.
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/reorder_impl.h"

namespace ninegrid {
namespace neon {

void reorder_nchw_to_blocked(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end) {
  nchw_to_blocked<VecNeon>(src, dst, channels, plane, block_begin, block_end);
}

void reorder_blocked_to_nchw(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end) {
  blocked_to_nchw<VecNeon>(src, dst, plane, block_begin, block_end);
}

}  // namespace neon
}  // namespace ninegrid
