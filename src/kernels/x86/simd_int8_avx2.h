// int32 accumulator vectors of 8 lanes for the AVX2 int8 kernels (no VNNI). Include only from files under
// src/kernels/x86/avx2/; internal linkage throughout, as the ODR rule of those folders requires.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace ninegrid {
namespace {

struct QVecAvx2 {
  using Acc = __m256i;  // 8 int32 sums, one output channel per lane
  using F = __m256;
  static constexpr int kLanes = 8;
  // Input channels per multiply-add: vpmaddwd multiplies 16-bit values (inputs zero-extended, weights
  // sign-extended) and adds adjacent pairs into int32 lanes, exactly. vpmaddubsw would do four bytes at once
  // but saturates its 16-bit pair sums (255 x 127 x 2 > 32767); QVecAvx2W7 below uses it where the weights
  // allow.
  static constexpr int kDepth = 2;
  using X = __m256i;  // 2 input values of one pixel as int16, the same pair in every lane
  using W = __m256i;  // 2 weights of each of 8 output channels as int16: [lane][kDepth]

  static Acc zero() { return _mm256_setzero_si256(); }
  static Acc load_acc(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store_acc(int32_t* p, Acc v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static Acc add(Acc a, Acc b) { return _mm256_add_epi32(a, b); }
  static Acc sub(Acc a, Acc b) { return _mm256_sub_epi32(a, b); }
  static Acc set1_i32(int32_t v) { return _mm256_set1_epi32(v); }

  // The byte pair broadcast (vpbroadcastw from memory), then widened to words (vpmovzxbw): two instructions
  // where assembling the pair in a scalar register took four.
  static X broadcast_inputs(const uint8_t* p) {
    uint16_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return _mm256_cvtepu8_epi16(_mm_set1_epi16(static_cast<int16_t>(pair)));
  }
  // Weights are packed as int8 bytes [lane][kDepth] (16 bytes) and sign-extended here.
  static W load_weights(const int8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Acc madd(X x, W w, Acc acc) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
  // madd, its sum then passed through an empty asm in a register: without it GCC reassociates a tile's
  // chains of vpaddd (integer addition being associative), computes all the products of an input block (or a
  // depthwise output's tap pairs) first, parks them on the stack and adds them up in a tree, so that the loop
  // ran mostly stores and reloads (bench/REPORT.md, "int8 pointwise on vpmaddwd"). The direct, pointwise and
  // depthwise tiles call it; in madd itself it made the Winograd kernel 1-3% slower.
  static Acc madd_in_order(X x, W w, Acc acc) {
    Acc sum = madd(x, w, acc);
    __asm__("" : "+x"(sum));
    return sum;
  }

  // Pixel groups (conv_direct_impl.h) for the dense tiles' stride-1 pixels: a group is a pointer to 16 input
  // bytes (2 pixels of NCHW8c, 4 of NCHW4c), and the pair of lane L (bytes 2L, 2L + 1) comes from the 4-byte
  // word holding it, broadcast by vpbroadcastd from memory (a load only), with one vpshufb that picks the
  // pair and zero-extends it to words. broadcast_inputs' vpbroadcastw + vpmovzxbw takes two shuffles per
  // pair (and vpbroadcastw from memory a third operation); the shuffles share ports with the vpaddd after each
  // vpmaddwd. No register holds the group, so the tile keeps its accumulators in registers.
  static constexpr int kGroupElements = 16;
  using XG = const uint8_t*;
  static XG load_group(const uint8_t* p) { return p; }
  template <int L>
  static Acc madd_lane(XG g, W w, Acc acc) {
    int32_t quad;
    __builtin_memcpy(&quad, g + 4 * (L / 2), sizeof quad);
    // Bytes (0, 1) or (2, 3) of each 32-bit lane into its two words, the high bytes zero (index 0x80).
    const __m256i pick = _mm256_set1_epi32(L % 2 == 0 ? static_cast<int32_t>(0x80018000u)
                                                      : static_cast<int32_t>(0x80038002u));
    return madd_in_order(_mm256_shuffle_epi8(_mm256_set1_epi32(quad), pick), w, acc);
  }

  // Requantisation steps.
  static F to_float(Acc v) { return _mm256_cvtepi32_ps(v); }
  static F load_f(const float* p) { return _mm256_loadu_ps(p); }
  static void store_f(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F set1_f(float f) { return _mm256_set1_ps(f); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  // Nearest integer, halves to even: cvtps2dq rounds in the MXCSR mode, the default one, as the reference's
  // nearbyint does.
  static Acc round_to_int(F v) { return _mm256_cvtps_epi32(v); }
  static Acc load_u8(const uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // 8 int32 lanes holding values in [0, 255] stored as 8 bytes.
  static void store_u8(uint8_t* p, Acc v) {
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
  }
  // The same 8 lanes as two 4-byte halves (an output in blocks of 4); `hi` null: the upper half is padding,
  // neither stored nor read (zero).
  static void store_u8_halves(uint8_t* lo, uint8_t* hi, Acc v) {
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i bytes = _mm_packus_epi16(words, words);
    const int32_t low = _mm_cvtsi128_si32(bytes), high = _mm_extract_epi32(bytes, 1);
    __builtin_memcpy(lo, &low, sizeof low);
    if (hi) __builtin_memcpy(hi, &high, sizeof high);
  }
  static Acc load_u8_halves(const uint8_t* lo, const uint8_t* hi) {
    int32_t low, high = 0;
    __builtin_memcpy(&low, lo, sizeof low);
    if (hi) __builtin_memcpy(&high, hi, sizeof high);
    return _mm256_cvtepu8_epi32(_mm_set_epi32(0, 0, high, low));
  }

  // Packed requantisation (qconv_epilogue_impl.h, requantize_store_packed): 4 vectors of int32 become 32
  // bytes through two saturating packs, which interleave them by 128-bit lane; bytes_in_vector_order puts
  // each vector's 8 bytes back together (vector j's at bytes [8 j, 8 j + 8)).
  static Acc pack_i32_to_i16(Acc a, Acc b) { return _mm256_packs_epi32(a, b); }
  static Acc pack_i16_to_u8(Acc a, Acc b) { return _mm256_packus_epi16(a, b); }
  static Acc adds_i16(Acc a, Acc b) { return _mm256_adds_epi16(a, b); }
  static Acc set1_u8(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static Acc max_u8(Acc a, Acc b) { return _mm256_max_epu8(a, b); }
  static Acc min_u8(Acc a, Acc b) { return _mm256_min_epu8(a, b); }
  static Acc bytes_in_vector_order(Acc packed) {
    return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
  // The first n vectors' bytes (n * 8, n in [1, 4]).
  static void store_vectors_u8(uint8_t* p, Acc v, int n) {
    if (n == 4) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    const __m128i lo = _mm256_castsi256_si128(v);
    if (n >= 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(p), lo);
    if (n == 1) _mm_storel_epi64(reinterpret_cast<__m128i*>(p), lo);
    if (n == 3) _mm_storel_epi64(reinterpret_cast<__m128i*>(p + 16), _mm256_extracti128_si256(v, 1));
  }

  // Four pixels' requantised outputs, 32 bytes pixel after pixel (as store_vectors_u8 writes 4 vectors),
  // stored into plain NCHW: channel k's 4 consecutive pixels are one 32-bit store at y + k * plane, for the
  // first `channels` channels (a detection head's output, read by a DequantizeLinear and a Reshape). A byte
  // shuffle within each 128-bit half pairs the two pixels there channel by channel, an interleave of 16-bit
  // words joins the halves: 3 shuffles and up to 8 stores where storing byte by byte took 32 stores and an
  // address per byte.
  static void store_quad_channel_major(uint8_t* y, int64_t plane, const uint8_t* bytes, int64_t channels) {
    const __m256i pixels = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes));
    const __m256i pairs = _mm256_shuffle_epi8(
        pixels, _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9, 2, 10, 3, 11, 4,
                                 12, 5, 13, 6, 14, 7, 15));
    const __m128i lo = _mm256_castsi256_si128(pairs), hi = _mm256_extracti128_si256(pairs, 1);
    const __m128i c0123 = _mm_unpacklo_epi16(lo, hi), c4567 = _mm_unpackhi_epi16(lo, hi);
    int32_t words[8];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words), c0123);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words + 4), c4567);
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k)
      if (k < channels) __builtin_memcpy(y + k * plane, &words[k], 4);
  }

  // Depthwise (kernels/x86/qconv_depthwise_impl.h): each lane is one channel, so vpmaddwd's pair per lane is
  // two taps of that channel. Two pixels of 8 channels (the low 8 bytes of each argument) interleaved
  // channel by channel and zero-extended to 16 bits: [channel][pixel], the order of weights packed as int16
  // [channel][2 taps] (load_weights_i16; packed wide, so no sign extension in the inner loop).
  static X pixels_to_tap_pairs(__m128i first, __m128i second) {
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(first, second));
  }
  static __m128i load_pixel8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
  static X set1_i16(int16_t v) { return _mm256_set1_epi16(v); }
  static W load_weights_i16(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
};

// QVecAvx2's vpmaddwd on inputs already widened to int16 (kernels/x86/qconv_pointwise_wide_impl.h stages
// them chunk by chunk): a pair of input channels is then one vpbroadcastd from memory, a load with no
// shuffle, where QVecAvx2's groups take a vpshufb per pair on the ports the vpaddd after every vpmaddwd
// needs. Weights are QVecAvx2's (int8, sign-extended as loaded).
struct QVecAvx2Wide : QVecAvx2 {
  using In = int16_t;
  static constexpr int kGroupElements = 0;
  static X broadcast_inputs(const int16_t* p) {
    int32_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return _mm256_set1_epi32(pair);
  }
  // In order, as QVecAvx2's grouped tiles (madd_in_order).
  static Acc madd(X x, W w, Acc acc) { return madd_in_order(x, w, acc); }
  // n bytes zero-extended to int16.
  static void widen(const uint8_t* x, int16_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
    for (; i < n; ++i) y[i] = x[i];
  }
};

// The same accumulators with vpmaddubsw: 4 input channels per multiply-add, for weights whose pairs cannot
// saturate it. vpmaddubsw multiplies unsigned input bytes by signed weight bytes and adds adjacent pairs into
// int16 with saturation; vpmaddwd by ones then adds the pairs of pairs into the int32 lanes. A pair sum
// x0 w0 + x1 w1 with x in [0, 255] stays inside int16 whenever |w0| + |w1| <= 128 for same-sign weights
// (255 x 128 = 32640); opposite signs never overflow. 7-bit weights (|w| <= 64, ONNX Runtime's
// reduce_range, `ninegrid quantize --weight-bits 7`) always meet it; the op (ops/qconv_fast.cpp,
// vector_fits_w7) checks every pair of the packed weights and otherwise splits the pairs beyond the bound
// (QVecAvx2W7R below) or, when too many vectors would need it, uses the vpmaddwd policy above. Per 4 channels:
// a vpbroadcastd from memory (no widening), a raw 32-byte weight load, and two multiplies, where QVecAvx2
// takes two broadcasts, two widenings, two sign extensions and two multiplies.
struct QVecAvx2W7 : QVecAvx2 {
  static constexpr int kDepth = 4;
  static constexpr int kGroupElements = 0;  // no pixel groups: its broadcast is one load already
  using X = __m256i;  // 4 input bytes of one pixel, the same in every 32-bit lane
  using W = __m256i;  // 4 weight bytes of each of 8 output channels: [lane][kDepth]

  static X broadcast_inputs(const uint8_t* p) {
    int32_t quad;
    __builtin_memcpy(&quad, p, sizeof quad);
    return _mm256_set1_epi32(quad);
  }
  static W load_weights(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static Acc madd(X x, W w, Acc acc) {
    const __m256i pairs = _mm256_maddubs_epi16(x, w);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

// QVecAvx2W7 on any 8-bit weights: the op splits every pair beyond the bound into two halves that meet it,
// one packed with the other weights and one in a rest vector (qconv_kernels_x86.h, X86QRestVector), which
// the tiles add after their packed weights (conv_direct_impl.h, add_rest_vectors). Exact, at the cost of one
// more step per rest vector.
struct QVecAvx2W7R : QVecAvx2W7 {
  static constexpr bool kRest = true;
};

}  // namespace
}  // namespace ninegrid
