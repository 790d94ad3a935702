// avx2 instantiation of the first-layer kernel (kernels/x86/conv_first_layer_impl.h): 8 output pixels
// per vector, tiles of 1 vector x 8 channels (16 registers leave no room for more accumulators).
#include "kernels/x86/simd_avx2.h"

namespace ninegrid {
namespace {

struct FirstLayerAvx2 : VecAvx2 {
  static T even(T a, T b) {
    // (a0 a2 b0 b2 | a4 a6 b4 b6), then the 64-bit pairs reordered to (a0 a2 a4 a6 b0 b2 b4 b6).
    const T pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static T load_range(const float* p, int begin, int end) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(end), lane),
                                          _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(begin - 1)));
    return _mm256_maskload_ps(p, mask);
  }
  static T octet(const float* p) { return _mm256_loadu_ps(p); }
  // 8 channel rows of 8 pixels -> 8 pixel rows of 8 channels.
  static void transpose_octets(T r[8]) { transpose(r); }
};

}  // namespace
}  // namespace ninegrid

#include "kernels/x86/conv_first_layer_impl.h"

namespace ninegrid {
namespace avx2 {

void conv2d_first_layer(const X86ConvArgs& a, const X86ConvRange& r) { first_layer_conv<FirstLayerAvx2, 1>(a, r); }
int64_t conv2d_first_layer_scratch_floats(const X86ConvArgs& a) {
  return first_layer_scratch_floats<FirstLayerAvx2, 1>(a);
}

}  // namespace avx2
}  // namespace ninegrid
