// int32 accumulator vectors of 4 lanes for the AArch64 int8 kernels without the dot-product extension (the
// Cortex-A72 of the Raspberry Pi 4): the int8 twin of simd_neon.h, with the members the x86 int8 templates
// (kernels/x86/qconv_arith_impl.h, qconv_epilogue_impl.h, qconv_depthwise_impl.h) take from
// simd_int8_avx2.h's QVecAvx2, lane by lane the same results. Include only from files under
// src/kernels/arm/neon/ and src/kernels/arm/dotprod/ (simd_int8_dotprod.h builds on it); internal linkage
// throughout, as the ODR rule of the ISA folders requires.
//
// Signed bytes. NEON multiplies bytes signed by signed (smull, sdot); it has no unsigned-by-signed byte
// product (usdot is the later i8mm extension). The kernels therefore multiply each uint8 input x as the
// signed byte x ^ 0x80 = x - 128, one eor per broadcast input or group of pixels, and FastQConv2d
// prepares their sums for an input zero point of zp - 128 (kernels/arm/qconv_kernels_arm.h): sum (x - zp) w
// = sum (x' - (zp - 128)) w exactly. The other exact mappings cost more: widening the input to 16 bits
// halves the products per instruction, and udot with weights shifted to w + 128 needs a correction of 128 x
// (the sum of the inputs), which depends on the data, per output.
#pragma once

#include <arm_neon.h>

#include <cstdint>

namespace ninegrid {
namespace {

// The shift from uint8 inputs to the signed bytes the products take (see above).
constexpr uint8_t kArmInputShift = 0x80;

// Input bytes shifted to signed bytes (16 or 8 of them).
inline int8x16_t arm_signed_bytes(uint8x16_t v) {
  return vreinterpretq_s8_u8(veorq_u8(v, vdupq_n_u8(kArmInputShift)));
}
inline int8x8_t arm_signed_bytes(uint8x8_t v) { return vreinterpret_s8_u8(veor_u8(v, vdup_n_u8(kArmInputShift))); }

// A pixel group (kernels/x86/conv_direct_impl.h's pixel groups): 4 pixels of NCHW4c, 16 input bytes, shifted.
inline int8x16_t arm_load_group_of_4_pixels(const uint8_t* p) { return arm_signed_bytes(vld1q_u8(p)); }

struct QVecNeonInt8 {
  using Acc = int32x4_t;  // 4 int32 sums, one output channel per lane
  using F = float32x4_t;  // the same 4 lanes as floats (requantisation)
  static constexpr int kLanes = 4;
  // Input channels per multiply-add: smull multiplies 8 signed bytes into 8 exact 16-bit products (|x' w|
  // <= 128 x 128 = 16384), and sadalp adds each adjacent pair into an int32 lane: 2 input channels of each
  // of 4 output channels. Two instructions for 8 products, which the A72 issues on its two SIMD pipes
  // (smull on F0, sadalp on F1) where 16-bit smlal does 4 products on F0 alone. smlal on bytes (ncnn's
  // accumulation of two products in 16 bits) is not exact: 2 x (-128 x -128) overflows int16.
  static constexpr int kDepth = 2;
  using X = int8x8_t;  // 2 shifted input bytes of one pixel, the same pair in every lane
  using W = int8x8_t;  // 2 weights of each of 4 output channels: bytes [lane][kDepth]

  static Acc zero() { return vdupq_n_s32(0); }
  static Acc load_acc(const int32_t* p) { return vld1q_s32(p); }
  static void store_acc(int32_t* p, Acc v) { vst1q_s32(p, v); }
  static Acc add(Acc a, Acc b) { return vaddq_s32(a, b); }
  static Acc sub(Acc a, Acc b) { return vsubq_s32(a, b); }
  static Acc set1_i32(int32_t v) { return vdupq_n_s32(v); }

  static X broadcast_inputs(const uint8_t* p) {
    uint16_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return arm_signed_bytes(vreinterpret_u8_u16(vdup_n_u16(pair)));
  }
  static W load_weights(const int8_t* p) { return vld1_s8(p); }
  static Acc madd(X x, W w, Acc acc) { return vpadalq_s16(acc, vmull_s8(x, w)); }

  // Pixel groups (kernels/x86/conv_direct_impl.h): 16 input bytes, 4 pixels of NCHW4c, loaded and shifted
  // once; the channel pair of pixel i in step s (channels 2 s, 2 s + 1) is 16-bit lane L = 2 i + s, which
  // one dup broadcasts for the tile's blocks, where the broadcast took a load, a dup and a shift per pixel
  // and step. (smlal by lane on inputs widened to 16 bits, ncnn's A72 form, issues 4 products per cycle on
  // the A72's one multiply pipe, fewer than smull + sadalp already reach: bench/REPORT.md, "Arm64".)
  static constexpr int kGroupElements = 16;
  using XG = int8x16_t;
  static XG load_group(const uint8_t* p) { return arm_load_group_of_4_pixels(p); }
  template <int L>
  static Acc madd_lane(XG g, W w, Acc acc) {
    return madd(vreinterpret_s8_s16(vdup_laneq_s16(vreinterpretq_s16_s8(g), L)), w, acc);
  }

  // Requantisation steps, as QVecAvx2's.
  static F to_float(Acc v) { return vcvtq_f32_s32(v); }
  static F load_f(const float* p) { return vld1q_f32(p); }
  static void store_f(float* p, F v) { vst1q_f32(p, v); }
  static F div(F a, F b) { return vdivq_f32(a, b); }
  static F set1_f(float f) { return vdupq_n_f32(f); }
  static F mul(F a, F b) { return vmulq_f32(a, b); }
  static F fmadd(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  // a > b ? a : b and a < b ? a : b: the second operand when either is NaN, as x86's maxps/minps (the
  // epilogue relies on it: a NaN becomes the lower bound); fmax/fmin would return the other operand.
  static F max(F a, F b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static F min(F a, F b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  // Nearest integer, halves to even (fcvtns), as the reference's nearbyint in the default rounding mode.
  static Acc round_to_int(F v) { return vcvtnq_s32_f32(v); }
  // 4 bytes widened to 4 int32 lanes, and back (the values are in [0, 255]).
  static Acc load_u8(const uint8_t* p) {
    uint32_t bytes;
    __builtin_memcpy(&bytes, p, sizeof bytes);
    const uint16x8_t words = vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(bytes)));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(words)));
  }
  static uint32_t bytes_of(Acc v) {
    const int16x4_t words = vmovn_s32(v);
    const uint8x8_t bytes = vqmovun_s16(vcombine_s16(words, words));
    return vget_lane_u32(vreinterpret_u32_u8(bytes), 0);
  }
  static void store_u8(uint8_t* p, Acc v) {
    const uint32_t bytes = bytes_of(v);
    __builtin_memcpy(p, &bytes, sizeof bytes);
  }
  // The same 4 lanes as two 2-byte halves (an output in blocks of 2); `hi` null: the upper half is padding,
  // neither stored nor read (zero).
  static void store_u8_halves(uint8_t* lo, uint8_t* hi, Acc v) {
    const uint32_t bytes = bytes_of(v);
    const uint16_t low = static_cast<uint16_t>(bytes), high = static_cast<uint16_t>(bytes >> 16);
    __builtin_memcpy(lo, &low, sizeof low);
    if (hi) __builtin_memcpy(hi, &high, sizeof high);
  }
  static Acc load_u8_halves(const uint8_t* lo, const uint8_t* hi) {
    uint16_t low, high = 0;
    __builtin_memcpy(&low, lo, sizeof low);
    if (hi) __builtin_memcpy(&high, hi, sizeof high);
    const uint32_t bytes = static_cast<uint32_t>(low) | static_cast<uint32_t>(high) << 16;
    const uint16x8_t words = vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(bytes)));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(words)));
  }

  // Packed requantisation (qconv_epilogue_impl.h, requantize_store_packed): 4 vectors of int32 become 16
  // bytes through two saturating narrowings, which keep the lanes in order (bytes_in_vector_order has
  // nothing to do). The intermediate int16 and uint8 vectors travel as Acc, as on x86.
  static Acc pack_i32_to_i16(Acc a, Acc b) { return vreinterpretq_s32_s16(vqmovn_high_s32(vqmovn_s32(a), b)); }
  static Acc pack_i16_to_u8(Acc a, Acc b) {
    return vreinterpretq_s32_u8(vqmovun_high_s16(vqmovun_s16(vreinterpretq_s16_s32(a)), vreinterpretq_s16_s32(b)));
  }
  static Acc adds_i16(Acc a, Acc b) {
    return vreinterpretq_s32_s16(vqaddq_s16(vreinterpretq_s16_s32(a), vreinterpretq_s16_s32(b)));
  }
  static Acc set1_i16(int16_t v) { return vreinterpretq_s32_s16(vdupq_n_s16(v)); }
  static Acc set1_u8(uint8_t v) { return vreinterpretq_s32_u8(vdupq_n_u8(v)); }
  static Acc max_u8(Acc a, Acc b) {
    return vreinterpretq_s32_u8(vmaxq_u8(vreinterpretq_u8_s32(a), vreinterpretq_u8_s32(b)));
  }
  static Acc min_u8(Acc a, Acc b) {
    return vreinterpretq_s32_u8(vminq_u8(vreinterpretq_u8_s32(a), vreinterpretq_u8_s32(b)));
  }
  static Acc bytes_in_vector_order(Acc packed) { return packed; }
  // The first n vectors' bytes (n * 4, n in [1, 4]).
  static void store_vectors_u8(uint8_t* p, Acc v, int n) {
    if (n == 4) return vst1q_u8(p, vreinterpretq_u8_s32(v));
    uint8_t bytes[16];
    vst1q_u8(bytes, vreinterpretq_u8_s32(v));
    __builtin_memcpy(p, bytes, static_cast<unsigned>(n) * 4u);
  }
};

// The pixels of a depthwise group (qconv_depthwise_impl.h) in NCHW4c, [pixel][channel], rearranged to
// [channel][pixel] and shifted to signed bytes: the order in which sdot (4 pixels) and smull + sadalp (2)
// multiply them with weights packed [channel][taps].
inline int8x16_t arm_taps_of_4_pixels(uint8x16_t pixels) {
  // Byte i of the result is byte index[i] of the pixels: channel i / 4 of pixel i % 4.
  const uint8x16_t index = vcombine_u8(vcreate_u8(0x0D0905010C080400ull), vcreate_u8(0x0F0B07030E0A0602ull));
  return arm_signed_bytes(vqtbl1q_u8(pixels, index));
}
inline int8x8_t arm_taps_of_2_pixels(uint8x8_t pixels) {
  const uint8x8_t index = vcreate_u8(0x0703060205010400ull);
  return arm_signed_bytes(vtbl1_u8(pixels, index));
}

}  // namespace
}  // namespace ninegrid
