// IEEE 754 half precision (float16) and bfloat16 conversions, bit-exact and portable (no F16C needed).
// Narrowing rounds to nearest, ties to even, directly from the wider value: converting a double straight
// to half avoids the double rounding of double -> float -> half.
#pragma once

#include <cstdint>
#include <cstring>

namespace ninegrid {
namespace ref {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf, or NaN keeping its payload
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise into a float (every half subnormal is a float normal).
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rounds a double to a binary format with kExpBits exponent and kMantBits mantissa bits packed in 16 bits
// (half: 5/10, bfloat16: 8/7), to nearest, ties to even; overflow gives infinity, NaN a quiet NaN.
template <int kExpBits, int kMantBits>
inline uint16_t double_to_narrow(double x) {
  static_assert(kExpBits + kMantBits == 15, "16-bit formats only");
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kMinExp = 1 - kBias;  // exponent of the smallest normal
  constexpr uint64_t kInf = ((uint64_t(1) << kExpBits) - 1) << kMantBits;
  constexpr uint64_t kQuietNan = kInf | (uint64_t(1) << (kMantBits - 1));
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  const uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000u);
  const uint64_t abs = b & 0x7FFFFFFFFFFFFFFFull;
  if (abs >= 0x7FF0000000000000ull)  // inf stays inf; any NaN becomes the quiet NaN
    return static_cast<uint16_t>(sign | (abs == 0x7FF0000000000000ull ? kInf : kQuietNan));
  const int exp_field = static_cast<int>(abs >> 52);
  if (exp_field == 0) return sign;  // double subnormals are far below either format's smallest value
  const int e = exp_field - 1023;
  if (e > kBias) return static_cast<uint16_t>(sign | kInf);
  const uint64_t mant = (abs & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);  // 53 significant bits
  // Keep kMantBits + 1 significant bits for a normal result, fewer for a subnormal one.
  const int shift = e >= kMinExp ? 52 - kMantBits : 52 - kMantBits + (kMinExp - e);
  if (shift >= 64) return sign;
  uint64_t q = mant >> shift;
  const uint64_t rem = mant & ((uint64_t(1) << shift) - 1);
  const uint64_t halfway = uint64_t(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  // For a normal, q carries the implicit bit; a carry out of the mantissa bumps the exponent, which the
  // addition below does by itself. A subnormal that rounds up to the implicit bit becomes the smallest normal.
  constexpr uint64_t kImplicit = uint64_t(1) << kMantBits;
  uint64_t result = e >= kMinExp ? (static_cast<uint64_t>(e + kBias) << kMantBits) + q - kImplicit : q;
  if (result >= kInf) result = kInf;
  return static_cast<uint16_t>(sign | result);
}

inline uint16_t double_to_half(double x) { return double_to_narrow<5, 10>(x); }

inline uint16_t float_to_half(float x) { return double_to_half(static_cast<double>(x)); }

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t double_to_bfloat16(double x) { return double_to_narrow<8, 7>(x); }


}  // namespace ref
}  // namespace ninegrid
