#include "kernels/ref/ncnn_interp_ref.h"

#include <algorithm>
#include <cmath>

namespace ninegrid {
namespace ref {

namespace {

// ncnn's source coordinate of output index d (half-pixel centres, or corners aligned).
float source_coord(int64_t d, double scale, bool align_corner) {
  return align_corner ? static_cast<float>(d * scale) : static_cast<float>((d + 0.5) * scale - 0.5);
}

double coord_scale(int64_t in_size, int64_t out_size, bool align_corner) {
  if (!align_corner) return static_cast<double>(in_size) / static_cast<double>(out_size);
  return out_size > 1 ? static_cast<double>(in_size - 1) / static_cast<double>(out_size - 1) : 0.0;
}

int64_t clamp_index(int64_t i, int64_t size) { return std::min(std::max<int64_t>(i, 0), size - 1); }

void cubic_weights(float fx, float* c) {
  const float A = -0.75f;
  const float fx0 = fx + 1;
  const float fx1 = fx;
  const float fx2 = 1 - fx;
  c[0] = A * fx0 * fx0 * fx0 - 5 * A * fx0 * fx0 + 8 * A * fx0 - 4 * A;
  c[1] = (A + 2) * fx1 * fx1 * fx1 - (A + 3) * fx1 * fx1 + 1;
  c[2] = (A + 2) * fx2 * fx2 * fx2 - (A + 3) * fx2 * fx2 + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

}  // namespace

InterpTaps ncnn_linear_taps(int64_t in_size, int64_t out_size, bool align_corner) {
  InterpTaps t;
  t.index.resize(static_cast<size_t>(out_size));
  t.weight.resize(static_cast<size_t>(out_size) * 2);
  const double scale = coord_scale(in_size, out_size, align_corner);
  for (int64_t d = 0; d < out_size; ++d) {
    float fx = source_coord(d, scale, align_corner);
    int64_t sx = static_cast<int64_t>(std::floor(fx));
    fx -= static_cast<float>(sx);
    if (sx < 0) {
      sx = 0;
      fx = 0.f;
    }
    if (sx >= in_size - 1) {
      sx = in_size - 2;  // -1 for a 1-wide input; the taps are clamped when read
      fx = 1.f;
    }
    t.index[d] = sx;
    t.weight[2 * d] = 1.f - fx;
    t.weight[2 * d + 1] = fx;
  }
  return t;
}

InterpTaps ncnn_cubic_taps(int64_t in_size, int64_t out_size, bool align_corner) {
  InterpTaps t;
  t.index.resize(static_cast<size_t>(out_size));
  t.weight.resize(static_cast<size_t>(out_size) * 4);
  const double scale = coord_scale(in_size, out_size, align_corner);
  for (int64_t d = 0; d < out_size; ++d) {
    float fx = source_coord(d, scale, align_corner);
    int64_t sx = static_cast<int64_t>(std::floor(fx));
    fx -= static_cast<float>(sx);
    float* a = &t.weight[4 * d];
    cubic_weights(fx, a);
    if (in_size >= 4) {
      // ncnn moves taps that fall outside the plane onto the edge by folding their weights.
      if (sx <= -1) {
        sx = 1;
        a[0] = 1.f - a[3];
        a[1] = a[3];
        a[2] = 0.f;
        a[3] = 0.f;
      }
      if (sx == 0) {
        sx = 1;
        a[0] = a[0] + a[1];
        a[1] = a[2];
        a[2] = a[3];
        a[3] = 0.f;
      }
      if (sx == in_size - 2) {
        sx = in_size - 3;
        a[3] = a[2] + a[3];
        a[2] = a[1];
        a[1] = a[0];
        a[0] = 0.f;
      }
      if (sx >= in_size - 1) {
        sx = in_size - 3;
        a[3] = 1.f - a[0];
        a[2] = a[0];
        a[1] = 0.f;
        a[0] = 0.f;
      }
    }
    // Smaller planes (where ncnn would read outside the input) keep the weights; reads are clamped.
    t.index[d] = sx;
  }
  return t;
}

std::vector<int64_t> ncnn_nearest_index(int64_t in_size, int64_t out_size, float step) {
  std::vector<int64_t> idx(static_cast<size_t>(out_size));
  for (int64_t d = 0; d < out_size; ++d) {
    const float s = static_cast<float>(d) * step;
    // min(int(s), size - 1), with the comparison first so an out-of-range s is never converted.
    idx[d] = s < static_cast<float>(in_size - 1) ? static_cast<int64_t>(s) : in_size - 1;
  }
  return idx;
}

void ncnn_resize_nearest_ref(const float* in, int64_t h, int64_t w, float* out, int64_t oh, int64_t ow,
                             const std::vector<int64_t>& ys, const std::vector<int64_t>& xs) {
  for (int64_t y = 0; y < oh; ++y) {
    const float* row = in + ys[y] * w;
    for (int64_t x = 0; x < ow; ++x) out[y * ow + x] = row[xs[x]];
  }
}

void ncnn_resize_taps_ref(const float* in, int64_t h, int64_t w, float* out, int64_t oh, int64_t ow,
                          const InterpTaps& ytaps, const InterpTaps& xtaps, int taps_per_point) {
  const int64_t first = taps_per_point == 4 ? -1 : 0;  // bicubic taps start one before the index
  std::vector<float> rows(static_cast<size_t>(taps_per_point * ow));
  for (int64_t y = 0; y < oh; ++y) {
    // Interpolate the needed source rows horizontally, then combine them vertically (ncnn's order).
    for (int r = 0; r < taps_per_point; ++r) {
      const float* src = in + clamp_index(ytaps.index[y] + first + r, h) * w;
      float* dst = &rows[static_cast<size_t>(r * ow)];
      for (int64_t x = 0; x < ow; ++x) {
        const float* a = &xtaps.weight[static_cast<size_t>(x * taps_per_point)];
        float v = src[clamp_index(xtaps.index[x] + first, w)] * a[0];
        for (int t = 1; t < taps_per_point; ++t) v += src[clamp_index(xtaps.index[x] + first + t, w)] * a[t];
        dst[x] = v;
      }
    }
    const float* b = &ytaps.weight[static_cast<size_t>(y * taps_per_point)];
    for (int64_t x = 0; x < ow; ++x) {
      float v = rows[x] * b[0];
      for (int r = 1; r < taps_per_point; ++r) v += rows[static_cast<size_t>(r * ow + x)] * b[r];
      out[y * ow + x] = v;
    }
  }
}

}  // namespace ref
}  // namespace ninegrid
