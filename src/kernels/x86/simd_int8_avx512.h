// int32 accumulator vectors of 16 lanes for the AVX-512 VNNI int8 kernels. Include only from files under
// src/kernels/x86/vnni/ (compiled with -mavx512vnni and the AVX-512 flags); internal linkage throughout, as the
// ODR rule of those folders requires.
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

namespace ninegrid {
namespace {

struct QVecVnni {
  using Acc = __m512i;  // 16 int32 sums, one output channel per lane
  using F = __m512;     // the same 16 lanes as floats (requantisation)
  static constexpr int kLanes = 16;
  // Input channels per multiply-add: vpdpbusd adds, in each lane, four products of unsigned input bytes and
  // signed weight bytes to the int32 sum (exactly: 4 x 255 x 128 fits in 17 bits, and the sum wraps like the
  // reference's int32).
  static constexpr int kDepth = 4;
  using X = __m512i;  // kDepth input bytes of one pixel, the same in every lane
  using W = __m512i;  // kDepth weights of each of 16 output channels: bytes [lane][kDepth]

  static Acc zero() { return _mm512_setzero_si512(); }
  static Acc load_acc(const int32_t* p) { return _mm512_loadu_si512(p); }
  static void store_acc(int32_t* p, Acc v) { _mm512_storeu_si512(p, v); }
  static Acc add(Acc a, Acc b) { return _mm512_add_epi32(a, b); }
  static Acc sub(Acc a, Acc b) { return _mm512_sub_epi32(a, b); }
  static Acc set1_i32(int32_t v) { return _mm512_set1_epi32(v); }

  static X broadcast_inputs(const uint8_t* p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
  }
  static W load_weights(const int8_t* p) { return _mm512_loadu_si512(p); }
  static Acc madd(X x, W w, Acc acc) { return _mm512_dpbusd_epi32(acc, x, w); }

  // Requantisation steps.
  static F to_float(Acc v) { return _mm512_cvtepi32_ps(v); }
  static F load_f(const float* p) { return _mm512_loadu_ps(p); }
  static F set1_f(float f) { return _mm512_set1_ps(f); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  // Nearest integer, halves to even (the reference's nearbyint in the default rounding mode).
  static Acc round_to_int(F v) { return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // 16 bytes widened to 16 int32 lanes, and back (the values are in [0, 255]).
  static Acc load_u8(const uint8_t* p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void store_u8(uint8_t* p, Acc v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v)); }
};

}  // namespace
}  // namespace ninegrid
