// avx2 instantiation of the int8 Winograd convolution F(2x2, 3x3) (kernels/x86/qconv_winograd_impl.h): the
// transforms on 16 int16 lanes (16 channels per ymm), the products on vpmaddwd (two input channels into each
// of 8 int32 lanes).
#include "kernels/x86/simd_int8_avx2.h"
// (the vector type must be declared before the kernel that uses it)

namespace ninegrid {
namespace {

struct QWinogradAvx2 : QVecAvx2 {
  using I16 = __m256i;
  static I16 i16_zero() { return _mm256_setzero_si256(); }
  static I16 i16_add(I16 a, I16 b) { return _mm256_add_epi16(a, b); }
  static I16 i16_sub(I16 a, I16 b) { return _mm256_sub_epi16(a, b); }
  static I16 i16_set1(int16_t v) { return _mm256_set1_epi16(v); }
  static void i16_store(int16_t* p, I16 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static I16 widen_u8(const uint8_t* p) {
    return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I16 widen_u8_halves(const uint8_t* lo, const uint8_t* hi) {
    const __m128i bytes = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(lo)),
                                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(hi)));
    return _mm256_cvtepu8_epi16(bytes);
  }
  static X broadcast_i16_pair(const int16_t* p) {
    int32_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return _mm256_set1_epi32(pair);
  }
  static Acc shift_right_2(Acc v) { return _mm256_srai_epi32(v, 2); }
};

}  // namespace
}  // namespace ninegrid

#include "kernels/x86/qconv_winograd_impl.h"

namespace ninegrid {
namespace avx2 {

static_assert(2 * QWinogradAvx2::kLanes == kQWinogradChannelGroup && 2 * QWinogradAvx2::kLanes == kQWinogradOcBlock,
              "qconv_winograd_x86.h's groups of 16 channels are one int16 ymm and two int32 ones");

void qconv2d_winograd_f2x3(const X86QWinogradArgs& a, int64_t item_begin, int64_t item_end, void* scratch) {
  qconv2d_winograd_f2x3_impl<QWinogradAvx2>(a, item_begin, item_end, scratch);
}

}  // namespace avx2
}  // namespace ninegrid
