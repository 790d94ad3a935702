// Softmax, LogSoftmax and Hardmax as one-node graphs. Expected values are computed here in double
// precision straight from the definition (exp(x) / sum exp(x) over the normalised elements).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "elementwise_test_util.h"

namespace ninegrid {
namespace {

using namespace eltest;

// Softmax of x viewed as (outer, axis, inner) along the middle dimension, by definition.
std::vector<double> softmax_ref(const std::vector<float>& x, int64_t outer, int64_t axis, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t a = 0; a < axis; ++a) sum += std::exp(static_cast<double>(x[(o * axis + a) * inner + i]));
      for (int64_t a = 0; a < axis; ++a) {
        const size_t k = (o * axis + a) * inner + i;
        y[k] = log ? x[k] - std::log(sum) : std::exp(static_cast<double>(x[k])) / sum;
      }
    }
  return y;
}

Tensor random_f32(const Shape& shape, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

Attributes axis(int64_t a) { return attrs_of({{"axis", Attribute::of_int(a)}}); }

TEST(Softmax, LastAxisByDefault) {
  Tensor x = f32({2, 3}, {1.f, 2.f, 3.f, -1.f, 0.f, 1.f});
  // Row (1, 2, 3): e^k / (e + e^2 + e^3).
  const double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const std::vector<double> row = {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s};
  // Softmax is shift-invariant: row (-1, 0, 1) gives the same values.
  expect_near_all(run1("Softmax", {arg(x)}), {row[0], row[1], row[2], row[0], row[1], row[2]});
}

TEST(Softmax, EveryAxisOfA3DTensor) {
  Tensor x = random_f32({2, 3, 4}, 1);
  const std::vector<float> xv = values<float>(x);
  const Shape s = {2, 3, 4};
  for (int64_t a = -3; a < 3; ++a) {
    SCOPED_TRACE("axis " + std::to_string(a));
    const int64_t ax = a < 0 ? a + 3 : a;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < ax; ++d) outer *= s[d];
    for (int64_t d = ax + 1; d < 3; ++d) inner *= s[d];
    expect_near_all(run1("Softmax", {arg(x)}, axis(a)), softmax_ref(xv, outer, s[ax], inner, false), 1e-5, 1e-7);
    expect_near_all(run1("LogSoftmax", {arg(x)}, axis(a)), softmax_ref(xv, outer, s[ax], inner, true), 1e-5, 1e-6);
  }
}

// A detection head's softmax: one image, two classes, many anchors. With two threads the columns of
// the single slice are split among them (columns not a multiple of the split size).
TEST(Softmax, ThreadedSingleSliceSplitsColumns) {
  const Shape s = {1, 2, 97, 61};
  Tensor x = random_f32(s, 7);
  const std::vector<float> xv = values<float>(x);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    OpSpec spec;
    spec.op_type = op;
    spec.inputs = {arg(x)};
    spec.attrs = axis(1);
    spec.threads = 2;
    expect_near_all(run_op(spec)[0], softmax_ref(xv, 1, 2, 97 * 61, std::string(op) == "LogSoftmax"), 1e-5, 1e-6);
  }
}

TEST(Softmax, BeforeOpset13FlattensAtAxis) {
  Tensor x = random_f32({2, 3, 4}, 2);
  const std::vector<float> xv = values<float>(x);
  // Default axis 1: each of the 2 rows of 12 elements is normalised together.
  expect_near_all(run1("Softmax", {arg(x)}, {}, 11), softmax_ref(xv, 2, 12, 1, false), 1e-5, 1e-7);
  // axis 2: 6 rows of 4.
  expect_near_all(run1("LogSoftmax", {arg(x)}, axis(2), 11), softmax_ref(xv, 6, 4, 1, true), 1e-5, 1e-6);
  // axis 0: one row of everything.
  expect_near_all(run1("Softmax", {arg(x)}, axis(0), 9), softmax_ref(xv, 1, 24, 1, false), 1e-5, 1e-7);
  // Hardmax-11 along the flattened row: a single 1 at the overall maximum of each batch item.
  Tensor h = run1("Hardmax", {arg(f32({2, 2, 2}, {1.f, 9.f, 3.f, 4.f, 8.f, 2.f, 7.f, 8.f}))}, {}, 11);
  EXPECT_EQ(values<float>(h), (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
}

TEST(Softmax, LargeInputsStayFinite) {
  Tensor x = f32({3}, {1000.f, 1001.f, 1002.f});
  const double s = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  expect_near_all(run1("Softmax", {arg(x)}), {std::exp(-2.0) / s, std::exp(-1.0) / s, 1.0 / s});
  expect_near_all(run1("LogSoftmax", {arg(x)}), {-2 - std::log(s), -1 - std::log(s), -std::log(s)}, 1e-6, 1e-5);
}

TEST(Hardmax, FirstMaximumWins) {
  EXPECT_EQ(values<float>(run1("Hardmax", {arg(f32({2, 4}, {1.f, 3.f, 3.f, 2.f, 5.f, 0.f, 5.f, 5.f}))})),
            (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
  // Along axis 0 of a 2x3: per column.
  EXPECT_EQ(values<float>(run1("Hardmax", {arg(f32({2, 3}, {1.f, 5.f, 2.f, 4.f, 5.f, 0.f}))}, axis(0))),
            (std::vector<float>{0, 1, 1, 1, 0, 0}));
}

TEST(Softmax, ThreadsAgreeOnLargeInput) {
  Tensor x = random_f32({64, 33, 17}, 3);
  const std::vector<float> xv = values<float>(x);
  for (int threads : {1, 2}) {
    OpSpec s;
    s.op_type = "Softmax";
    s.inputs = {arg(x)};
    s.attrs = axis(1);
    s.threads = threads;
    expect_near_all(run_op(s)[0], softmax_ref(xv, 64, 33, 17, false), 1e-5, 1e-7);
  }
}

TEST(Softmax, Errors) {
  OpSpec s;
  s.op_type = "Softmax";
  s.inputs = {arg(i32({2}, {1, 2}))};
  std::string e = error_of(s);
  EXPECT_NE(e.find("unsupported type int32"), std::string::npos) << e;
  s.inputs = {arg(f32({2, 2}, {1.f, 2.f, 3.f, 4.f}))};
  s.attrs = axis(2);
  e = error_of(s);
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
}

TEST(Softmax, ZeroSizeInput) {
  Tensor y = run1("Softmax", {arg(f32({0, 3}, {}))});
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

}  // namespace
}  // namespace ninegrid
