#include "kernels/ref/spatial_blocked_ref.h"

#include <cstring>

namespace ninegrid {

namespace {

template <class T>
void gather_pixels_blocked(int64_t in_h, int64_t in_w, const int64_t* row_source, int64_t out_h,
                           const int64_t* col_source, int64_t out_w, int64_t block, T fill, const T* x, T* y,
                           int64_t row_begin, int64_t row_end) {
  const int64_t B = block;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t ih = row_source[r % out_h];
    T* yr = y + r * out_w * B;
    if (ih < 0) {
      for (int64_t i = 0; i < out_w * B; ++i) yr[i] = fill;
      continue;
    }
    const T* xr = x + ((r / out_h) * in_h + ih) * in_w * B;
    for (int64_t ow = 0; ow < out_w;) {
      const int64_t iw = col_source[ow];
      if (iw < 0) {
        for (int64_t l = 0; l < B; ++l) yr[ow * B + l] = fill;
        ++ow;
        continue;
      }
      // The run of outputs whose sources are consecutive input pixels: one copy.
      int64_t run = 1;
      while (ow + run < out_w && col_source[ow + run] == iw + run) ++run;
      std::memcpy(yr + ow * B, xr + iw * B, static_cast<size_t>(run * B) * sizeof(T));
      ow += run;
    }
  }
}

}  // namespace

void gather_pixels_blocked_ref(int64_t in_h, int64_t in_w, const int64_t* row_source, int64_t out_h,
                               const int64_t* col_source, int64_t out_w, int64_t block, float fill, const float* x,
                               float* y, int64_t row_begin, int64_t row_end) {
  gather_pixels_blocked(in_h, in_w, row_source, out_h, col_source, out_w, block, fill, x, y, row_begin, row_end);
}

void gather_pixels_blocked_ref(int64_t in_h, int64_t in_w, const int64_t* row_source, int64_t out_h,
                               const int64_t* col_source, int64_t out_w, int64_t block, uint8_t fill, const uint8_t* x,
                               uint8_t* y, int64_t row_begin, int64_t row_end) {
  gather_pixels_blocked(in_h, in_w, row_source, out_h, col_source, out_w, block, fill, x, y, row_begin, row_end);
}

void crop_pixels_blocked_ref(int64_t in_h, int64_t in_w, int64_t top, int64_t left, int64_t out_h, int64_t out_w,
                             int64_t block, const float* x, float* y, int64_t row_begin, int64_t row_end) {
  const size_t row_bytes = static_cast<size_t>(out_w * block) * sizeof(float);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / out_h, ih = top + r % out_h;
    std::memcpy(y + r * out_w * block, x + ((plane * in_h + ih) * in_w + left) * block, row_bytes);
  }
}

}  // namespace ninegrid
