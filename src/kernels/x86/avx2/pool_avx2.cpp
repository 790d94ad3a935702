// avx2 instantiation of the blocked MaxPool / AveragePool kernels (kernels/x86/pool_impl.h).
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/pool_impl.h"
#include "kernels/x86/pool_x86.h"

namespace ninegrid {
namespace avx2 {

void max_pool_blocked(const PoolParams& p, const PoolBlockedWindows& w, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  max_pool_rows<VecAvx2>(p, w, x, y, row_begin, row_end);
}

void average_pool_blocked(const PoolParams& p, bool count_include_pad, const PoolBlockedWindows& w, const float* x,
                          float* y, int64_t row_begin, int64_t row_end) {
  average_pool_rows<VecAvx2>(p, count_include_pad, w, x, y, row_begin, row_end);
}

}  // namespace avx2
}  // namespace ninegrid
