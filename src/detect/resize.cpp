// Resampling and letterboxing of RGB images for detector inputs.
//
// Resampling is separable: each output pixel is a weighted sum of source pixels under a triangle filter
// centred on the output pixel's centre mapped into the source ((x + 0.5) * src / dst). When enlarging the
// triangle has radius 1 source pixel, which is exactly bilinear interpolation with half-pixel centres
// and edge clamping. When shrinking by a factor f the radius grows to f, so a photo shrunk 30x to a
// 128x128 detector input averages every pixel instead of sampling a sparse, aliased subset.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ninegrid/detect.h"

namespace ninegrid {

namespace {

// Source index range and normalised weights for each output coordinate along one axis.
struct AxisWeights {
  std::vector<int> first;      // first source index per output pixel
  std::vector<int> count;      // number of source pixels per output pixel
  std::vector<float> weights;  // `taps` weights per output pixel, padded with zeros
  int taps = 0;
};

AxisWeights axis_weights(int src, int dst) {
  const double scale = static_cast<double>(src) / dst;
  const double radius = std::max(scale, 1.0);
  AxisWeights a;
  a.taps = static_cast<int>(std::ceil(radius)) * 2 + 1;
  a.first.resize(dst);
  a.count.resize(dst);
  a.weights.assign(static_cast<size_t>(dst) * a.taps, 0.f);
  for (int o = 0; o < dst; ++o) {
    const double centre = (o + 0.5) * scale;
    int lo = std::max(0, static_cast<int>(std::floor(centre - radius)));
    int hi = std::min(src, static_cast<int>(std::ceil(centre + radius)));
    hi = std::min(hi, lo + a.taps);
    double total = 0;
    float* w = &a.weights[static_cast<size_t>(o) * a.taps];
    for (int i = lo; i < hi; ++i) {
      double t = std::fabs((i + 0.5 - centre) / radius);
      double v = t < 1 ? 1 - t : 0;
      w[i - lo] = static_cast<float>(v);
      total += v;
    }
    if (total <= 0) {  // cannot happen for radius >= 1, but never divide by zero
      lo = std::min(std::max(0, static_cast<int>(centre)), src - 1);
      hi = lo + 1;
      w[0] = 1.f;
      total = 1;
    }
    for (int i = 0; i < hi - lo; ++i) w[i] = static_cast<float>(w[i] / total);
    a.first[o] = lo;
    a.count[o] = hi - lo;
  }
  return a;
}

uint8_t to_byte(float v) { return static_cast<uint8_t>(std::min(255.f, std::max(0.f, v + 0.5f))); }

}  // namespace

Image resize_bilinear(const Image& src, int w, int h) {
  if (src.w <= 0 || src.h <= 0 || src.rgb.size() != static_cast<size_t>(src.w) * src.h * 3)
    throw Error("resize: the source image is empty or its pixel buffer has the wrong size");
  if (w <= 0 || h <= 0) throw Error("resize: target size " + std::to_string(w) + "x" + std::to_string(h) + " is empty");
  const AxisWeights ax = axis_weights(src.w, w);
  const AxisWeights ay = axis_weights(src.h, h);

  // Horizontal pass: src.h rows of w pixels, kept in float to avoid rounding twice. Each source row is first
  // converted to float, so an output pixel's three channels are one 4-lane multiply-add per tap (the fourth
  // lane, the next pixel's red, is computed and overwritten), in the same order of operations per channel as
  // a scalar sum. Rows carry 4 floats of slack for the last pixel's 4-lane load and store.
  using F4 = float __attribute__((vector_size(16)));
  std::vector<float> rows(static_cast<size_t>(src.h) * w * 3 + 4);
  std::vector<float> row_in(static_cast<size_t>(src.w) * 3 + 4, 0.f);
  for (int y = 0; y < src.h; ++y) {
    const uint8_t* in = src.pixel(0, y);
    for (int i = 0; i < src.w * 3; ++i) row_in[static_cast<size_t>(i)] = in[i];
    float* out = &rows[static_cast<size_t>(y) * w * 3];
    for (int x = 0; x < w; ++x) {
      const float* wt = &ax.weights[static_cast<size_t>(x) * ax.taps];
      const float* p = row_in.data() + static_cast<size_t>(ax.first[x]) * 3;
      F4 sum = {0.f, 0.f, 0.f, 0.f};
      for (int k = 0; k < ax.count[x]; ++k, p += 3) {
        F4 v;
        std::memcpy(&v, p, sizeof v);
        sum += wt[k] * v;
      }
      std::memcpy(out + x * 3, &sum, sizeof sum);
    }
  }

  // Vertical pass.
  Image dst(w, h);
  const size_t row_len = static_cast<size_t>(w) * 3;
  std::vector<float> acc(row_len);
  for (int y = 0; y < h; ++y) {
    std::fill(acc.begin(), acc.end(), 0.f);
    const float* wt = &ay.weights[static_cast<size_t>(y) * ay.taps];
    for (int k = 0; k < ay.count[y]; ++k) {
      const float* in = &rows[static_cast<size_t>(ay.first[y] + k) * row_len];
      for (size_t i = 0; i < row_len; ++i) acc[i] += wt[k] * in[i];
    }
    uint8_t* out = dst.pixel(0, y);
    for (size_t i = 0; i < row_len; ++i) out[i] = to_byte(acc[i]);
  }
  return dst;
}

LetterboxGeometry letterbox_geometry(int src_w, int src_h, int w, int h) {
  if (src_w <= 0 || src_h <= 0 || w <= 0 || h <= 0)
    throw Error("letterbox: cannot fit a " + std::to_string(src_w) + "x" + std::to_string(src_h) + " image into " +
                std::to_string(w) + "x" + std::to_string(h));
  const double scale = std::min(static_cast<double>(w) / src_w, static_cast<double>(h) / src_h);
  LetterboxGeometry g;
  g.w = w;
  g.h = h;
  g.scaled_w = std::min(w, std::max(1, static_cast<int>(std::lround(src_w * scale))));
  g.scaled_h = std::min(h, std::max(1, static_cast<int>(std::lround(src_h * scale))));
  g.pad_x = (w - g.scaled_w) / 2;
  g.pad_y = (h - g.scaled_h) / 2;
  g.scale_x = static_cast<float>(g.scaled_w) / src_w;
  g.scale_y = static_cast<float>(g.scaled_h) / src_h;
  return g;
}

Image letterbox(const Image& src, const LetterboxGeometry& g, const uint8_t fill[3]) {
  if (g.scaled_w <= 0 || g.scaled_h <= 0 || g.pad_x < 0 || g.pad_y < 0 || g.pad_x + g.scaled_w > g.w ||
      g.pad_y + g.scaled_h > g.h)
    throw Error("letterbox: inconsistent geometry");
  Image scaled = (g.scaled_w == src.w && g.scaled_h == src.h) ? src : resize_bilinear(src, g.scaled_w, g.scaled_h);
  Image canvas(g.w, g.h);  // zeros: black needs no fill
  // The fill goes only where the scaled image does not: the rows above and below it, the columns beside it.
  auto fill_pixels = [&](int x0, int x1, int y) {
    uint8_t* p = canvas.pixel(x0, y);
    for (int x = x0; x < x1; ++x, p += 3) p[0] = fill[0], p[1] = fill[1], p[2] = fill[2];
  };
  if (fill[0] != 0 || fill[1] != 0 || fill[2] != 0)
    for (int y = 0; y < g.h; ++y) {
      if (y < g.pad_y || y >= g.pad_y + g.scaled_h) {
        fill_pixels(0, g.w, y);
      } else {
        fill_pixels(0, g.pad_x, y);
        fill_pixels(g.pad_x + g.scaled_w, g.w, y);
      }
    }
  for (int y = 0; y < g.scaled_h; ++y)
    std::copy(scaled.pixel(0, y), scaled.pixel(0, y) + static_cast<size_t>(g.scaled_w) * 3,
              canvas.pixel(g.pad_x, g.pad_y + y));
  return canvas;
}

}  // namespace ninegrid
