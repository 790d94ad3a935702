// The windows are resolved once per call; each output pixel sums its taps inside the input over its B
// lanes (int64, as qpool_ref.cpp: no window can overflow it), then requantises each lane. The global mean
// sums whole planes in 16-bit runs (see qglobal_average_planes).
#include "kernels/ref/qpool_blocked_ref.h"

#include <vector>

#include "kernels/ref/blocked_lanes.h"

namespace ninegrid {

namespace {

template <int64_t kLanes>
void qaverage_rows(const PoolParams& p, bool count_include_pad, const QuantizedAverage& q,
                   const std::vector<PoolAxisWindow>& rows, const std::vector<PoolAxisWindow>& cols, int64_t block,
                   const uint8_t* x, uint8_t* y, int64_t row_begin, int64_t row_end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t in_w = p.in[2], out_h = p.out[1], out_w = p.out[2];
  const int64_t in_plane = p.in[1] * in_w * B, dh = p.dilation[1], dw = p.dilation[2];
  const int64_t zp = q.in_zero_point;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* xp = x + (r / out_h) * in_plane;
    uint8_t* yr = y + r * out_w * B;
    const PoolAxisWindow& wh = rows[r % out_h];
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const PoolAxisWindow& ww = cols[ow];
      int64_t acc[kLanes > 0 ? kLanes : kMaxBlockLanes];
      for (int64_t l = 0; l < B; ++l) acc[l] = 0;
      for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
        const uint8_t* xr = xp + (wh.start + kh * dh) * in_w * B;
        for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw) {
          const uint8_t* v = xr + (ww.start + kw * dw) * B;
          for (int64_t l = 0; l < B; ++l) acc[l] += static_cast<int64_t>(v[l]) - zp;
        }
      }
      const int64_t inside = (wh.k_end - wh.k_begin) * (ww.k_end - ww.k_begin);
      const int64_t count = count_include_pad ? wh.counted * ww.counted : inside;
      uint8_t* out = yr + ow * B;
      for (int64_t l = 0; l < B; ++l) out[l] = count > 0 ? q(acc[l], count) : q(0, 1);
    }
  }
}

// The raw bytes are summed in 16-bit lanes over runs of kRunPixels pixels (257 x 255 = 65535: exact),
// each run's sums added into int64, and the zero point subtracted once per plane (plane_size x zp): the same
// integers as qpool_ref.cpp's, in steps the compiler turns into a few byte-to-word vector adds per pixel.
constexpr int64_t kRunPixels = 257;

template <int64_t kLanes>
void qglobal_average_planes(int64_t plane_size, const QuantizedAverage& q, int64_t block, const uint8_t* x,
                            uint8_t* y, int64_t begin, int64_t end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t zp = q.in_zero_point;
  for (int64_t bp = begin; bp < end; ++bp) {
    const uint8_t* xp = x + bp * plane_size * B;
    int64_t acc[kLanes > 0 ? kLanes : kMaxBlockLanes];
    for (int64_t l = 0; l < B; ++l) acc[l] = 0;
    for (int64_t i0 = 0; i0 < plane_size; i0 += kRunPixels) {
      const int64_t n = plane_size - i0 < kRunPixels ? plane_size - i0 : kRunPixels;
      uint16_t run[kLanes > 0 ? kLanes : kMaxBlockLanes];
      for (int64_t l = 0; l < B; ++l) run[l] = 0;
      for (int64_t i = i0; i < i0 + n; ++i)
        for (int64_t l = 0; l < B; ++l) run[l] = static_cast<uint16_t>(run[l] + xp[i * B + l]);
      for (int64_t l = 0; l < B; ++l) acc[l] += run[l];
    }
    for (int64_t l = 0; l < B; ++l) y[bp * B + l] = plane_size > 0 ? q(acc[l] - zp * plane_size, plane_size) : q(0, 1);
  }
}

}  // namespace

void qaverage_pool_blocked_ref(const PoolParams& p, bool count_include_pad, const QuantizedAverage& q,
                               int64_t block, const uint8_t* x, uint8_t* y, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  const std::vector<PoolAxisWindow> rows = pool_axis_windows(p, 1), cols = pool_axis_windows(p, 2);
  NINEGRID_DISPATCH_LANES(block, qaverage_rows, p, count_include_pad, q, rows, cols, block, x, y, row_begin, row_end)
}

void qglobal_average_pool_blocked_ref(int64_t plane_size, const QuantizedAverage& q, int64_t block,
                                      const uint8_t* x, uint8_t* y, int64_t begin, int64_t end) {
  NINEGRID_DISPATCH_LANES(block, qglobal_average_planes, plane_size, q, block, x, y, begin, end)
}

}  // namespace ninegrid
