#include "kernels/ref/qpool_ref.h"

#include <vector>

namespace ninegrid {

void qaverage_pool_ref(const PoolParams& p, bool count_include_pad, const QuantizedAverage& q, const uint8_t* x,
                       uint8_t* y, int64_t plane_begin, int64_t plane_end) {
  const std::vector<PoolAxisWindow> wd = pool_axis_windows(p, 0), wh = pool_axis_windows(p, 1),
                                    ww = pool_axis_windows(p, 2);
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    const uint8_t* xp = x + plane * in_plane;
    uint8_t* yp = y + plane * out_plane;
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh)
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          const PoolAxisWindow &d = wd[od], &h = wh[oh], &w = ww[ow];
          int64_t acc = 0;
          for (int64_t kd = d.k_begin; kd < d.k_end; ++kd)
            for (int64_t kh = h.k_begin; kh < h.k_end; ++kh)
              for (int64_t kw = w.k_begin; kw < w.k_end; ++kw) {
                const int64_t id = d.start + kd * p.dilation[0], ih = h.start + kh * p.dilation[1],
                              iw = w.start + kw * p.dilation[2];
                acc += static_cast<int32_t>(xp[(id * p.in[1] + ih) * p.in[2] + iw]) - q.in_zero_point;
              }
          const int64_t inside = (d.k_end - d.k_begin) * (h.k_end - h.k_begin) * (w.k_end - w.k_begin);
          const int64_t count = count_include_pad ? d.counted * h.counted * w.counted : inside;
          yp[(od * p.out[1] + oh) * p.out[2] + ow] = count > 0 ? q(acc, count) : q(0, 1);
        }
  }
}

void qglobal_average_pool_ref(int64_t plane_size, const QuantizedAverage& q, const uint8_t* x, uint8_t* y,
                              int64_t plane_begin, int64_t plane_end) {
  for (int64_t plane = plane_begin; plane < plane_end; ++plane) {
    int64_t acc = 0;
    for (int64_t i = 0; i < plane_size; ++i) acc += static_cast<int32_t>(x[plane * plane_size + i]) - q.in_zero_point;
    y[plane] = plane_size > 0 ? q(acc, plane_size) : q(0, 1);
  }
}

}  // namespace ninegrid
