// avx2 instantiation of col2im (kernels/x86/col2im_impl.h).
#include "kernels/x86/simd_avx2.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/col2im_impl.h"

namespace ninegrid {
namespace {

struct Col2imVecAvx2 : VecAvx2 {
  // *first = a0 b0 a1 b1 a2 b2 a3 b3, *second = a4 b4 ... a7 b7.
  static void interleave(T a, T b, T* first, T* second) {
    const T lo = _mm256_unpacklo_ps(a, b);  // a0 b0 a1 b1 | a4 b4 a5 b5
    const T hi = _mm256_unpackhi_ps(a, b);  // a2 b2 a3 b3 | a6 b6 a7 b7
    *first = _mm256_permute2f128_ps(lo, hi, 0x20);
    *second = _mm256_permute2f128_ps(lo, hi, 0x31);
  }
};

}  // namespace

namespace avx2 {

void col2im(const Col2imArgs& a, int64_t channel_begin, int64_t channel_end, int64_t row_begin, int64_t row_end) {
  col2im_rows<Col2imVecAvx2>(a, channel_begin, channel_end, row_begin, row_end);
}

}  // namespace avx2
}  // namespace ninegrid
