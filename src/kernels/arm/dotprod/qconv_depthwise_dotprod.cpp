// Dot-product instantiation of the int8 depthwise kernels (kernels/x86/qconv_depthwise_impl.h, whose header
// says what a policy provides): sdot sums 4 taps per lane, each group is 4 pixels x 4 channels of NCHW4c
// (one 16-byte load) rearranged by one tbl (arm_taps_of_4_pixels), as the MNN document does for sdot
// (kernels/arm/qconv_kernels_arm.h says why NCHW4c).
#include "kernels/arm/simd_int8_dotprod.h"
// (the vector type must be declared before the kernels that use it)
#include "kernels/arm/qconv_kernels_arm.h"
#include "kernels/x86/qconv_depthwise_impl.h"

namespace ninegrid {
namespace {

// Tile shapes: ROWS x COLS outputs, groups every SPACING window columns (qconv_depthwise_impl.h); 32
// registers as on AVX-512, so VNNI's shapes (qconv_depthwise_vnni.h): 16 accumulators for 3x3 stride 1.
template <int K, int S>
struct DwDotprodTile {
  static constexpr int kRows = K == 3 && S == 1 ? 4 : 2, kCols = 4, kSpacing = K == 3 ? 2 : 4;
  static constexpr int kNarrowRows = 2;  // x 8 columns, on planes up to 14 outputs wide
};

// 4 channels per int32x4, NCHW4c input (pixels 4 bytes apart); narrower blocks gathering.
struct DwDotprod {
  using QV = QVecDotprod;
  using Taps = int8x16_t;  // [channel][4 pixels], shifted to signed bytes
  using W = int8x16_t;     // [channel][4 taps]
  using Mask = unsigned;   // bit j: pixel j of the group lies inside the image
  static constexpr int kLanes = 4, kTaps = 4, kWeightBytes = 1, kPixelStride = 4;
  template <int K, int S>
  using Tile = DwDotprodTile<K, S>;

  static Taps fill(uint8_t zp) { return arm_taps_of_4_pixels(vdupq_n_u8(zp)); }
  // Pixels [first, end) of a group.
  static Mask mask(int first, int end) { return ((1u << end) - 1) & ~((1u << first) - 1); }
  // N pixels from p (the rest zeros, which only zero weights meet).
  template <int N>
  static Taps load(const uint8_t* p) {
    if constexpr (N == 4) {
      return arm_taps_of_4_pixels(vld1q_u8(p));
    } else {
      uint8_t bytes[16] = {};
      __builtin_memcpy(bytes, p, 4 * N);
      return arm_taps_of_4_pixels(vld1q_u8(bytes));
    }
  }
  // The pixels of `inside` from p, the others zero points (never read from p).
  template <int N, class Block>
  static Taps load_masked(const uint8_t* p, Mask inside, const Block& b) {
    uint8_t bytes[16];
    for (int j = 0; j < 4; ++j)
      __builtin_memcpy(bytes + 4 * j, j < N && ((inside >> j) & 1u) ? p + 4 * j : b.fill_pixel, 4);
    return arm_taps_of_4_pixels(vld1q_u8(bytes));
  }
  static Taps gather(const uint8_t* const* pixels) {
    uint8_t bytes[16];
    for (int j = 0; j < 4; ++j) __builtin_memcpy(bytes + 4 * j, pixels[j], 4);
    return arm_taps_of_4_pixels(vld1q_u8(bytes));
  }
  static W weights(const int8_t* p) { return vld1q_s8(p); }
  static QV::Acc madd(Taps t, W w, QV::Acc acc) { return QV::madd(t, w, acc); }
};

}  // namespace

namespace dotprod {

X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t /*in_block*/) {
  X86QDepthwiseLayout l;
  l.lanes = 4;
  l.taps = 4;
  l.weight_bytes = 1;
  return l;
}

void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r) { qdepthwise_conv<DwDotprod>(a, r); }

}  // namespace dotprod
}  // namespace ninegrid
