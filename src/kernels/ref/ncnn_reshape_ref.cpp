#include "kernels/ref/ncnn_reshape_ref.h"

#include <cstring>

namespace ninegrid {
namespace ref {

void ncnn_to_channel_last_ref(const float* src, int dims, int64_t c, int64_t h, int64_t w, float* dst) {
  if (dims == 2) {
    for (int64_t x = 0; x < w; ++x)
      for (int64_t y = 0; y < h; ++y) dst[x * h + y] = src[y * w + x];
  } else if (dims == 3) {
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t q = 0; q < c; ++q) dst[(y * w + x) * c + q] = src[(q * h + y) * w + x];
  } else {
    std::memcpy(dst, src, static_cast<size_t>(c * h * w) * sizeof(float));
  }
}

void ncnn_from_channel_last_ref(const float* src, int dims, int64_t c, int64_t h, int64_t w, float* dst) {
  if (dims == 2) {
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) dst[y * w + x] = src[x * h + y];
  } else if (dims == 3) {
    for (int64_t q = 0; q < c; ++q)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) dst[(q * h + y) * w + x] = src[(y * w + x) * c + q];
  } else {
    std::memcpy(dst, src, static_cast<size_t>(c * h * w) * sizeof(float));
  }
}

}  // namespace ref
}  // namespace ninegrid
