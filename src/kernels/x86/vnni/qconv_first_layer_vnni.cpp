// vnni instantiation of the int8 first-layer convolution (kernels/x86/qconv_first_layer_impl.h): 16 output
// pixels per zmm, vpdpbusd over 4 kernel columns; tiles of 3 vectors x 8 channels (NCHW8c and plain
// outputs: 24 accumulators) or 1 vector x 16 channels (NCHW16c: 16).
#include "kernels/x86/simd_int8_avx512.h"
// (the vector type must be declared before the kernel that uses it)

namespace ninegrid {
namespace {

struct QFirstLayerVnni : QVecVnni {
  // Lane k: the 4 bytes at s + S k. Stride 2: 16-bit words k and k + 1 of the 34 bytes from s (one vpermw;
  // the masked load reads no further). Stride 1: each 128-bit lane gets dwords j .. j + 3 of s (vpermd), and
  // a byte shuffle picks bytes i .. i + 3 of them for its 4 pixels.
  template <int S>
  static constexpr int kWindowBytes = S == 2 ? 34 : 32;
  template <int S>
  static X window(const uint8_t* s) {
    if constexpr (S == 2) {
      const __m512i words = _mm512_maskz_loadu_epi16(0x1FFFF, s);
      const __m512i pairs = _mm512_set_epi16(16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6,
                                             5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0);
      return _mm512_permutexvar_epi16(pairs, words);
    } else {
      const __m512i dwords = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
      const __m512i lanes = _mm512_permutexvar_epi32(
          _mm512_setr_epi32(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6), dwords);
      return _mm512_shuffle_epi8(lanes, _mm512_set4_epi32(0x06050403, 0x05040302, 0x04030201, 0x03020100));
    }
  }
  static X weight(const int32_t* w) { return _mm512_set1_epi32(*w); }
  static Acc madd(X x, X w, Acc acc) { return _mm512_dpbusd_epi32(acc, x, w); }

  static Acc transpose_4x4_bytes(Acc v) {
    return _mm512_shuffle_epi8(v, _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400));
  }
  static Acc unpacklo_i32(Acc a, Acc b) { return _mm512_unpacklo_epi32(a, b); }
  static Acc unpackhi_i32(Acc a, Acc b) { return _mm512_unpackhi_epi32(a, b); }
  static Acc unpacklo_i64(Acc a, Acc b) { return _mm512_unpacklo_epi64(a, b); }
  static Acc unpackhi_i64(Acc a, Acc b) { return _mm512_unpackhi_epi64(a, b); }
  // lo's lane j: pixels 4j, 4j + 1; hi's: 4j + 2, 4j + 3 (8 bytes each) -> 16 pixels in order (128 bytes).
  static void store_octets(uint8_t* y, Acc lo, Acc hi) {
    const __m512i first = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
    const __m512i second = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi);
    _mm512_storeu_si512(y, first);
    _mm512_storeu_si512(y + 64, second);
  }
  // u[m]'s lane j: pixel 4j + m (16 bytes) -> 16 pixels in order (256 bytes): a 4 x 4 transpose of 128-bit lanes.
  static void store_sixteens(uint8_t* y, const Acc (&u)[4]) {
    const __m512i t0 = _mm512_shuffle_i64x2(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i t1 = _mm512_shuffle_i64x2(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i t2 = _mm512_shuffle_i64x2(u[2], u[3], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i t3 = _mm512_shuffle_i64x2(u[2], u[3], _MM_SHUFFLE(3, 2, 3, 2));
    _mm512_storeu_si512(y, _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_si512(y + 64, _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_storeu_si512(y + 128, _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_si512(y + 192, _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(3, 1, 3, 1)));
  }
};

}  // namespace
}  // namespace ninegrid

#include "kernels/x86/qconv_first_layer_impl.h"

namespace ninegrid {
namespace vnni {

static_assert(QFirstLayerVnni::kLanes == kQFirstLayerLanes && QFirstLayerVnni::kDepth == kQFirstLayerDepth,
              "qconv_first_layer_x86.h promises 16 lanes of 4 bytes");

void qconv2d_first_layer(const X86QFirstLayerArgs& a, int64_t row_begin, int64_t row_end) {
  if (a.pass_channels == 16) qfirst_conv<QFirstLayerVnni, 2, 1>(a, row_begin, row_end);
  else qfirst_conv<QFirstLayerVnni, 1, 3>(a, row_begin, row_end);
}

}  // namespace vnni
}  // namespace ninegrid
