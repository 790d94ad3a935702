// NCHW <-> NCHW[P]c for a vector type V: P x P tiles (P channels x P pixels) moved through registers and
// transposed, the last plane % P pixels element by element. Include only from ISA files.
#pragma once

#include <cstdint>

namespace ninegrid {
namespace {

// `channels` need not be a multiple of P: the last block's lanes past it are written as zeros (a
// depthwise conv's input restaged into whole vectors).
template <class V>
void nchw_to_blocked(const float* src, float* dst, int64_t channels, int64_t plane, int64_t block_begin,
                     int64_t block_end) {
  constexpr int P = V::kLanes;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const float* s = src + b * P * plane;  // P channel planes
    float* d = dst + b * P * plane;        // plane pixels of P channels
    const int64_t real = channels - b * P < P ? channels - b * P : P;
    int64_t p = 0;
    for (; p + P <= plane; p += P) {
      typename V::T r[P];
      for (int j = 0; j < P; ++j) r[j] = j < real ? V::load(s + j * plane + p) : V::zero();
      V::transpose(r);
      for (int i = 0; i < P; ++i) V::store(d + (p + i) * P, r[i]);
    }
    for (; p < plane; ++p)
      for (int j = 0; j < P; ++j) d[p * P + j] = j < real ? s[j * plane + p] : 0.f;
  }
}

template <class V>
void blocked_to_nchw(const float* src, float* dst, int64_t plane, int64_t block_begin, int64_t block_end) {
  constexpr int P = V::kLanes;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const float* s = src + b * P * plane;
    float* d = dst + b * P * plane;
    int64_t p = 0;
    for (; p + P <= plane; p += P) {
      typename V::T r[P];
      for (int i = 0; i < P; ++i) r[i] = V::load(s + (p + i) * P);
      V::transpose(r);
      for (int j = 0; j < P; ++j) V::store(d + j * plane + p, r[j]);
    }
    for (; p < plane; ++p)
      for (int j = 0; j < P; ++j) d[j * plane + p] = s[p * P + j];
  }
}

}  // namespace
}  // namespace ninegrid
