// Each output pixel visits its window directly. Per axis, the taps that read inside the input form one
// contiguous range of k (valid_output_range with k as the "output"), so padding is skipped, never read.
#include "kernels/ref/pool_ref.h"

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/window.h"

namespace ninegrid {

namespace {

// Calls fn(output offset, window along d, h, w) for every output pixel of a plane.
// Every output's window along each axis, computed once per call rather than once per output pixel.
struct PlaneWindows {
  std::vector<PoolAxisWindow> axis[3];
  explicit PlaneWindows(const PoolParams& p) {
    for (int a = 0; a < 3; ++a) axis[a] = pool_axis_windows(p, a);
  }
};

template <class Fn>
void for_each_window(const PoolParams& p, const PlaneWindows& win, Fn fn) {
  for (int64_t od = 0; od < p.out[0]; ++od)
    for (int64_t oh = 0; oh < p.out[1]; ++oh)
      for (int64_t ow = 0; ow < p.out[2]; ++ow)
        fn((od * p.out[1] + oh) * p.out[2] + ow, win.axis[0][od], win.axis[1][oh], win.axis[2][ow]);
}

// max_pool_ref without indices: the same comparisons in the same order, with the windows precomputed
// and the width taps contiguous when the dilation is 1 (BlazeFace's 2x2 pools spent their time in the
// general path; measured: bench/REPORT.md, "Design decisions and their measurements").
// 2-D, 2x2 window, stride 2, no padding, no dilation (the common downsampling pool): whole windows only,
// the same comparison order as below, written so the compiler vectorises across the row.
template <class T>
bool max_pool_2x2s2(const PoolParams& p, const T* x, T* y, int64_t plane_begin, int64_t plane_end) {
  if (p.in[0] != 1 || p.kernel[1] != 2 || p.kernel[2] != 2 || p.stride[1] != 2 || p.stride[2] != 2 ||
      p.dilation[1] != 1 || p.dilation[2] != 1 || p.pad_begin[1] != 0 || p.pad_begin[2] != 0 ||
      2 * p.out[1] > p.in[1] || 2 * p.out[2] > p.in[2])
    return false;
  const int64_t in_w = p.in[2];
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const T* xp = x + plane * p.in_plane();
    T* yp = y + plane * p.out_plane();
    for (int64_t oh = 0; oh < p.out[1]; ++oh, yp += p.out[2]) {
      const T* r0 = xp + 2 * oh * in_w;
      const T* r1 = r0 + in_w;
      for (int64_t ow = 0; ow < p.out[2]; ++ow) {
        T best = r0[2 * ow];
        best = r0[2 * ow + 1] > best ? r0[2 * ow + 1] : best;
        best = r1[2 * ow] > best ? r1[2 * ow] : best;
        best = r1[2 * ow + 1] > best ? r1[2 * ow + 1] : best;
        yp[ow] = best;
      }
    }
  }
  return true;
}

template <class T>
void max_pool_values(const PoolParams& p, const T* x, T* y, int64_t plane_begin, int64_t plane_end) {
  if (max_pool_2x2s2(p, x, y, plane_begin, plane_end)) return;
  const PlaneWindows win(p);
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  const bool unit_w = p.dilation[2] == 1;
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const T* xp = x + plane * in_plane;
    T* yp = y + plane * out_plane;
    for (int64_t od = 0; od < p.out[0]; ++od) {
      const PoolAxisWindow& wd = win.axis[0][od];
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        const PoolAxisWindow& wh = win.axis[1][oh];
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++yp) {
          const PoolAxisWindow& ww = win.axis[2][ow];
          if (wd.k_begin >= wd.k_end || wh.k_begin >= wh.k_end || ww.k_begin >= ww.k_end) {
            *yp = std::numeric_limits<T>::lowest();
            continue;
          }
          // Start from the window's first value and keep the larger (v > best: a NaN never replaces
          // and is never replaced, as in max_pool_ref). Select, not branch: on real data the
          // comparison is unpredictable, and mispredictions cost most of the time otherwise.
          const int64_t dil_w = p.dilation[2];
          T best = xp[((wd.start + wd.k_begin * p.dilation[0]) * p.in[1] + wh.start + wh.k_begin * p.dilation[1]) *
                          p.in[2] + ww.start + ww.k_begin * dil_w];
          for (int64_t kd = wd.k_begin; kd < wd.k_end; ++kd) {
            const int64_t id = wd.start + kd * p.dilation[0];
            for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
              const T* row = xp + (id * p.in[1] + wh.start + kh * p.dilation[1]) * p.in[2] + ww.start;
              if (unit_w) {
                for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw) best = row[kw] > best ? row[kw] : best;
              } else {
                for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw)
                  best = row[kw * dil_w] > best ? row[kw * dil_w] : best;
              }
            }
          }
          *yp = best;
        }
      }
    }
  }
}

}  // namespace

std::vector<PoolAxisWindow> pool_axis_windows(const PoolParams& p, int axis) {
  std::vector<PoolAxisWindow> windows(static_cast<size_t>(p.out[axis]));
  for (int64_t o = 0; o < p.out[axis]; ++o) {
    PoolAxisWindow& w = windows[static_cast<size_t>(o)];
    w.start = o * p.stride[axis] - p.pad_begin[axis];
    valid_output_range(w.start, p.dilation[axis], p.in[axis], p.kernel[axis], &w.k_begin, &w.k_end);
    int64_t b, e;
    valid_output_range(w.start + p.pad_begin[axis], p.dilation[axis], p.in[axis] + p.pad_begin[axis] + p.pad_end[axis],
                       p.kernel[axis], &b, &e);
    w.counted = e - b;
  }
  return windows;
}

template <class T>
void max_pool_ref(const PoolParams& p, const T* x, T* y, int64_t* indices, bool column_major, int64_t plane_begin,
                  int64_t plane_end) {
  if (!indices) return max_pool_values(p, x, y, plane_begin, plane_end);
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  const PlaneWindows win(p);
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const T* xp = x + plane * in_plane;
    T* yp = y + plane * out_plane;
    int64_t* ip = indices ? indices + plane * out_plane : nullptr;
    for_each_window(p, win, [&](int64_t o, const PoolAxisWindow& wd, const PoolAxisWindow& wh, const PoolAxisWindow& ww) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_d = -1, best_h = -1, best_w = -1;
      for (int64_t kd = wd.k_begin; kd < wd.k_end; ++kd) {
        const int64_t id = wd.start + kd * p.dilation[0];
        for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
          const int64_t ih = wh.start + kh * p.dilation[1];
          for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw) {
            const int64_t iw = ww.start + kw * p.dilation[2];
            const T v = xp[(id * p.in[1] + ih) * p.in[2] + iw];
            if (best_d < 0 || v > best) best = v, best_d = id, best_h = ih, best_w = iw;
          }
        }
      }
      yp[o] = best;
      if (ip) {
        if (best_d < 0) ip[o] = -1;
        else if (column_major) ip[o] = plane * in_plane + best_d + p.in[0] * (best_h + p.in[1] * best_w);
        else ip[o] = plane * in_plane + (best_d * p.in[1] + best_h) * p.in[2] + best_w;
      }
    });
  }
}

template void max_pool_ref<float>(const PoolParams&, const float*, float*, int64_t*, bool, int64_t, int64_t);
template void max_pool_ref<uint8_t>(const PoolParams&, const uint8_t*, uint8_t*, int64_t*, bool, int64_t, int64_t);
template void max_pool_ref<int8_t>(const PoolParams&, const int8_t*, int8_t*, int64_t*, bool, int64_t, int64_t);

void average_pool_ref(const PoolParams& p, bool count_include_pad, const float* x, float* y, int64_t plane_begin,
                      int64_t plane_end) {
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  const PlaneWindows win(p);
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const float* xp = x + plane * in_plane;
    float* yp = y + plane * out_plane;
    for_each_window(p, win, [&](int64_t o, const PoolAxisWindow& wd, const PoolAxisWindow& wh, const PoolAxisWindow& ww) {
      float sum = 0.f;
      for (int64_t kd = wd.k_begin; kd < wd.k_end; ++kd) {
        const int64_t id = wd.start + kd * p.dilation[0];
        for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
          const int64_t ih = wh.start + kh * p.dilation[1];
          for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw)
            sum += xp[(id * p.in[1] + ih) * p.in[2] + ww.start + kw * p.dilation[2]];
        }
      }
      const int64_t inside = (wd.k_end - wd.k_begin) * (wh.k_end - wh.k_begin) * (ww.k_end - ww.k_begin);
      const int64_t count = count_include_pad ? wd.counted * wh.counted * ww.counted : inside;
      yp[o] = count > 0 ? sum / static_cast<float>(count) : 0.f;
    });
  }
}

void lp_pool_ref(const PoolParams& p, float norm_p, const float* x, float* y, int64_t plane_begin, int64_t plane_end) {
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  const PlaneWindows win(p);
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const float* xp = x + plane * in_plane;
    float* yp = y + plane * out_plane;
    for_each_window(p, win, [&](int64_t o, const PoolAxisWindow& wd, const PoolAxisWindow& wh, const PoolAxisWindow& ww) {
      float sum = 0.f;
      for (int64_t kd = wd.k_begin; kd < wd.k_end; ++kd) {
        const int64_t id = wd.start + kd * p.dilation[0];
        for (int64_t kh = wh.k_begin; kh < wh.k_end; ++kh) {
          const int64_t ih = wh.start + kh * p.dilation[1];
          for (int64_t kw = ww.k_begin; kw < ww.k_end; ++kw)
            sum += std::pow(std::fabs(xp[(id * p.in[1] + ih) * p.in[2] + ww.start + kw * p.dilation[2]]), norm_p);
        }
      }
      yp[o] = std::pow(sum, 1.f / norm_p);
    });
  }
}

void global_average_pool_ref(int64_t plane_size, const float* x, float* y, int64_t plane_begin, int64_t plane_end) {
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const float* xp = x + plane * plane_size;
    double sum = 0.0;  // planes can be large: keep the sum exact enough
    for (int64_t i = 0; i < plane_size; ++i) sum += xp[i];
    y[plane] = plane_size > 0 ? static_cast<float>(sum / static_cast<double>(plane_size)) : 0.f;
  }
}

template <class T>
void global_max_pool_ref(int64_t plane_size, const T* x, T* y, int64_t plane_begin, int64_t plane_end) {
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const T* xp = x + plane * plane_size;
    T best = std::numeric_limits<T>::lowest();
    for (int64_t i = 0; i < plane_size; ++i)
      if (i == 0 || xp[i] > best) best = xp[i];
    y[plane] = best;
  }
}

template void global_max_pool_ref<float>(int64_t, const float*, float*, int64_t, int64_t);
template void global_max_pool_ref<uint8_t>(int64_t, const uint8_t*, uint8_t*, int64_t, int64_t);
template void global_max_pool_ref<int8_t>(int64_t, const int8_t*, int8_t*, int64_t, int64_t);

}  // namespace ninegrid
