// Resize and Upsample (one-node Graph/Session) against a port of the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py: recursive 1-D interpolation, neighbours found by distance in
// an edge-padded copy, ratio 1 at integer coordinates), over random shapes, scales and every mode; plus
// hand-computed cases for Resize-10 / Upsample and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::attrs_of;
using eltest::f32;
using eltest::i64;
using eltest::konst;
using eltest::omitted;
using eltest::OpSpec;

struct RefOptions {
  std::string mode = "nearest", coordinates = "half_pixel", nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

std::vector<double> ref_coeffs(const RefOptions& o, double ratio) {
  if (o.mode == "linear") return {1 - ratio, ratio};
  if (o.mode == "cubic") {
    const double a = o.cubic_a;
    return {((a * (ratio + 1) - 5 * a) * (ratio + 1) + 8 * a) * (ratio + 1) - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * (1 - ratio) - (a + 3)) * (1 - ratio) * (1 - ratio) + 1,
            ((a * ((1 - ratio) + 1) - 5 * a) * ((1 - ratio) + 1) + 8 * a) * ((1 - ratio) + 1) - 4 * a};
  }
  if (ratio == std::floor(ratio)) return {0, 1};
  if (o.nearest_mode == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  if (o.nearest_mode == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
  if (o.nearest_mode == "floor") return {1, 0};
  return {0, 1};  // ceil
}

// interpolate_1d_with_x of the ONNX reference.
double ref_interpolate_1d(const std::vector<double>& data, double scale, double x, double roi_start, double roi_end,
                          const RefOptions& o) {
  const double in = static_cast<double>(data.size()), out_len = scale * in;
  double xo;
  if (o.coordinates == "align_corners") {
    xo = out_len == 1 ? 0 : x * (in - 1) / (out_len - 1);
  } else if (o.coordinates == "asymmetric") {
    xo = x / scale;
  } else if (o.coordinates == "tf_crop_and_resize") {
    xo = out_len == 1 ? (roi_end - roi_start) * (in - 1) / 2 : x * (roi_end - roi_start) * (in - 1) / (out_len - 1);
    xo += roi_start * (in - 1);
    if (xo < 0 || xo > in - 1) return o.extrapolation;
  } else if (o.coordinates == "pytorch_half_pixel") {
    xo = out_len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  } else if (o.coordinates == "tf_half_pixel_for_nn") {
    xo = (x + 0.5) / scale;
  } else {
    xo = (x + 0.5) / scale - 0.5;
  }
  const double ratio = xo == std::floor(xo) ? 1.0 : xo - std::floor(xo);
  std::vector<double> coeffs = ref_coeffs(o, ratio);
  const int n = static_cast<int>(coeffs.size());
  // get_neighbor: pad by ceil(n/2) with edge values, take the n indices nearest to x (smaller first on
  // ties), in ascending order.
  const int pad = (n + 1) / 2;
  const int padded = static_cast<int>(data.size()) + 2 * pad;
  std::vector<int> idx(static_cast<size_t>(padded));
  std::iota(idx.begin(), idx.end(), 0);
  const double xp = xo + pad;
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return std::fabs(xp - a) < std::fabs(xp - b); });
  idx.resize(static_cast<size_t>(n));
  std::sort(idx.begin(), idx.end());
  double sum = 0, weight_sum = 0;
  std::vector<double> points(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    const int original = idx[k] - pad;
    points[k] = data[static_cast<size_t>(std::min(std::max(original, 0), static_cast<int>(data.size()) - 1))];
    if (o.exclude_outside && (original < 0 || original >= static_cast<int>(data.size()))) coeffs[k] = 0;
    weight_sum += coeffs[k];
  }
  for (int k = 0; k < n; ++k) sum += (o.exclude_outside ? coeffs[k] / weight_sum : coeffs[k]) * points[k];
  return sum;
}

// interpolate_nd_with_x: interpolate along axis 0 the values interpolated over the remaining axes.
double ref_interpolate_nd(const float* data, const Shape& shape, size_t axis, const std::vector<double>& scales,
                          const std::vector<int64_t>& x, const std::vector<double>& roi, const RefOptions& o) {
  const size_t rank = shape.size();
  std::vector<double> line(static_cast<size_t>(shape[axis]));
  int64_t inner = 1;
  for (size_t a = axis + 1; a < rank; ++a) inner *= shape[a];
  for (int64_t i = 0; i < shape[axis]; ++i)
    line[i] = axis + 1 == rank ? data[i] : ref_interpolate_nd(data + i * inner, shape, axis + 1, scales, x, roi, o);
  return ref_interpolate_1d(line, scales[axis], static_cast<double>(x[axis]), roi[axis], roi[rank + axis], o);
}

std::vector<double> ref_resize(const Tensor& x, const Shape& out_shape, const std::vector<double>& scales,
                               const std::vector<double>& roi, const RefOptions& o) {
  std::vector<double> y;
  std::vector<int64_t> c(out_shape.size(), 0);
  for (int64_t i = 0; i < shape_numel(out_shape); ++i) {
    int64_t rem = i;
    for (size_t a = out_shape.size(); a-- > 0;) c[a] = rem % out_shape[a], rem /= out_shape[a];
    y.push_back(ref_interpolate_nd(x.data_as<float>(), x.shape(), 0, scales, c, roi, o));
  }
  return y;
}

Tensor random_tensor(std::mt19937& rng, const Shape& shape) {
  std::uniform_real_distribution<float> dist(-5.f, 5.f);
  Tensor t = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

TEST(ResizeOp, MatchesTheOnnxReferenceOnRandomCases) {
  std::mt19937 rng(17);
  auto pick = [&](const std::vector<std::string>& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  const std::vector<float> scale_choices = {0.5f, 0.6f, 0.75f, 0.8f, 1.f, 1.5f, 1.7f, 2.f, 2.5f, 3.f};
  int ran = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RefOptions o;
    o.mode = pick({"nearest", "linear", "cubic"});
    o.coordinates = pick({"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                          "tf_crop_and_resize"});
    o.nearest_mode = pick({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
    o.cubic_a = trial % 2 ? -0.75 : -0.5;
    o.exclude_outside = o.mode == "cubic" && trial % 3 == 0;  // meaningful for cubic only (0/0 elsewhere)
    o.extrapolation = trial % 5 == 0 ? 10.0 : 0.0;
    const bool use_sizes = trial % 4 == 1;
    const bool rank3 = trial % 7 == 0;
    const Shape xs = rank3 ? Shape{2, std::uniform_int_distribution<int64_t>(1, 5)(rng), 4}
                           : Shape{1, 2, std::uniform_int_distribution<int64_t>(1, 5)(rng),
                                   std::uniform_int_distribution<int64_t>(1, 5)(rng)};
    const size_t rank = xs.size();
    std::vector<float> scales(rank, 1.f);
    Shape ys = xs;
    std::vector<double> used_scales(rank, 1.0);
    for (size_t a = rank - 2; a < rank; ++a) {
      scales[a] = scale_choices[std::uniform_int_distribution<size_t>(0, scale_choices.size() - 1)(rng)];
      ys[a] = static_cast<int64_t>(std::floor(static_cast<double>(scales[a]) * static_cast<double>(xs[a])));
      used_scales[a] = scales[a];
    }
    if (use_sizes)  // with sizes, the scale is out / in
      for (size_t a = 0; a < rank; ++a) used_scales[a] = static_cast<double>(ys[a]) / static_cast<double>(xs[a]);
    if (shape_numel(ys) == 0) continue;
    // The reference uses x = -0.5 for a one-long pytorch_half_pixel output, the specification 0; skip.
    bool one_long = false;
    for (size_t a = 0; a < rank; ++a) one_long = one_long || (ys[a] == 1 && xs[a] != 1);
    if (o.coordinates == "pytorch_half_pixel" && one_long) continue;
    std::vector<float> roi(2 * rank);
    for (size_t a = 0; a < rank; ++a) {
      roi[a] = a + 2 >= rank ? std::uniform_real_distribution<float>(-0.2f, 0.5f)(rng) : 0.f;
      roi[rank + a] = a + 2 >= rank ? std::uniform_real_distribution<float>(0.6f, 1.2f)(rng) : 1.f;
    }
    if (o.coordinates == "tf_crop_and_resize" && !use_sizes) {
      // The output is floor(in * (roi_end - roi_start) * scale) then.
      for (size_t a = 0; a < rank; ++a)
        ys[a] = static_cast<int64_t>(std::floor(static_cast<double>(xs[a]) * (double(roi[rank + a]) - roi[a]) * scales[a]));
      if (shape_numel(ys) == 0) continue;
    }
    ++ran;
    const Tensor x = random_tensor(rng, xs);
    Attributes attrs = attrs_of({{"mode", Attribute::of_string(o.mode)},
                                 {"coordinate_transformation_mode", Attribute::of_string(o.coordinates)},
                                 {"nearest_mode", Attribute::of_string(o.nearest_mode)},
                                 {"cubic_coeff_a", Attribute::of_float(static_cast<float>(o.cubic_a))},
                                 {"exclude_outside", Attribute::of_int(o.exclude_outside)},
                                 {"extrapolation_value", Attribute::of_float(static_cast<float>(o.extrapolation))}});
    std::vector<eltest::In> inputs = {arg(x), konst(f32({static_cast<int64_t>(2 * rank)}, roi))};
    if (use_sizes) {
      inputs.push_back(omitted());
      inputs.push_back(konst(i64({static_cast<int64_t>(rank)}, ys)));
    } else {
      inputs.push_back(konst(f32({static_cast<int64_t>(rank)}, scales)));
    }
    const Tensor y = eltest::run1("Resize", inputs, attrs, 13);
    const std::string what = o.mode + " " + o.coordinates + " " + o.nearest_mode + (use_sizes ? " sizes" : " scales") +
                             " from " + shape_str(xs);
    ASSERT_EQ(y.shape(), ys) << what;
    std::vector<double> roi_d(roi.begin(), roi.end());
    const std::vector<double> want = ref_resize(x, ys, used_scales, roi_d, o);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(y.data_as<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
  EXPECT_GT(ran, 250);
}

TEST(ResizeOp, HandComputedBilinearAlignCorners) {
  // The 2x2 -> 4x4 example of the ONNX documentation: steps of 1/3.
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor y = eltest::run1("Resize", {arg(x), omitted(), konst(f32({4}, {1, 1, 2, 2}))},
                                attrs_of({{"mode", Attribute::of_string("linear")},
                                          {"coordinate_transformation_mode", Attribute::of_string("align_corners")}}));
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  const double t = 1.0 / 3;
  eltest::expect_near_all(y, {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t, 1 + 4 * t, 1 + 5 * t, 3, 3 + t, 3,
                              3 + t, 3 + 2 * t, 4},
                          1e-6, 1e-6);
}

TEST(ResizeOp, LegacyUpsampleAndResize10) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  // Nearest, scales [1, 1, 2, 3]: each value repeated 2 x 3 (floor of x / scale).
  const std::vector<double> repeated = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  const Tensor scales = f32({4}, {1, 1, 2, 3});
  eltest::expect_near_all(eltest::run1("Upsample", {arg(x), konst(scales)}, {}, 9), repeated);
  eltest::expect_near_all(eltest::run1("Resize", {arg(x), konst(scales)}, {}, 10), repeated);
  // Linear, asymmetric: x / 2 along the width of [1, 2] gives 1, 1.5, 2, 2 (clamped at the border).
  const Tensor y = eltest::run1("Upsample", {arg(f32({1, 1, 1, 2}, {1, 2})), konst(f32({4}, {1, 1, 1, 2}))},
                                attrs_of({{"mode", Attribute::of_string("linear")}}), 9);
  eltest::expect_near_all(y, {1, 1.5, 2, 2});
  // Resize-10 nearest downsampling rounds up (ONNX Runtime's rule): scale 0.5 of [1..4] reads 0 and 2.
  const Tensor d = eltest::run1("Resize", {arg(f32({1, 4}, {1, 2, 3, 4})), konst(f32({2}, {1, 0.5f}))}, {}, 10);
  eltest::expect_near_all(d, {1, 3});
}

TEST(ResizeOp, Opset18AxesAndAspectPolicy) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  const Tensor x = f32({1, 1, 3, 4}, v);
  // axes [3, 2] with scales [2, 1]: only the width doubles (nearest, asymmetric: x / 2).
  Attributes a = attrs_of({{"axes", Attribute::of_ints({3, 2})},
                           {"coordinate_transformation_mode", Attribute::of_string("asymmetric")}});
  Tensor y = eltest::run1("Resize", {arg(x), omitted(), konst(f32({2}, {2, 1}))}, a, 18);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 8}));
  EXPECT_EQ(y.data_as<float>()[9], 4.f);  // row 1, column 1 -> input column 0
  // not_larger: sizes [6, 6] for 3x4 keep the aspect with scale min(2, 1.5) = 1.5 -> 5 (4.5 rounded) x 6.
  a = attrs_of({{"axes", Attribute::of_ints({2, 3})}, {"keep_aspect_ratio_policy", Attribute::of_string("not_larger")}});
  y = eltest::run1("Resize", {arg(x), omitted(), omitted(), konst(i64({2}, {6, 6}))}, a, 18);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 5, 6}));
  a.set("keep_aspect_ratio_policy", Attribute::of_string("not_smaller"));
  y = eltest::run1("Resize", {arg(x), omitted(), omitted(), konst(i64({2}, {6, 6}))}, a, 18);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 6, 8}));
}

TEST(ResizeOp, Errors) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  auto err = [&](std::vector<eltest::In> in, Attributes a, int opset = 13, const std::string& op = "Resize") {
    OpSpec s;
    s.op_type = op;
    s.inputs = std::move(in);
    s.attrs = std::move(a);
    s.opset = opset;
    return eltest::error_of(s);
  };
  auto has = [](const std::string& msg, const std::string& needle) {
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("node_under_test"), std::string::npos) << msg;
  };
  const Tensor scales = f32({4}, {1, 1, 2, 2});
  // Scales and sizes given as model inputs are checked against the contents each run brings.
  has(err({arg(x), omitted(), arg(f32({4}, {1, 1, -2, 2}))}, {}), "scales must be positive");
  has(err({arg(x), omitted(), omitted(), arg(i64({4}, {1, 1, -4, 4}))}, {}), "sizes must be in");
  has(err({arg(x), omitted(), konst(scales), konst(i64({4}, {1, 1, 4, 4}))}, {}), "not both");
  has(err({arg(x)}, {}), "needs scales or sizes");
  has(err({arg(x), omitted(), konst(f32({3}, {1, 2, 2}))}, {}), "expected 4");
  has(err({arg(x), omitted(), konst(f32({4}, {1, 1, 0, 2}))}, {}), "positive");
  has(err({arg(x), omitted(), konst(scales)}, attrs_of({{"mode", Attribute::of_string("area")}})), "unsupported: mode");
  has(err({arg(x), omitted(), konst(scales)}, attrs_of({{"coordinate_transformation_mode", Attribute::of_string("x")}})),
      "unsupported: coordinate_transformation_mode");
  has(err({arg(x), omitted(), konst(scales)}, attrs_of({{"antialias", Attribute::of_int(1)}}), 18),
      "unsupported: antialias");
  has(err({arg(x), konst(f32({4}, {1, 1, 0.5f, 0.5f}))}, {}, 9, "Upsample"), ">= 1");
  has(err({arg(x), omitted(), konst(f32({4}, {1, 1, 1e30f, 1}))}, {}), "too large");
  has(err({arg(x), omitted(), omitted(), konst(i64({4}, {1, 1, int64_t(1) << 50, 2}))}, {}), "sizes must be in");
  has(err({arg(x), omitted(), konst(scales)}, attrs_of({{"coordinate_transformation_mode",
                                                         Attribute::of_string("tf_crop_and_resize")}})),
      "roi");
}

}  // namespace
}  // namespace ninegrid
