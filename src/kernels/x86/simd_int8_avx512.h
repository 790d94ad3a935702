// int32 accumulator vectors of 16 lanes for the AVX-512 VNNI int8 kernels. Include only from files under
// src/kernels/x86/vnni/ (compiled with -mavx512vnni and the AVX-512 flags); internal linkage throughout, as the
// ODR rule of those folders requires.
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/simd_int8_avx2.h"

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
  static void store_f(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
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
  // The same 16 lanes as two 8-byte halves (an output in blocks of 8: lanes 0-7 and 8-15 are two consecutive
  // blocks); `hi` null: the upper half is padding, neither stored nor read (zero).
  static void store_u8_halves(uint8_t* lo, uint8_t* hi, Acc v) {
    const __m128i bytes = _mm512_cvtepi32_epi8(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(lo), bytes);
    if (hi) _mm_storel_epi64(reinterpret_cast<__m128i*>(hi), _mm_unpackhi_epi64(bytes, bytes));
  }
  static Acc load_u8_halves(const uint8_t* lo, const uint8_t* hi) {
    const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(lo));
    const __m128i high = hi ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(hi)) : _mm_setzero_si128();
    return _mm512_cvtepu8_epi32(_mm_unpacklo_epi64(low, high));
  }

  // Packed requantisation (qconv_epilogue_impl.h, requantize_store_packed): 4 vectors of int32 become 64
  // bytes through two saturating packs, which interleave them by 128-bit lane; bytes_in_vector_order puts
  // each vector's 16 bytes back together (vector j's at bytes [16 j, 16 j + 16)).
  static Acc pack_i32_to_i16(Acc a, Acc b) { return _mm512_packs_epi32(a, b); }
  static Acc pack_i16_to_u8(Acc a, Acc b) { return _mm512_packus_epi16(a, b); }
  static Acc adds_i16(Acc a, Acc b) { return _mm512_adds_epi16(a, b); }
  static Acc set1_i16(int16_t v) { return _mm512_set1_epi16(v); }
  static Acc max_u8(Acc a, Acc b) { return _mm512_max_epu8(a, b); }
  static Acc min_u8(Acc a, Acc b) { return _mm512_min_epu8(a, b); }
  static Acc bytes_in_vector_order(Acc packed) {
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), packed);
  }
  // The first n vectors' bytes (n * 16, n in [1, 4]).
  static void store_vectors_u8(uint8_t* p, Acc v, int n) {
    if (n == 4) return _mm512_storeu_si512(p, v);
    if (n >= 2) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_castsi512_si256(v));
    if (n == 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_castsi512_si128(v));
    if (n == 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 32), _mm512_extracti32x4_epi32(v, 2));
  }

  // Depthwise (kernels/x86/qconv_depthwise_impl.h): each lane is one channel, so vpdpbusd's four bytes per
  // lane are four taps of that channel, and the four input pixels they multiply must sit in the lane.
  static X set1_u8(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  // 4 pixels of 16 channels as NCHW16c stores them (64 bytes, pixel after pixel) rearranged to
  // [channel][pixel], the order vpdpbusd multiplies with weights packed [channel][4 taps]: a dword permute
  // brings each 128-bit lane its 4 channels from the 4 pixels, a byte shuffle transposes the 4 x 4 bytes
  // inside every lane (two shuffles: vpermb, one, is AVX512-VBMI, which Cascade Lake lacks).
  static X pixels_to_taps(__m512i pixels) {
    const __m512i gather = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i transpose = _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400);
    return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(gather, pixels), transpose);
  }
};

// 8 int32 lanes with VNNI (vpdpbusd on ymm, AVX512VL): the int8 kernels' vectors for tensors in 8-channel
// blocks, where 16 lanes would leave half of every vector idle. The requantisation steps are AVX2's.
struct QVecVnni256 : QVecAvx2 {
  static constexpr int kDepth = 4;
  static constexpr int kGroupElements = 0;  // no pixel groups (QVecAvx2's take 2 channels per lane)
  using X = __m256i;  // kDepth input bytes per lane
  using W = __m256i;  // kDepth weights of each of 8 output channels: bytes [lane][kDepth]
  static X broadcast_inputs(const uint8_t* p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
  }
  static W load_weights(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Acc madd(X x, W w, Acc acc) { return _mm256_dpbusd_epi32(acc, x, w); }

  // Depthwise, as QVecVnni's: 4 pixels of 8 channels (32 bytes, NCHW8c) rearranged to [channel][pixel].
  static X set1_u8(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static X pixels_to_taps(__m256i pixels) {
    const __m256i gather = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256i transpose = _mm256_setr_epi32(0x0c080400, 0x0d090501, 0x0e0a0602, 0x0f0b0703, 0x0c080400,
                                                 0x0d090501, 0x0e0a0602, 0x0f0b0703);
    return _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(pixels, gather), transpose);
  }
};

}  // namespace
}  // namespace ninegrid
