// The int8 depthwise kernels' policy for AVX2 (kernels/x86/qconv_depthwise_impl.h says what a policy
// provides): vpmaddwd sums 2 taps per lane, each group is 2 pixels of a row interleaved and widened by
// QVecAvx2::pixels_to_tap_pairs. Include only from files compiled for AVX2 (src/kernels/x86/avx2/, and the
// benchmark of tile variants); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/simd_int8_avx2.h"

namespace ninegrid {
namespace {

// Tile shapes for 16 registers (measured against 1x8 and 1x4 for 3x3 stride 1: bench/REPORT.md, "CI time
// and two int8 experiments not kept").
template <int K, int S>
struct DwAvx2Tile {
  static constexpr int kRows = K == 3 ? (S == 1 ? 2 : 1) : (S == 1 ? 2 : 4), kCols = K == 5 && S == 1 ? 8 : 4;
  static constexpr int kSpacing = 2;
  static constexpr int kNarrowRows = 1;  // x 8 columns, on planes up to 14 outputs wide
};

// 8 channels per ymm, pixels IB bytes apart (NCHW8c or NCHW16c input; narrower blocks gathering).
template <int IB>
struct DwAvx2 {
  using QV = QVecAvx2;
  using Taps = __m256i;
  using W = __m256i;
  using Mask = unsigned;  // bit j: pixel j of the group lies inside the image
  static constexpr int kLanes = 8, kTaps = 2, kWeightBytes = 2, kPixelStride = IB;
  template <int K, int S>
  using Tile = DwAvx2Tile<K, S>;

  static Taps fill(uint8_t zp) { return QV::set1_i16(zp); }
  // Pixels [first, end) of a group.
  static Mask mask(int first, int end) { return ((1u << end) - 1) & ~((1u << first) - 1); }
  template <int N>
  static Taps load(const uint8_t* p) {
    if constexpr (N == 2) return QV::pixels_to_tap_pairs(QV::load_pixel8(p), QV::load_pixel8(p + IB));
    else return QV::pixels_to_tap_pairs(QV::load_pixel8(p), _mm_setzero_si128());
  }
  template <int N, class Block>
  static Taps load_masked(const uint8_t* p, Mask inside, const Block& b) {
    const uint8_t* const first = inside & 1 ? p : b.fill_pixel;
    const uint8_t* const second = N == 2 && (inside & 2) ? p + IB : b.fill_pixel;
    return QV::pixels_to_tap_pairs(QV::load_pixel8(first), QV::load_pixel8(second));
  }
  static Taps gather(const uint8_t* const* pixels) {
    return QV::pixels_to_tap_pairs(QV::load_pixel8(pixels[0]), QV::load_pixel8(pixels[1]));
  }
  static W weights(const int8_t* p) { return QV::load_weights_i16(reinterpret_cast<const int16_t*>(p)); }
  static QV::Acc madd(Taps t, W w, QV::Acc acc) { return QV::madd_in_order(t, w, acc); }
};

}  // namespace
}  // namespace ninegrid
