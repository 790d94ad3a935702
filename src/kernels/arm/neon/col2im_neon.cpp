// NEON instantiation of col2im (kernels/x86/col2im_impl.h), ConvTranspose's scatter-add.
#include "kernels/arm/simd_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/x86/col2im_impl.h"

namespace ninegrid {
namespace {

struct Col2imVecNeon : VecNeon {
  // *first = a0 b0 a1 b1, *second = a2 b2 a3 b3.
  static void interleave(T a, T b, T* first, T* second) {
    *first = vzip1q_f32(a, b);
    *second = vzip2q_f32(a, b);
  }
};

}  // namespace

namespace neon {

void col2im(const Col2imArgs& a, int64_t channel_begin, int64_t channel_end, int64_t row_begin, int64_t row_end) {
  col2im_rows<Col2imVecNeon>(a, channel_begin, channel_end, row_begin, row_end);
}

}  // namespace neon
}  // namespace ninegrid
