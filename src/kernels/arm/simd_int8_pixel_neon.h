// One pixel's channel block of a uint8 or int8 tensor in NCHW4c (the int8 block under NEON) in the low
// 4 bytes of a 64-bit NEON register: the Arm twin of kernels/x86/simd_int8_pixel.h, the vector type of the
// int8 MaxPool (kernels/x86/pool_impl.h). Include only from files under src/kernels/arm/neon/.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ninegrid {
namespace {

template <class E>
struct Int8PixelNeon {
  static_assert(std::is_same<E, uint8_t>::value || std::is_same<E, int8_t>::value, "uint8 or int8 elements");
  using T = typename std::conditional<std::is_signed<E>::value, int8x8_t, uint8x8_t>::type;
  using Elem = E;
  static constexpr int kLanes = 4;

  // Through memcpy: a pixel's 4 bytes need not be 4-byte aligned.
  static T load(const E* p) {
    uint32_t bits;
    std::memcpy(&bits, p, sizeof bits);
    if constexpr (std::is_signed<E>::value) return vreinterpret_s8_u32(vdup_n_u32(bits));
    else return vreinterpret_u8_u32(vdup_n_u32(bits));
  }
  static void store(E* p, T v) {
    uint32_t bits;
    if constexpr (std::is_signed<E>::value) bits = vget_lane_u32(vreinterpret_u32_s8(v), 0);
    else bits = vget_lane_u32(vreinterpret_u32_u8(v), 0);
    std::memcpy(p, &bits, sizeof bits);
  }
  static T max(T a, T b) {
    if constexpr (std::is_signed<E>::value) return vmax_s8(a, b);
    else return vmax_u8(a, b);
  }
  static T set1(E v) {
    if constexpr (std::is_signed<E>::value) return vdup_n_s8(v);
    else return vdup_n_u8(v);
  }
  static T zero() { return set1(0); }
};

}  // namespace
}  // namespace ninegrid
