// avx2 instantiation of the int8 first-layer convolution (kernels/x86/qconv_first_layer_impl.h): 8 output
// pixels per ymm, vpmaddwd over 2 kernel columns (bytes zero-extended to words, weights int16); tiles of 2
// vectors x 8 channels: each weight broadcast serves 16 pixels. That is all 16 registers in accumulators, so
// the compiler keeps some in memory, and it still ran faster than 1 vector x 8 channels (bench/REPORT.md).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernel that uses it)

namespace ninegrid {
namespace {

struct QFirstLayerAvx2 : QVecAvx2 {
  // Lane k: the 2 bytes at s + S k as int16. Stride 2: vpmovzxbw of 16 bytes makes exactly those pairs;
  // stride 1: a byte shuffle first repeats each byte (0 1 1 2 2 3 ...).
  template <int S>
  static constexpr int kWindowBytes = 16;
  template <int S>
  static X window(const uint8_t* s) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    if constexpr (S == 2) return _mm256_cvtepu8_epi16(bytes);
    return _mm256_cvtepu8_epi16(_mm_shuffle_epi8(bytes, _mm_setr_epi8(0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8)));
  }
  static X weight(const int32_t* w) { return _mm256_set1_epi32(*w); }
  static Acc madd(X x, X w, Acc acc) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }

  static Acc transpose_4x4_bytes(Acc v) {
    const __m256i order = _mm256_setr_epi32(0x0c080400, 0x0d090501, 0x0e0a0602, 0x0f0b0703, 0x0c080400, 0x0d090501,
                                            0x0e0a0602, 0x0f0b0703);
    return _mm256_shuffle_epi8(v, order);
  }
  static Acc unpacklo_i32(Acc a, Acc b) { return _mm256_unpacklo_epi32(a, b); }
  static Acc unpackhi_i32(Acc a, Acc b) { return _mm256_unpackhi_epi32(a, b); }
  static Acc unpacklo_i64(Acc a, Acc b) { return _mm256_unpacklo_epi64(a, b); }
  static Acc unpackhi_i64(Acc a, Acc b) { return _mm256_unpackhi_epi64(a, b); }
  // lo's lane j: pixels 4j, 4j + 1; hi's: 4j + 2, 4j + 3 (8 bytes each) -> 8 pixels in order (64 bytes).
  static void store_octets(uint8_t* y, Acc lo, Acc hi) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
};

}  // namespace
}  // namespace ninegrid

#include "kernels/x86/qconv_first_layer_impl.h"

namespace ninegrid {
namespace avx2 {

static_assert(QFirstLayerAvx2::kLanes == kQFirstLayerLanes && QFirstLayerAvx2::kDepth == kQFirstLayerDepth,
              "qconv_first_layer_x86.h promises 8 lanes of 2 bytes");

void qconv2d_first_layer(const X86QFirstLayerArgs& a, int64_t row_begin, int64_t row_end) {
  qfirst_conv<QFirstLayerAvx2, 1, 2>(a, row_begin, row_end);
}

}  // namespace avx2
}  // namespace ninegrid
