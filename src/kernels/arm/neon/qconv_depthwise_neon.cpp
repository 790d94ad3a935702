// NEON instantiation of the int8 depthwise kernels without the dot-product extension
// (kernels/x86/qconv_depthwise_impl.h, whose header says what a policy provides): smull multiplies 2 taps of
// each of 4 channels into 16-bit products and sadalp adds each pair into the channel's int32 lane; each
// group is 2 pixels x 4 channels of NCHW4c (one 8-byte load) interleaved by one tbl (arm_taps_of_2_pixels).
#include "kernels/arm/simd_int8_neon.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/qconv_kernels_arm.h"
#include "kernels/x86/qconv_depthwise_impl.h"

namespace ninegrid {
namespace {

// Tile shapes for 32 registers (ROWS x COLS outputs, groups every SPACING window columns): 16 accumulators
// for 3x3 stride 1 (AVX2's 16 registers allow 8), each group meeting every output of the tile that reads it.
template <int K, int S>
struct DwNeonTile {
  static constexpr int kRows = K == 3 && S == 1 ? 4 : 2, kCols = 4, kSpacing = 2;
  static constexpr int kNarrowRows = 2;  // x 8 columns, on planes up to 14 outputs wide
};

// 4 channels per int32x4, NCHW4c input (pixels 4 bytes apart); narrower blocks gathering.
struct DwNeon {
  using QV = QVecNeonInt8;
  using Taps = int8x8_t;  // [channel][2 pixels], shifted to signed bytes
  using W = int8x8_t;     // [channel][2 taps]
  using Mask = unsigned;  // bit j: pixel j of the group lies inside the image
  static constexpr int kLanes = 4, kTaps = 2, kWeightBytes = 1, kPixelStride = 4;
  template <int K, int S>
  using Tile = DwNeonTile<K, S>;

  static Taps fill(uint8_t zp) { return arm_taps_of_2_pixels(vdup_n_u8(zp)); }
  // Pixels [first, end) of a group.
  static Mask mask(int first, int end) { return ((1u << end) - 1) & ~((1u << first) - 1); }
  // N pixels from p (the rest zeros, which only zero weights meet).
  template <int N>
  static Taps load(const uint8_t* p) {
    if constexpr (N == 2) {
      return arm_taps_of_2_pixels(vld1_u8(p));
    } else {
      uint8_t bytes[8] = {};
      __builtin_memcpy(bytes, p, 4 * N);
      return arm_taps_of_2_pixels(vld1_u8(bytes));
    }
  }
  // The pixels of `inside` from p, the others zero points (never read from p).
  template <int N, class Block>
  static Taps load_masked(const uint8_t* p, Mask inside, const Block& b) {
    uint8_t bytes[8];
    for (int j = 0; j < 2; ++j)
      __builtin_memcpy(bytes + 4 * j, j < N && ((inside >> j) & 1u) ? p + 4 * j : b.fill_pixel, 4);
    return arm_taps_of_2_pixels(vld1_u8(bytes));
  }
  static Taps gather(const uint8_t* const* pixels) {
    uint8_t bytes[8];
    for (int j = 0; j < 2; ++j) __builtin_memcpy(bytes + 4 * j, pixels[j], 4);
    return arm_taps_of_2_pixels(vld1_u8(bytes));
  }
  static W weights(const int8_t* p) { return vld1_s8(p); }
  static QV::Acc madd(Taps t, W w, QV::Acc acc) { return QV::madd(t, w, acc); }
};

}  // namespace

namespace neon {

X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t /*in_block*/) {
  X86QDepthwiseLayout l;
  l.lanes = 4;
  l.taps = 2;
  l.weight_bytes = 1;
  return l;
}

void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r) { qdepthwise_conv<DwNeon>(a, r); }

}  // namespace neon
}  // namespace ninegrid
