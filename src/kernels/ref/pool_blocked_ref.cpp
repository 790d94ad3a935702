// The windows are resolved once per call (one per output row and per output column); each output pixel
// then runs its taps in the order pool_ref.cpp does (rows, then columns), every tap a loop over the B
// lanes of one input pixel. Lane counts 4, 8 and 16 are compiled with a fixed count, so the lane loop
// becomes a few vector instructions and the accumulator stays in registers.
#include "kernels/ref/pool_blocked_ref.h"

#include <limits>
#include <vector>

#include "kernels/ref/blocked_lanes.h"
#include "kernels/ref/window.h"

namespace ninegrid {

namespace {

// For the max, the output row itself is the accumulator: each pixel starts from its first tap, then
// every tap (kh, kw) sweeps the pixels it is valid for. Taps outside, pixels inside: consecutive
// updates touch different pixels, and the select vectorises as a loop (GCC does not vectorise the
// IEEE select of a per-pixel register accumulator, which would need -ffinite-math-only). Each pixel
// still sees its taps in max_pool_ref's order, which decides NaN and signed-zero ties.
// kLanes > 0: the block, known at compile time; 0: the block is `block`, known at run time.
template <int64_t kLanes, class T>
void max_rows(const PoolParams& p, const std::vector<PoolAxisWindow>& rows, const std::vector<PoolAxisWindow>& cols,
              const std::vector<int64_t>& col_range, int64_t block, const T* x, T* y, int64_t row_begin,
              int64_t row_end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t in_w = p.in[2], out_h = p.out[1], out_w = p.out[2];
  const int64_t in_plane = p.in[1] * in_w * B, dh = p.dilation[1], dw = p.dilation[2], sw = p.stride[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* xp = x + (r / out_h) * in_plane;
    T* __restrict yr = y + r * out_w * B;
    const PoolAxisWindow& wh = rows[r % out_h];
    // Start each pixel from its first tap (lowest() for a window without input).
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const PoolAxisWindow& ww = cols[ow];
      T* __restrict out = yr + ow * B;
      if (wh.k_begin >= wh.k_end || ww.k_begin >= ww.k_end) {
        for (int64_t l = 0; l < B; ++l) out[l] = std::numeric_limits<T>::lowest();
        continue;
      }
      const T* __restrict first = xp + ((wh.start + wh.k_begin * dh) * in_w + ww.start + ww.k_begin * dw) * B;
      for (int64_t l = 0; l < B; ++l) out[l] = first[l];
    }
    // Every tap; the first again compares equal and changes nothing (a NaN there stays, as in max_pool_ref).
    for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
      const T* xr = xp + (wh.start + kh * dh) * in_w * B;
      for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
        // Pixels ow in [col_range[2kw], col_range[2kw+1]) read column ow * sw - pad + kw * dw inside the row.
        const int64_t offset = kw * dw - p.pad_begin[2];
        for (int64_t ow = col_range[2 * kw]; ow < col_range[2 * kw + 1]; ++ow) {
          const T* __restrict v = xr + (ow * sw + offset) * B;
          T* __restrict out = yr + ow * B;
#pragma GCC ivdep
          for (int64_t l = 0; l < B; ++l) out[l] = v[l] > out[l] ? v[l] : out[l];
        }
      }
    }
  }
}

template <int64_t kLanes>
void average_rows(const PoolParams& p, bool count_include_pad, const std::vector<PoolAxisWindow>& rows,
                  const std::vector<PoolAxisWindow>& cols, int64_t block, const float* x, float* y, int64_t row_begin,
                  int64_t row_end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t in_w = p.in[2], out_h = p.out[1], out_w = p.out[2];
  const int64_t in_plane = p.in[1] * in_w * B, dh = p.dilation[1], dw = p.dilation[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* xp = x + (r / out_h) * in_plane;
    float* yr = y + r * out_w * B;
    const PoolAxisWindow& wh = rows[r % out_h];
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const PoolAxisWindow& ww = cols[ow];
      float* __restrict out = yr + ow * B;
      float acc[kLanes > 0 ? kLanes : kMaxBlockLanes];
      for (int64_t l = 0; l < B; ++l) acc[l] = 0.f;
      for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
        const float* xr = xp + (wh.start + kh * dh) * in_w * B;
        for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw) {
          const float* __restrict v = xr + (ww.start + kw * dw) * B;
#pragma GCC ivdep
          for (int64_t l = 0; l < B; ++l) acc[l] += v[l];
        }
      }
      const int64_t inside = (wh.k_end - wh.k_begin) * (ww.k_end - ww.k_begin);
      const int64_t count = count_include_pad ? wh.counted * ww.counted : inside;
      if (count > 0) {
        const float divisor = static_cast<float>(count);
        for (int64_t l = 0; l < B; ++l) out[l] = acc[l] / divisor;
      } else {
        for (int64_t l = 0; l < B; ++l) out[l] = 0.f;
      }
    }
  }
}

template <int64_t kLanes>
void global_average_planes(int64_t plane_size, int64_t block, const float* x, float* y, int64_t begin, int64_t end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  for (int64_t bp = begin; bp < end; ++bp) {
    const float* xp = x + bp * plane_size * B;
    double sum[kLanes > 0 ? kLanes : kMaxBlockLanes];  // double as global_average_pool_ref
    for (int64_t l = 0; l < B; ++l) sum[l] = 0.0;
    for (int64_t i = 0; i < plane_size; ++i) {
      const float* __restrict v = xp + i * B;
#pragma GCC ivdep
      for (int64_t l = 0; l < B; ++l) sum[l] += v[l];
    }
    for (int64_t l = 0; l < B; ++l)
      y[bp * B + l] = plane_size > 0 ? static_cast<float>(sum[l] / static_cast<double>(plane_size)) : 0.f;
  }
}

template <int64_t kLanes, class T>
void global_max_planes(int64_t plane_size, int64_t block, const T* x, T* y, int64_t begin, int64_t end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  for (int64_t bp = begin; bp < end; ++bp) {
    const T* xp = x + bp * plane_size * B;
    T best[kLanes > 0 ? kLanes : kMaxBlockLanes];
    for (int64_t l = 0; l < B; ++l) best[l] = plane_size > 0 ? xp[l] : std::numeric_limits<T>::lowest();
    for (int64_t i = 1; i < plane_size; ++i) {
      const T* __restrict v = xp + i * B;
#pragma GCC ivdep
      for (int64_t l = 0; l < B; ++l) best[l] = v[l] > best[l] ? v[l] : best[l];
    }
    for (int64_t l = 0; l < B; ++l) y[bp * B + l] = best[l];
  }
}

}  // namespace

namespace {

template <class T>
void max_pool_blocked(const PoolParams& p, int64_t block, const T* x, T* y, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  const std::vector<PoolAxisWindow> rows = pool_axis_windows(p, 1), cols = pool_axis_windows(p, 2);
  // Per column tap kw, the output columns for which it reads inside the input.
  std::vector<int64_t> col_range(static_cast<size_t>(2 * p.kernel[2]));
  for (int64_t kw = 0; kw < p.kernel[2]; ++kw)
    valid_output_range(kw * p.dilation[2] - p.pad_begin[2], p.stride[2], p.in[2], p.out[2], &col_range[2 * kw],
                       &col_range[2 * kw + 1]);
  NINEGRID_DISPATCH_LANES(block, max_rows, p, rows, cols, col_range, block, x, y, row_begin, row_end)
}

}  // namespace

void max_pool_blocked_ref(const PoolParams& p, int64_t block, const float* x, float* y, int64_t row_begin,
                          int64_t row_end) {
  max_pool_blocked(p, block, x, y, row_begin, row_end);
}
void max_pool_blocked_ref(const PoolParams& p, int64_t block, const uint8_t* x, uint8_t* y, int64_t row_begin,
                          int64_t row_end) {
  max_pool_blocked(p, block, x, y, row_begin, row_end);
}
void max_pool_blocked_ref(const PoolParams& p, int64_t block, const int8_t* x, int8_t* y, int64_t row_begin,
                          int64_t row_end) {
  max_pool_blocked(p, block, x, y, row_begin, row_end);
}

void average_pool_blocked_ref(const PoolParams& p, bool count_include_pad, int64_t block, const float* x, float* y,
                              int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  const std::vector<PoolAxisWindow> rows = pool_axis_windows(p, 1), cols = pool_axis_windows(p, 2);
  NINEGRID_DISPATCH_LANES(block, average_rows, p, count_include_pad, rows, cols, block, x, y, row_begin, row_end)
}

void global_average_pool_blocked_ref(int64_t plane_size, int64_t block, const float* x, float* y, int64_t begin,
                                     int64_t end) {
  NINEGRID_DISPATCH_LANES(block, global_average_planes, plane_size, block, x, y, begin, end)
}

void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const float* x, float* y, int64_t begin,
                                 int64_t end) {
  NINEGRID_DISPATCH_LANES(block, global_max_planes, plane_size, block, x, y, begin, end)
}
void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const uint8_t* x, uint8_t* y, int64_t begin,
                                 int64_t end) {
  NINEGRID_DISPATCH_LANES(block, global_max_planes, plane_size, block, x, y, begin, end)
}
void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const int8_t* x, int8_t* y, int64_t begin,
                                 int64_t end) {
  NINEGRID_DISPATCH_LANES(block, global_max_planes, plane_size, block, x, y, begin, end)
}

}  // namespace ninegrid
