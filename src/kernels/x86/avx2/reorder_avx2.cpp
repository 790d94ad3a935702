// avx2 instantiation of the NCHW <-> NCHW[P]c reorders (kernels/x86/reorder_impl.h).
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/reorder_impl.h"

namespace ninegrid {
namespace avx2 {

void reorder_nchw_to_blocked(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end) {
  nchw_to_blocked<VecAvx2>(src, dst, channels, plane, block_begin, block_end);
}

void reorder_blocked_to_nchw(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                             int64_t block_end) {
  blocked_to_nchw<VecAvx2>(src, dst, plane, block_begin, block_end);
}

}  // namespace avx2
}  // namespace ninegrid
