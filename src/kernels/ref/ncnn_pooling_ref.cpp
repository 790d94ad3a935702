#include "kernels/ref/ncnn_pooling_ref.h"

#include <cfloat>
#include <limits>

namespace ninegrid {
namespace ref {

namespace {

// SAME padding of one axis as ncnn computes it: the total makes the last window end at the input's end.
// ncnn can compute a negative total here (kernel < stride); it pads nothing then.
int64_t same_total_pad(int64_t size, int64_t kernel, int64_t stride) {
  int64_t pad = kernel + (size - 1) / stride * stride - size;
  return pad > 0 ? pad : 0;
}

}  // namespace

bool ncnn_pooling_geometry(const NcnnPoolingParams& p, int64_t h, int64_t w, NcnnPoolingGeometry* g) {
  *g = NcnnPoolingGeometry{};
  if (h <= 0 || w <= 0) return false;
  if (p.pad_mode == 0) {
    // C++ remainder semantics, as in ncnn (negative when the input is smaller than the kernel).
    const int64_t htail = (h + p.pad_top + p.pad_bottom - p.kernel_h) % p.stride_h;
    const int64_t wtail = (w + p.pad_left + p.pad_right - p.kernel_w) % p.stride_w;
    g->tail_h = htail != 0 ? p.stride_h - htail : 0;
    g->tail_w = wtail != 0 ? p.stride_w - wtail : 0;
    g->border_top = p.pad_top;
    g->border_left = p.pad_left;
    g->bordered_h = h + p.pad_top + p.pad_bottom + g->tail_h;
    g->bordered_w = w + p.pad_left + p.pad_right + g->tail_w;
  } else if (p.pad_mode == 1) {
    g->border_top = p.pad_top;
    g->border_left = p.pad_left;
    g->bordered_h = h + p.pad_top + p.pad_bottom;
    g->bordered_w = w + p.pad_left + p.pad_right;
  } else {
    const int64_t hpad = same_total_pad(h, p.kernel_h, p.stride_h);
    const int64_t wpad = same_total_pad(w, p.kernel_w, p.stride_w);
    const bool upper = p.pad_mode == 2;
    g->border_top = upper ? hpad / 2 : hpad - hpad / 2;
    g->border_left = upper ? wpad / 2 : wpad - wpad / 2;
    g->bordered_h = h + hpad;
    g->bordered_w = w + wpad;
  }
  if (g->bordered_h < p.kernel_h || g->bordered_w < p.kernel_w) return false;
  g->out_h = (g->bordered_h - p.kernel_h) / p.stride_h + 1;
  g->out_w = (g->bordered_w - p.kernel_w) / p.stride_w + 1;
  return true;
}

void ncnn_pooling_plane_ref(const float* in, int64_t h, int64_t w, float* out, const NcnnPoolingParams& p,
                            const NcnnPoolingGeometry& g) {
  const bool is_max = p.pooling_type == 0;
  const float pad_value = is_max ? -FLT_MAX : 0.f;
  // The bordered plane, read without materialising it.
  auto at = [&](int64_t y, int64_t x) {
    const int64_t iy = y - g.border_top, ix = x - g.border_left;
    return (iy >= 0 && iy < h && ix >= 0 && ix < w) ? in[iy * w + ix] : pad_value;
  };
  // Average pooling without the padding counts only this region of the bordered plane.
  const int64_t valid_y_end = g.bordered_h - p.pad_bottom - g.tail_h;
  const int64_t valid_x_end = g.bordered_w - p.pad_right - g.tail_w;
  const float window = static_cast<float>(p.kernel_h * p.kernel_w);

  for (int64_t oy = 0; oy < g.out_h; ++oy) {
    const int64_t sy0 = oy * p.stride_h;
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const int64_t sx0 = ox * p.stride_w;
      float result;
      if (is_max) {
        float m = at(sy0, sx0);
        for (int64_t ky = 0; ky < p.kernel_h; ++ky)
          for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
            const float v = at(sy0 + ky, sx0 + kx);
            m = (m < v) ? v : m;  // std::max's comparison, as ncnn uses
          }
        result = m;
      } else if (p.count_include_pad) {
        float sum = 0.f;
        for (int64_t ky = 0; ky < p.kernel_h; ++ky)
          for (int64_t kx = 0; kx < p.kernel_w; ++kx) sum += at(sy0 + ky, sx0 + kx);
        result = sum / window;
      } else {
        float sum = 0.f;
        int64_t area = 0;
        for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
          const int64_t sy = sy0 + ky;
          if (sy < p.pad_top) continue;
          if (sy >= valid_y_end) break;
          for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
            const int64_t sx = sx0 + kx;
            if (sx < p.pad_left) continue;
            if (sx >= valid_x_end) break;
            sum += at(sy, sx);
            ++area;
          }
        }
        // A window entirely in padding: ncnn divides 0 by 0.
        result = area > 0 ? sum / static_cast<float>(area) : std::numeric_limits<float>::quiet_NaN();
      }
      out[oy * g.out_w + ox] = result;
    }
  }
}

}  // namespace ref
}  // namespace ninegrid
