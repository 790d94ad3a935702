// One pixel's channel block of a uint8 or int8 tensor in the blocked layout NCHW[B]c, B = 16 (the int8
// block under AVX-512) or 8 (under AVX2), in an SSE register: the vector type of kernels that only move and
// compare bytes, the int8 MaxPool (kernels/x86/pool_impl.h). A pixel is 16 or 8 bytes, so a wider register
// would hold several pixels, which strided windows do not read together. Include only from ISA files (SSE4.1,
// for the signed byte max, is part of both AVX2 and AVX-512).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

namespace ninegrid {
namespace {

template <class E, int B>
struct Int8PixelSse {
  static_assert(std::is_same<E, uint8_t>::value || std::is_same<E, int8_t>::value, "uint8 or int8 elements");
  static_assert(B == 16 || B == 8, "a whole xmm register or its low half");
  using T = __m128i;
  using Elem = E;
  static constexpr int kLanes = B;

  static T load(const E* p) {
    if constexpr (B == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    else return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  }
  static void store(E* p, T v) {
    if constexpr (B == 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    else _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v);
  }
  static T max(T a, T b) {
    if constexpr (std::is_signed<E>::value) return _mm_max_epi8(a, b);
    else return _mm_max_epu8(a, b);
  }
  static T set1(E v) { return _mm_set1_epi8(static_cast<char>(v)); }
  static T zero() { return _mm_setzero_si128(); }
};

}  // namespace
}  // namespace ninegrid
