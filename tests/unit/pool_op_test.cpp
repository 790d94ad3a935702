// MaxPool, AveragePool, LpPool and the global pools as operators (one-node Graph/Session), against
// naive formulations written from the ONNX definitions in this file: each window enumerated tap by
// tap over the virtually padded input, with output sizes from the specification's formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::attrs_of;
using eltest::f32;
using eltest::OpSpec;

Tensor random_tensor(std::mt19937& rng, const Shape& shape) {
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  Tensor t = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

template <class Fn>
void for_each_coord(const Shape& shape, Fn fn) {
  if (shape_numel(shape) == 0) return;
  std::vector<int64_t> c(shape.size(), 0);
  for (;;) {
    fn(c);
    size_t a = shape.size();
    while (a-- > 0) {
      if (++c[a] < shape[a]) break;
      c[a] = 0;
    }
    if (a == static_cast<size_t>(-1)) return;
  }
}

struct PoolCase {
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
};

// Output size and begin pad of one axis, from the ONNX specification (and the rule, shared by PyTorch
// and ONNX Runtime, that a ceil_mode window starting inside the end padding is dropped).
void expected_axis(const PoolCase& c, size_t a, int64_t in, int64_t* out, int64_t* pad_begin, int64_t* pad_end) {
  const size_t sr = c.kernel.size();
  const int64_t s = c.strides[a], span = (c.kernel[a] - 1) * c.dilations[a] + 1;
  if (c.auto_pad == "NOTSET") {
    *pad_begin = c.pads[a];
    *pad_end = c.pads[sr + a];
    const double exact = static_cast<double>(in + *pad_begin + *pad_end - span) / static_cast<double>(s);
    *out = static_cast<int64_t>(c.ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
    if (c.ceil_mode && (*out - 1) * s >= in + *pad_begin) --*out;
  } else if (c.auto_pad == "VALID") {
    *pad_begin = *pad_end = 0;
    *out = static_cast<int64_t>(std::ceil(static_cast<double>(in - span + 1) / static_cast<double>(s)));
  } else {
    *out = static_cast<int64_t>(std::ceil(static_cast<double>(in) / static_cast<double>(s)));
    const int64_t total = std::max<int64_t>(0, (*out - 1) * s + span - in);
    *pad_begin = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *pad_end = total - *pad_begin;
  }
}

struct Expected {
  Shape shape;
  std::vector<double> max, avg_exclude, avg_include, lp2;
  std::vector<int64_t> argmax_row_major, argmax_col_major;
  bool empty_window = false;  // some window reads only padding (ONNX leaves its value undefined)
};

// Every window, tap by tap: taps whose coordinate is inside the input take part; count_include_pad
// also counts the taps inside [-pad_begin, in + pad_end).
Expected naive_pool(const Tensor& x, const PoolCase& c) {
  const size_t sr = c.kernel.size();
  Expected e;
  e.shape = {x.dim(0), x.dim(1)};
  std::vector<int64_t> pb(sr), pe(sr);
  for (size_t a = 0; a < sr; ++a) {
    int64_t out;
    expected_axis(c, a, x.dim(2 + static_cast<int>(a)), &out, &pb[a], &pe[a]);
    e.shape.push_back(out);
    if (out <= 0) return e;  // the window does not fit: nothing to compute
  }
  Shape spatial_in(x.shape().begin() + 2, x.shape().end());
  const int64_t plane = shape_numel(spatial_in);
  for_each_coord(e.shape, [&](const std::vector<int64_t>& o) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0, sq = 0;
    int64_t valid = 0, counted = 0, arg_row = -1, arg_col = -1;
    for_each_coord(Shape(c.kernel.begin(), c.kernel.end()), [&](const std::vector<int64_t>& k) {
      bool inside = true, in_padded = true;
      int64_t row = 0, col = 0, col_stride = 1;
      for (size_t a = 0; a < sr; ++a) {
        const int64_t in = spatial_in[a];
        const int64_t i = o[2 + a] * c.strides[a] - pb[a] + k[a] * c.dilations[a];
        if (i < 0 || i >= in) inside = false;
        if (i < -pb[a] || i >= in + pe[a]) in_padded = false;
        row = row * in + i;
        col += i * col_stride;
        col_stride *= in;
      }
      if (in_padded) ++counted;
      if (!inside) return;
      const double v = x.data_as<float>()[(o[0] * x.dim(1) + o[1]) * plane + row];
      ++valid;
      sum += v;
      sq += v * v;
      if (v > best) {
        best = v;
        arg_row = (o[0] * x.dim(1) + o[1]) * plane + row;
        arg_col = (o[0] * x.dim(1) + o[1]) * plane + col;
      }
    });
    if (valid == 0) e.empty_window = true;
    e.max.push_back(best);
    e.avg_exclude.push_back(sum / static_cast<double>(valid));
    e.avg_include.push_back(sum / static_cast<double>(counted));
    e.lp2.push_back(std::sqrt(sq));
    e.argmax_row_major.push_back(arg_row);
    e.argmax_col_major.push_back(arg_col);
  });
  return e;
}

Attributes pool_attrs(const PoolCase& c) {
  Attributes a;
  a.set("kernel_shape", Attribute::of_ints(c.kernel));
  a.set("strides", Attribute::of_ints(c.strides));
  a.set("dilations", Attribute::of_ints(c.dilations));
  a.set("auto_pad", Attribute::of_string(c.auto_pad));
  if (c.auto_pad == "NOTSET") a.set("pads", Attribute::of_ints(c.pads));
  a.set("ceil_mode", Attribute::of_int(c.ceil_mode ? 1 : 0));
  return a;
}

TEST(PoolOp, RandomWindowsMatchTheDefinition) {
  std::mt19937 rng(31);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const char* modes[] = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  int ran = 0;
  for (int trial = 0; trial < 150; ++trial) {
    PoolCase c;
    c.auto_pad = modes[trial % 5];
    c.ceil_mode = c.auto_pad == "NOTSET" && trial % 2 == 0;
    const size_t sr = 1 + static_cast<size_t>(trial % 3);
    Shape xs = {uniform(1, 2), uniform(1, 5)};
    c.pads.assign(2 * sr, 0);
    for (size_t a = 0; a < sr; ++a) {
      xs.push_back(uniform(1, 8));
      c.kernel.push_back(uniform(1, 4));
      c.strides.push_back(uniform(1, 3));
      c.dilations.push_back(trial % 4 == 0 ? 2 : 1);
      c.pads[a] = uniform(0, c.kernel[a] - 1);  // ONNX: pads smaller than the kernel
      c.pads[sr + a] = uniform(0, c.kernel[a] - 1);
    }
    const Tensor x = random_tensor(rng, xs);
    const Expected e = naive_pool(x, c);
    bool fits = true;
    for (int64_t d : e.shape) fits = fits && d > 0;
    if (!fits || e.empty_window) continue;
    ++ran;
    const std::string where = "trial " + std::to_string(trial) + " (" + c.auto_pad + ")";

    OpSpec max_spec;
    max_spec.op_type = "MaxPool";
    max_spec.inputs = {arg(x)};
    max_spec.attrs = pool_attrs(c);
    max_spec.num_outputs = 2;
    max_spec.attrs.set("storage_order", Attribute::of_int(trial % 2));
    const auto maxed = eltest::run_op(max_spec);
    ASSERT_EQ(maxed[0].shape(), e.shape) << where;
    eltest::expect_near_all(maxed[0], e.max, 0, 0);
    EXPECT_EQ(eltest::values<int64_t>(maxed[1]), trial % 2 ? e.argmax_col_major : e.argmax_row_major) << where;
    // Without the Indices output MaxPool takes its value-only paths.
    max_spec.num_outputs = 1;
    const auto values_only = eltest::run_op(max_spec);
    eltest::expect_near_all(values_only[0], e.max, 0, 0);

    for (int include = 0; include < 2; ++include) {
      Attributes a = pool_attrs(c);
      a.set("count_include_pad", Attribute::of_int(include));
      const Tensor avg = eltest::run1("AveragePool", {arg(x)}, a);
      ASSERT_EQ(avg.shape(), e.shape) << where;
      eltest::expect_near_all(avg, include ? e.avg_include : e.avg_exclude, 1e-5, 1e-6);
    }

    Attributes lp = pool_attrs(c);
    lp.set("p", Attribute::of_int(2));
    eltest::expect_near_all(eltest::run1("LpPool", {arg(x)}, lp), e.lp2, 1e-5, 1e-6);
  }
  EXPECT_GT(ran, 100);
}

// The 2x2 stride-2 downsampling pool has a path of its own: even and odd sizes (the last odd row and
// column are dropped), with and without ceil_mode (which adds partial windows: the general path).
TEST(PoolOp, TwoByTwoStrideTwoMatchesTheDefinition) {
  std::mt19937 rng(37);
  for (int64_t h : {2, 7, 8})
    for (int64_t w : {2, 9, 16})
      for (int ceil : {0, 1}) {
        PoolCase c;
        c.auto_pad = "NOTSET";
        c.ceil_mode = ceil != 0;
        c.kernel = {2, 2};
        c.strides = {2, 2};
        c.dilations = {1, 1};
        c.pads = {0, 0, 0, 0};
        const Tensor x = random_tensor(rng, {2, 3, h, w});
        const Expected e = naive_pool(x, c);
        OpSpec spec;
        spec.op_type = "MaxPool";
        spec.inputs = {arg(x)};
        spec.attrs = pool_attrs(c);
        const auto y = eltest::run_op(spec);
        ASSERT_EQ(y[0].shape(), e.shape) << h << "x" << w << " ceil " << ceil;
        eltest::expect_near_all(y[0], e.max, 0, 0);
      }
}

TEST(PoolOp, HandComputedCeilModeAndPadding) {
  // 1x1x4x4 input 1..16, 3x3 max and average pool, stride 2, ceil_mode: the second window per axis
  // covers rows/cols 2..3 only (2x2 values). Hand-computed.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  const Tensor x = f32({1, 1, 4, 4}, v);
  Attributes a = attrs_of({{"kernel_shape", Attribute::of_ints({3, 3})},
                           {"strides", Attribute::of_ints({2, 2})},
                           {"ceil_mode", Attribute::of_int(1)}});
  eltest::expect_near_all(eltest::run1("MaxPool", {arg(x)}, a), {11, 12, 15, 16});
  // means: {1,2,3,5,6,7,9,10,11} = 6; {3,4,7,8,11,12} = 7.5; {9..15 rows 2-3, cols 0-2} = 12; {11,12,15,16} = 13.5
  eltest::expect_near_all(eltest::run1("AveragePool", {arg(x)}, a), {6, 7.5, 12, 13.5});
  // 2x2 average with pad 1 everywhere, count_include_pad: corner window holds one value and three pads.
  Attributes b = attrs_of({{"kernel_shape", Attribute::of_ints({2, 2})},
                           {"strides", Attribute::of_ints({2, 2})},
                           {"pads", Attribute::of_ints({1, 1, 1, 1})},
                           {"count_include_pad", Attribute::of_int(1)}});
  const Tensor y = eltest::run1("AveragePool", {arg(x)}, b);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_FLOAT_EQ(y.data_as<float>()[0], 1.f / 4);
  EXPECT_FLOAT_EQ(y.data_as<float>()[4], (6.f + 7 + 10 + 11) / 4);
  EXPECT_FLOAT_EQ(y.data_as<float>()[8], 16.f / 4);
}

TEST(PoolOp, MaxPoolOfUint8) {
  const Tensor x = eltest::u8({1, 1, 2, 3}, {1, 200, 3, 255, 5, 0});
  const Tensor y = eltest::run1("MaxPool", {arg(x)}, attrs_of({{"kernel_shape", Attribute::of_ints({2, 2})}}));
  EXPECT_EQ(eltest::values<uint8_t>(y), (std::vector<uint8_t>{255, 200}));
}

TEST(PoolOp, GlobalPools) {
  const Tensor x = f32({2, 2, 1, 3}, {1, 2, 6, -1, -2, -3, 0, 0, 9, 4, 4, 4});
  const Tensor avg = eltest::run1("GlobalAveragePool", {arg(x)});
  ASSERT_EQ(avg.shape(), (Shape{2, 2, 1, 1}));
  eltest::expect_near_all(avg, {3, -2, 3, 4});
  const Tensor mx = eltest::run1("GlobalMaxPool", {arg(x)});
  ASSERT_EQ(mx.shape(), (Shape{2, 2, 1, 1}));
  eltest::expect_near_all(mx, {6, -1, 9, 4});
}

TEST(PoolOp, Errors) {
  const Tensor x = f32({1, 1, 4, 4}, std::vector<float>(16, 1.f));
  auto err = [&](const std::string& op, Attributes a, Tensor in) {
    OpSpec s;
    s.op_type = op;
    s.inputs = {arg(std::move(in))};
    s.attrs = std::move(a);
    return eltest::error_of(s);
  };
  auto has = [](const std::string& msg, const std::string& needle) {
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_NE(msg.find("node_under_test"), std::string::npos) << msg;
  };
  has(err("MaxPool", {}, x), "kernel_shape is required");
  has(err("MaxPool", attrs_of({{"kernel_shape", Attribute::of_ints({3})}}), x), "must have 2 values");
  has(err("AveragePool", attrs_of({{"kernel_shape", Attribute::of_ints({5, 5})}}), x), "does not fit");
  has(err("MaxPool", attrs_of({{"kernel_shape", Attribute::of_ints({2})}}), f32({4}, {1, 2, 3, 4})), "rank 3 or more");
  has(err("MaxPool", attrs_of({{"kernel_shape", Attribute::of_ints({2, 2})}, {"storage_order", Attribute::of_int(2)}}), x),
      "storage_order");
  has(err("AveragePool", attrs_of({{"kernel_shape", Attribute::of_ints({2, 2})}}), eltest::i32({1, 1, 2, 2}, {1, 2, 3, 4})),
      "float32");
  has(err("GlobalAveragePool", {}, f32({3}, {1, 2, 3})), "rank 2 or more");
}

}  // namespace
}  // namespace ninegrid
