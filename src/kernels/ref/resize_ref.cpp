#include "kernels/ref/resize_ref.h"

#include <algorithm>
#include <cmath>

namespace ninegrid {

namespace {

// Cubic convolution weights for the four taps floor(x) - 1 .. floor(x) + 2 at fractional offset t
// (Keys' kernel with parameter a).
void cubic_weights(double t, double a, double w[4]) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };        // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

int64_t round_nearest(double x, NearestRounding r, bool downsampling) {
  switch (r) {
    case NearestRounding::RoundPreferFloor: return static_cast<int64_t>(std::ceil(x - 0.5));
    case NearestRounding::RoundPreferCeil: return static_cast<int64_t>(std::floor(x + 0.5));
    case NearestRounding::Floor: return static_cast<int64_t>(std::floor(x));
    case NearestRounding::Ceil: return static_cast<int64_t>(std::ceil(x));
    case NearestRounding::Simple: return downsampling ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  }
  return 0;
}

}  // namespace

double resize_source_coordinate(const ResizeAxis& a, ResizeCoordinates mode, double x) {
  const double in = static_cast<double>(a.in), len = a.length_resized;
  switch (mode) {
    case ResizeCoordinates::HalfPixel: return (x + 0.5) / a.scale - 0.5;
    case ResizeCoordinates::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / len;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / a.scale - 0.5;
    }
    case ResizeCoordinates::PytorchHalfPixel: return len > 1 ? (x + 0.5) / a.scale - 0.5 : 0.0;
    case ResizeCoordinates::AlignCorners: return len == 1 ? 0.0 : x * (in - 1) / (len - 1);
    case ResizeCoordinates::Asymmetric: return x / a.scale;
    case ResizeCoordinates::TfHalfPixelForNearest: return (x + 0.5) / a.scale;
    case ResizeCoordinates::TfCropAndResize:
      return len > 1 ? a.roi_start * (in - 1) + x * (a.roi_end - a.roi_start) * (in - 1) / (len - 1)
                     : 0.5 * (a.roi_start + a.roi_end) * (in - 1);
  }
  return 0.0;
}

ResizeTaps resize_axis_taps(const ResizeAxis& axis, const ResizeOptions& opt) {
  ResizeTaps t;
  t.width = opt.mode == ResizeMode::Nearest ? 1 : opt.mode == ResizeMode::Linear ? 2 : 4;
  const size_t n = static_cast<size_t>(axis.out);
  t.index.assign(n * t.width, 0);
  t.weight.assign(n * t.width, 0.f);
  t.count.assign(n, 0);
  t.outside.assign(n, 0);
  const int64_t last = axis.in - 1;
  auto clamp = [last](int64_t i) { return std::min(std::max<int64_t>(i, 0), last); };

  for (int64_t o = 0; o < axis.out; ++o) {
    const double x = resize_source_coordinate(axis, opt.coordinates, static_cast<double>(o));
    if (opt.coordinates == ResizeCoordinates::TfCropAndResize && (x < 0 || x > static_cast<double>(last))) {
      t.outside[o] = 1;
      continue;
    }
    int64_t idx[4];
    double w[4];
    int taps = t.width;
    if (opt.mode == ResizeMode::Nearest) {
      idx[0] = round_nearest(x, opt.rounding, axis.scale < 1.0);
      w[0] = 1.0;
    } else {
      const double base = std::floor(x);
      const double frac = x - base;
      const int64_t b = static_cast<int64_t>(base);
      if (opt.mode == ResizeMode::Linear) {
        idx[0] = b, idx[1] = b + 1;
        w[0] = 1 - frac, w[1] = frac;
      } else {
        for (int k = 0; k < 4; ++k) idx[k] = b - 1 + k;
        cubic_weights(frac, opt.cubic_a, w);
        if (opt.exclude_outside) {
          double sum = 0;
          for (int k = 0; k < 4; ++k) {
            if (idx[k] < 0 || idx[k] > last) w[k] = 0;
            sum += w[k];
          }
          for (int k = 0; k < 4; ++k) w[k] = sum != 0 ? w[k] / sum : 0;
        }
      }
    }
    // Keep the taps that contribute (a weight of exactly 0 adds nothing), borders repeated.
    int kept = 0;
    for (int k = 0; k < taps; ++k) {
      if (w[k] == 0 && !(k == taps - 1 && kept == 0)) continue;
      t.index[o * t.width + kept] = clamp(idx[k]);
      t.weight[o * t.width + kept] = static_cast<float>(w[k]);
      ++kept;
    }
    t.count[o] = kept;
  }
  return t;
}

namespace {

// Sum over the taps of axes [axis, rank) for the output coordinates `coord`, starting at input offset
// `offset` with accumulated weight `w`.
float gather_taps(const std::vector<int64_t>& strides, const std::vector<ResizeTaps>& taps,
                  const std::vector<int64_t>& coord, size_t axis, int64_t offset, const float* x) {
  if (axis == taps.size()) return x[offset];
  const ResizeTaps& t = taps[axis];
  const int64_t o = coord[axis];
  float sum = 0.f;
  for (int k = 0; k < t.count[o]; ++k) {
    const size_t i = static_cast<size_t>(o * t.width + k);
    sum += t.weight[i] * gather_taps(strides, taps, coord, axis + 1, offset + t.index[i] * strides[axis], x);
  }
  return sum;
}

}  // namespace

void resize_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                float extrapolation_value, const float* x, float* y, int64_t begin, int64_t end) {
  const size_t rank = in_shape.size();
  std::vector<int64_t> strides(rank, 1), out_shape(rank);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * in_shape[a];
  for (size_t a = 0; a < rank; ++a) out_shape[a] = static_cast<int64_t>(taps[a].count.size());
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = begin; i < end; ++i) {
    int64_t rem = i;
    bool outside = false;
    for (size_t a = rank; a-- > 0;) {
      coord[a] = rem % out_shape[a];
      rem /= out_shape[a];
      if (taps[a].outside[coord[a]]) outside = true;
    }
    y[i] = outside ? extrapolation_value : gather_taps(strides, taps, coord, 0, 0, x);
  }
}

}  // namespace ninegrid
