// avx512 instantiation of the first-layer kernel (kernels/x86/conv_first_layer_impl.h): 16 output pixels
// per vector, tiles of 3 vectors x 8 channels (24 accumulators).
#include "kernels/x86/simd_avx512.h"

namespace ninegrid {
namespace {

struct FirstLayerAvx512 : VecAvx512 {
  static T even(T a, T b) {
    const __m512i lanes = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, lanes, b);
  }
  static T load_range(const float* p, int begin, int end) {
    const unsigned below_end = (1u << end) - 1u, below_begin = (1u << begin) - 1u;
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>(below_end & ~below_begin), p);
  }
  static T octet(const float* p) { return _mm512_broadcast_f32x8(_mm256_loadu_ps(p)); }

  // r[0..8): channel c's 16 pixels -> r[k]: pixels 2k and 2k + 1, 8 channels each.
  static void transpose_octets(T r[8]) {
    T t[8], u[8];
    for (int k = 0; k < 4; ++k) {
      t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // In 128-bit lane L: u[m] = channels 0-3 of pixel 4L + m, u[4 + m] = channels 4-7 of it.
    for (int q = 0; q < 2; ++q) {
      const __m512d a0 = _mm512_castps_pd(t[4 * q]), a1 = _mm512_castps_pd(t[4 * q + 1]);
      const __m512d a2 = _mm512_castps_pd(t[4 * q + 2]), a3 = _mm512_castps_pd(t[4 * q + 3]);
      u[4 * q + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
      u[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
      u[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
      u[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    // lo[m] = pixels m and 4 + m, hi[m] = pixels 8 + m and 12 + m (8 channels each).
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    T lo[4], hi[4];
    for (int m = 0; m < 4; ++m) {
      lo[m] = _mm512_permutex2var_ps(u[m], first, u[4 + m]);
      hi[m] = _mm512_permutex2var_ps(u[m], second, u[4 + m]);
    }
    r[0] = _mm512_shuffle_f32x4(lo[0], lo[1], _MM_SHUFFLE(1, 0, 1, 0));
    r[1] = _mm512_shuffle_f32x4(lo[2], lo[3], _MM_SHUFFLE(1, 0, 1, 0));
    r[2] = _mm512_shuffle_f32x4(lo[0], lo[1], _MM_SHUFFLE(3, 2, 3, 2));
    r[3] = _mm512_shuffle_f32x4(lo[2], lo[3], _MM_SHUFFLE(3, 2, 3, 2));
    r[4] = _mm512_shuffle_f32x4(hi[0], hi[1], _MM_SHUFFLE(1, 0, 1, 0));
    r[5] = _mm512_shuffle_f32x4(hi[2], hi[3], _MM_SHUFFLE(1, 0, 1, 0));
    r[6] = _mm512_shuffle_f32x4(hi[0], hi[1], _MM_SHUFFLE(3, 2, 3, 2));
    r[7] = _mm512_shuffle_f32x4(hi[2], hi[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
};

}  // namespace
}  // namespace ninegrid

#include "kernels/x86/conv_first_layer_impl.h"

namespace ninegrid {
namespace avx512 {

void conv2d_first_layer(const X86ConvArgs& a, const X86ConvRange& r) { first_layer_conv<FirstLayerAvx512, 3>(a, r); }
int64_t conv2d_first_layer_scratch_floats(const X86ConvArgs& a) {
  return first_layer_scratch_floats<FirstLayerAvx512, 3>(a);
}

}  // namespace avx512
}  // namespace ninegrid
