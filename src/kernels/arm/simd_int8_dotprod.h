// int32 accumulator vectors of 4 lanes for the AArch64 int8 kernels with the Armv8.2 dot-product extension
// (sdot: Cortex-A55/A76 and later, Neoverse, the Raspberry Pi 5): simd_int8_neon.h's vectors, whose
// requantisation steps they share, with sdot as the multiply-add. Include only from files under
// src/kernels/arm/dotprod/ (compiled with +dotprod and called only when HWCAP has asimddp); internal
// linkage throughout.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/arm/simd_int8_neon.h"

namespace ninegrid {
namespace {

struct QVecDotprod : QVecNeonInt8 {
  // Input channels per multiply-add: sdot adds, in each int32 lane, the four products of its 4 signed bytes
  // in both operands (exact: 4 x 128 x 128 fits in 17 bits; the sums wrap like the reference's int32). The
  // inputs are shifted to signed bytes as simd_int8_neon.h says.
  static constexpr int kDepth = 4;
  using X = int8x16_t;  // 4 shifted input bytes of one pixel, the same in every lane
  using W = int8x16_t;  // 4 weights of each of 4 output channels: bytes [lane][kDepth]

  static X broadcast_inputs(const uint8_t* p) {
    uint32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return arm_signed_bytes(vreinterpretq_u8_u32(vdupq_n_u32(v)));
  }
  static W load_weights(const int8_t* p) { return vld1q_s8(p); }
  static Acc madd(X x, W w, Acc acc) { return vdotq_s32(acc, x, w); }

  // Pixel groups (kernels/x86/conv_direct_impl.h): 16 input bytes, 4 pixels of NCHW4c, loaded and shifted
  // once; sdot's indexed form multiplies the weights by pixel L's 4 bytes (lane L) where the broadcast
  // took a load and a shift for every pixel.
  static constexpr int kGroupElements = 16;
  using XG = int8x16_t;
  static XG load_group(const uint8_t* p) { return arm_load_group_of_4_pixels(p); }
  template <int L>
  static Acc madd_lane(XG g, W w, Acc acc) {
    return vdotq_laneq_s32(acc, w, g, L);
  }
};

}  // namespace
}  // namespace ninegrid
