// 4-lane float vectors for the NEON kernels (AArch64 Advanced SIMD; blocked tensors are NCHW4c). The
// vector type the kernel templates of src/kernels/x86/*_impl.h are instantiated with on Arm, beside
// VecAvx2 and VecAvx512, with the same members and the same semantics lane by lane (NaN handling
// included), so the NEON kernels match the reference kernels as the x86 ones do. Include only from files
// under src/kernels/arm/neon/; everything here has internal linkage (the ODR rule of the ISA folders,
// CMakeLists.txt).
#pragma once

#include <arm_neon.h>

namespace ninegrid {
namespace {

struct VecNeon {
  using T = float32x4_t;
  static constexpr int kLanes = 4;
  // 32 vector registers, as AVX-512 has: the depthwise tiles keep their weights and each input vector in
  // registers (conv_depthwise_impl.h).
  static constexpr int kRegisters = 32;
  // Depthwise 3x3 tile: 2 rows x 4 outputs (the paper's Algorithm 4): 8 independent FMLA chains, enough
  // to cover the Cortex-A72's FMLA latency on its two FP pipes, with the 9 weights in registers.
  static constexpr int kDepthwiseRows3x3 = 2;
  static constexpr int kDepthwiseCols3x3 = 4;

  static T load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, T v) { vst1q_f32(p, v); }
  static T broadcast(const float* p) { return vld1q_dup_f32(p); }
  static T set1(float f) { return vdupq_n_f32(f); }
  static T zero() { return vdupq_n_f32(0.f); }
  static T fmadd(T a, T b, T c) { return vfmaq_f32(c, a, b); }
  static T add(T a, T b) { return vaddq_f32(a, b); }
  static T sub(T a, T b) { return vsubq_f32(a, b); }
  static T mul(T a, T b) { return vmulq_f32(a, b); }
  static T div(T a, T b) { return vdivq_f32(a, b); }
  // max/min return the second operand when either is NaN (like x86's MAXPS/MINPS, a > b ? a : b), which
  // the kernels' NaN handling and the pooling's bit-exactness rely on; FMAX/FMIN would return the NaN.
  static T max(T a, T b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static T min(T a, T b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  // x >= 0 ? x : scale * x, lane by lane.
  static T scale_negative(T x, T scale) { return vbslq_f32(vcgeq_f32(x, zero()), x, vmulq_f32(x, scale)); }
  // Keeps v in a register once loaded (conv_depthwise_impl.h says why).
  static void pin(T& v) { __asm__("" : "+w"(v)); }

  // Element-wise math support (kernels/x86/vector_math_impl.h).
  // Nearest integer, halves to even.
  static T round_nearest(T x) { return vrndnq_f32(x); }
  // y * 2^n for n holding an integer with |n| <= 252, as VecAvx2::scale_pow2: 2^n applied as 2^h * 2^(n - h),
  // h = floor(n / 2), so each factor is a normal float.
  static T scale_pow2(T y, T n) {
    const int32x4_t k = vcvtnq_s32_f32(n);
    const int32x4_t h = vshrq_n_s32(k, 1);
    return vmulq_f32(vmulq_f32(y, pow2(h)), pow2(vsubq_s32(k, h)));
  }
  static T abs(T x) { return vabsq_f32(x); }
  // |magnitude| with the sign bit of `sign`.
  static T copy_sign(T magnitude, T sign) {
    return vbslq_f32(vdupq_n_u32(0x80000000u), sign, magnitude);
  }
  // a > b ? if_greater : otherwise, lane by lane (an ordered compare: NaN lanes take `otherwise`).
  static T select_greater(T a, T b, T if_greater, T otherwise) { return vbslq_f32(vcgtq_f32(a, b), if_greater, otherwise); }
  // x = mantissa(x) * 2^exponent(x) with mantissa in [1, 2), for positive normal x (read from the bits:
  // other inputs give meaningless values); exponent as a float.
  static T exponent(T x) {
    const int32x4_t biased = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_f32(x), 23));
    return vcvtq_f32_s32(vsubq_s32(biased, vdupq_n_s32(127)));
  }
  static T mantissa(T x) {
    const uint32x4_t fraction = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x007fffffu));
    return vreinterpretq_f32_u32(vorrq_u32(fraction, vdupq_n_u32(0x3f800000u)));
  }
  // 2^k for integer lanes k in [-126, 127].
  static T pow2(int32x4_t k) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k, vdupq_n_s32(127)), 23)); }

  // The first n (0..4) lanes: loaded (the rest zero) and stored (the memory past them untouched).
  static T load_first(const float* p, int n) {
    float lanes[4] = {0.f, 0.f, 0.f, 0.f};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    return vld1q_f32(lanes);
  }
  static void store_first(float* p, T v, int n) {
    float lanes[4];
    vst1q_f32(lanes, v);
    for (int i = 0; i < n; ++i) p[i] = lanes[i];
  }

  // In-place transpose of 4 rows of 4 floats.
  static void transpose(T r[4]) {
    const T t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);  // r0[0] r1[0] r0[2] r1[2], ...[1], [3]
    const T t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    r[0] = pairs_low(t0, t2);
    r[1] = pairs_low(t1, t3);
    r[2] = pairs_high(t0, t2);
    r[3] = pairs_high(t1, t3);
  }
  // (a0 a1 b0 b1) and (a2 a3 b2 b3): 64-bit halves.
  static T pairs_low(T a, T b) {
    return vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
  }
  static T pairs_high(T a, T b) {
    return vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(a), vreinterpretq_f64_f32(b)));
  }
};

}  // namespace
}  // namespace ninegrid
