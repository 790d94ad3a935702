// avx512 instantiation of col2im (kernels/x86/col2im_impl.h).
#include "kernels/x86/simd_avx512.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/col2im_impl.h"

namespace ninegrid {
namespace {

struct Col2imVecAvx512 : VecAvx512 {
  // *first = a0 b0 a1 b1 ... a7 b7, *second = a8 b8 ... a15 b15 (index 16 + i picks b_i).
  static void interleave(T a, T b, T* first, T* second) {
    const __m512i lower = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i upper = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    *first = _mm512_permutex2var_ps(a, lower, b);
    *second = _mm512_permutex2var_ps(a, upper, b);
  }
};

}  // namespace

namespace avx512 {

void col2im(const Col2imArgs& a, int64_t channel_begin, int64_t channel_end, int64_t row_begin, int64_t row_end) {
  col2im_rows<Col2imVecAvx512>(a, channel_begin, channel_end, row_begin, row_end);
}

}  // namespace avx512
}  // namespace ninegrid
