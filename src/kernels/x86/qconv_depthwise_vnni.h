// The int8 depthwise kernels' policies for AVX-512 VNNI (kernels/x86/qconv_depthwise_impl.h says what a
// policy provides): vpdpbusd sums 4 taps per lane, each group is 4 pixels of a row interleaved by
// QVecVnni::pixels_to_taps. Include only from files compiled for VNNI (src/kernels/x86/vnni/, and the
// benchmark of tile variants); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/simd_int8_avx512.h"

namespace ninegrid {
namespace {

// Tile shapes: ROWS x COLS outputs, groups every SPACING window columns (qconv_depthwise_impl.h says why;
// measured: bench/REPORT.md, "Int8 depthwise").
template <int K, int S>
struct DwVnniTile {
  static constexpr int kRows = K == 3 && S == 1 ? 4 : 2, kCols = 4, kSpacing = K == 3 ? 2 : 4;
  static constexpr int kNarrowRows = 2;  // x 8 columns, on planes up to 14 outputs wide
};

// 16 channels per zmm on NCHW16c input: a group of 4 pixels is one 64-byte load.
struct DwVnni512 {
  using QV = QVecVnni;
  using Taps = __m512i;
  using W = __m512i;
  using Mask = __mmask16;  // dwords of the group's 64 bytes that lie inside the image
  static constexpr int kLanes = 16, kTaps = 4, kWeightBytes = 1, kPixelStride = 16;
  static constexpr bool kHoldWeights = true;  // 32 registers: the centre run keeps its weights in them
  template <int K, int S>
  using Tile = DwVnniTile<K, S>;

  static Taps fill(uint8_t zp) { return QV::set1_u8(zp); }
  // Pixels [first, end) of a group (4 dwords each).
  static Mask mask(int first, int end) { return static_cast<Mask>(((1u << (4 * end)) - 1) & ~((1u << (4 * first)) - 1)); }
  // N pixels from p (the rest zeros, never read).
  template <int N>
  static Taps load(const uint8_t* p) {
    if constexpr (N == 4) return QV::pixels_to_taps(_mm512_loadu_si512(p));
    else return QV::pixels_to_taps(_mm512_maskz_loadu_epi32(static_cast<Mask>((1u << (4 * N)) - 1), p));
  }
  // The pixels of `inside` from p, the others zero points (masked off: never read).
  template <int N, class Block>
  static Taps load_masked(const uint8_t* p, Mask inside, const Block& b) {
    return QV::pixels_to_taps(_mm512_mask_loadu_epi32(b.fill, inside, p));
  }
  static Taps gather(const uint8_t* const* pixels) {
    auto pixel = [&](int j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(pixels[j])); };
    __m512i v = _mm512_castsi128_si512(pixel(0));
    v = _mm512_inserti32x4(v, pixel(1), 1);
    v = _mm512_inserti32x4(v, pixel(2), 2);
    v = _mm512_inserti32x4(v, pixel(3), 3);
    return QV::pixels_to_taps(v);
  }
  static W weights(const int8_t* p) { return _mm512_loadu_si512(p); }
  static QV::Acc madd(Taps t, W w, QV::Acc acc) { return QV::madd(t, w, acc); }
};

// 8 channels per ymm on NCHW8c input (and, gathering, on narrower blocks): a group is one 32-byte load.
struct DwVnni256 {
  using QV = QVecVnni256;
  using Taps = __m256i;
  using W = __m256i;
  using Mask = __mmask8;
  static constexpr int kLanes = 8, kTaps = 4, kWeightBytes = 1, kPixelStride = 8;
  static constexpr bool kHoldWeights = true;
  template <int K, int S>
  using Tile = DwVnniTile<K, S>;

  static Taps fill(uint8_t zp) { return QV::set1_u8(zp); }
  // Pixels [first, end) of a group (2 dwords each).
  static Mask mask(int first, int end) { return static_cast<Mask>(((1u << (2 * end)) - 1) & ~((1u << (2 * first)) - 1)); }
  template <int N>
  static Taps load(const uint8_t* p) {
    if constexpr (N == 4) return QV::pixels_to_taps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    else return QV::pixels_to_taps(_mm256_maskz_loadu_epi32(static_cast<Mask>((1u << (2 * N)) - 1), p));
  }
  template <int N, class Block>
  static Taps load_masked(const uint8_t* p, Mask inside, const Block& b) {
    return QV::pixels_to_taps(_mm256_mask_loadu_epi32(b.fill, inside, p));
  }
  static Taps gather(const uint8_t* const* pixels) {
    auto pixel = [&](int j) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(pixels[j])); };
    const __m128i lo = _mm_unpacklo_epi64(pixel(0), pixel(1)), hi = _mm_unpacklo_epi64(pixel(2), pixel(3));
    return QV::pixels_to_taps(_mm256_set_m128i(hi, lo));
  }
  static W weights(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static QV::Acc madd(Taps t, W w, QV::Acc acc) { return QV::madd(t, w, acc); }
};

}  // namespace
}  // namespace ninegrid
