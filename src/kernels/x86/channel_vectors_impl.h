// Loads and stores of L = V::kLanes consecutive channels of one pixel in an NCHW[B]c tensor (B = 1, 8 or
// 16, any with either vector width), shared by the Winograd and indirect conv kernels: one vector access
// when the block holds the L channels, two half accesses (AVX-512 on blocks of 8), or a lane-by-lane
// gather/scatter for plain NCHW. Channels past `channels` read as zero and are never written.
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"

namespace ninegrid {
namespace {

// L channels [c0, c0 + L) of pixel `pixel` in an NCHW[B]c image with `channels` channels and `plane`
// pixels per channel; channels past `channels` read as zero. c0 is a multiple of L.
template <class V, int B>
inline typename V::T load_channels(const float* image, int64_t channels, int64_t plane, int64_t c0,
                                   int64_t pixel) {
  constexpr int L = V::kLanes;
  if constexpr (B >= L) {
    return V::load(image + ((c0 / B) * plane + pixel) * B + c0 % B);
  } else if constexpr (B == 8) {  // L == 16: two blocks of 8
    const float* lo = image + ((c0 / 8) * plane + pixel) * 8;
    return V::load_halves(lo, c0 + 8 < channels ? lo + plane * 8 : nullptr);
  } else {  // plain NCHW
    alignas(64) float lanes[L];
    const int64_t real = imin(L, channels - c0);
    for (int j = 0; j < L; ++j) lanes[j] = j < real ? image[(c0 + j) * plane + pixel] : 0.f;
    return V::load(lanes);
  }
}

// Stores the real channels of an L-channel vector at pixel `pixel` (layout as load_channels).
template <class V, int B>
inline void store_channels(float* image, int64_t channels, int64_t plane, int64_t c0, int64_t pixel,
                           typename V::T v) {
  constexpr int L = V::kLanes;
  if constexpr (B >= L) {
    V::store(image + ((c0 / B) * plane + pixel) * B + c0 % B, v);
  } else if constexpr (B == 8) {  // L == 16
    float* lo = image + ((c0 / 8) * plane + pixel) * 8;
    V::store_halves(lo, c0 + 8 < channels ? lo + plane * 8 : nullptr, v);
  } else {
    alignas(64) float lanes[L];
    V::store(lanes, v);
    const int64_t real = imin(L, channels - c0);
    for (int j = 0; j < real; ++j) image[(c0 + j) * plane + pixel] = lanes[j];
  }
}

}  // namespace
}  // namespace ninegrid
