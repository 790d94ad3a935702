// Reductions and ArgMax/ArgMin as one-node graphs. Expected values come from a direct definition: every
// input element is mapped to its output position by zeroing its reduced coordinates, and the elements of
// each position are combined in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "elementwise_test_util.h"

namespace ninegrid {
namespace {

using namespace eltest;

// Per output position, the list of input values reduced into it.
std::vector<std::vector<double>> groups(const Tensor& x, const std::vector<bool>& reduced) {
  const Shape& s = x.shape();
  int64_t out_n = 1;
  for (size_t d = 0; d < s.size(); ++d)
    if (!reduced[d]) out_n *= s[d];
  std::vector<std::vector<double>> g(static_cast<size_t>(out_n));
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i, out = 0, scale = 1;
    for (size_t d = s.size(); d-- > 0;) {
      const int64_t c = rest % s[d];
      rest /= s[d];
      if (!reduced[d]) {
        out += c * scale;
        scale *= s[d];
      }
    }
    g[out].push_back(x.dtype() == DataType::Float32 ? x.data_as<float>()[i] : x.data_as<double>()[i]);
  }
  return g;
}

double reduce_def(const std::string& op, const std::vector<double>& v) {
  double acc = 0;
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceLogSum") {
    for (double e : v) acc += e;
    if (op == "ReduceMean") acc /= v.size();
    if (op == "ReduceLogSum") acc = std::log(acc);
  } else if (op == "ReduceMax") {
    acc = -INFINITY;
    for (double e : v) acc = std::max(acc, e);
  } else if (op == "ReduceMin") {
    acc = INFINITY;
    for (double e : v) acc = std::min(acc, e);
  } else if (op == "ReduceProd") {
    acc = 1;
    for (double e : v) acc *= e;
  } else if (op == "ReduceL1") {
    for (double e : v) acc += std::fabs(e);
  } else if (op == "ReduceL2" || op == "ReduceSumSquare") {
    for (double e : v) acc += e * e;
    if (op == "ReduceL2") acc = std::sqrt(acc);
  } else if (op == "ReduceLogSumExp") {
    for (double e : v) acc += std::exp(e);
    acc = std::log(acc);
  }
  return acc;
}

Tensor random_f32(const Shape& shape, unsigned seed, float lo, float hi) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

const char* const kReduceOps[] = {"ReduceSum", "ReduceMean", "ReduceMax",       "ReduceMin",    "ReduceProd",
                                  "ReduceL1",  "ReduceL2",   "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

TEST(Reduce, EveryAxisSubsetOfA4DTensor) {
  const Shape s = {2, 3, 1, 4};
  // Positive values keep ReduceLogSum defined; the range keeps ReduceProd well scaled.
  Tensor x = random_f32(s, 11, 0.5f, 1.5f);
  for (const char* op : kReduceOps)
    for (int mask = 0; mask < 16; ++mask)
      for (int keep = 0; keep < 2; ++keep) {
        std::vector<int64_t> axes;
        std::vector<bool> reduced(4);
        for (int d = 0; d < 4; ++d)
          if (mask & (1 << d)) {
            axes.push_back(d - (mask % 3 == 0 ? 4 : 0));  // mix negative and positive axis numbers
            reduced[d] = true;
          }
        if (axes.empty()) reduced.assign(4, true);  // no axes: reduce everything
        SCOPED_TRACE(std::string(op) + " mask " + std::to_string(mask) + " keepdims " + std::to_string(keep));
        Attributes a = attrs_of({{"keepdims", Attribute::of_int(keep)}});
        if (!axes.empty()) a.set("axes", Attribute::of_ints(axes));
        Tensor y = run1(op, {arg(x)}, a, 13);
        Shape want_shape;
        for (int d = 0; d < 4; ++d)
          if (!reduced[d]) want_shape.push_back(s[d]);
          else if (keep) want_shape.push_back(1);
        ASSERT_EQ(y.shape(), want_shape);
        std::vector<double> want;
        for (const auto& g : groups(x, reduced)) want.push_back(reduce_def(op, g));
        expect_near_all(y, want, 1e-5, 1e-6);
      }
}

TEST(Reduce, AxesAsInputAndNoop) {
  Tensor x = f32({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  // ReduceSum-13: axes as a constant input.
  Tensor y = run1("ReduceSum", {arg(x), konst(i64({1}, {1}))}, attrs_of({{"keepdims", Attribute::of_int(0)}}), 13);
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{6.f, 15.f}));
  // ReduceMean-18 style: axes input on another reduction.
  Tensor m = run1("ReduceMean", {arg(x), konst(i64({1}, {0}))}, {}, 18);
  EXPECT_EQ(m.shape(), (Shape{1, 3}));
  EXPECT_EQ(values<float>(m), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  // Empty axes: everything, or nothing with noop_with_empty_axes.
  Tensor all = run1("ReduceSum", {arg(x), konst(i64({0}, {}))}, {}, 13);
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(values<float>(all), (std::vector<float>{21.f}));
  Tensor same = run1("ReduceSum", {arg(x), konst(i64({0}, {}))},
                     attrs_of({{"noop_with_empty_axes", Attribute::of_int(1)}}), 13);
  EXPECT_EQ(same.shape(), x.shape());
  EXPECT_EQ(values<float>(same), values<float>(x));
  // An empty axes tensor needs no values, so it may come at run time.
  Tensor rt = run1("ReduceSum", {arg(x), arg(i64({0}, {}))}, attrs_of({{"noop_with_empty_axes", Attribute::of_int(1)}}),
                   13);
  EXPECT_EQ(values<float>(rt), values<float>(x));
}

TEST(Reduce, EmptyReductionsGiveIdentities) {
  Tensor x = f32({2, 0, 3}, {});
  Attributes a = attrs_of({{"axes", Attribute::of_ints({1})}});
  auto run = [&](const char* op) { return values<float>(run1(op, {arg(x)}, a, 13)); };
  EXPECT_EQ(run("ReduceSum"), std::vector<float>(6, 0.f));
  EXPECT_EQ(run("ReduceProd"), std::vector<float>(6, 1.f));
  EXPECT_EQ(run("ReduceMax"), std::vector<float>(6, -std::numeric_limits<float>::infinity()));
  EXPECT_EQ(run("ReduceMin"), std::vector<float>(6, std::numeric_limits<float>::infinity()));
  EXPECT_EQ(run("ReduceLogSumExp"), std::vector<float>(6, -std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(std::isnan(run("ReduceMean")[0]));
  // A kept dimension of size 0 leaves nothing to compute.
  Tensor z = run1("ReduceSum", {arg(f32({0, 4}, {}))}, attrs_of({{"axes", Attribute::of_ints({1})}}), 13);
  EXPECT_EQ(z.shape(), (Shape{0, 1}));
}

TEST(Reduce, Integers) {
  Tensor x = i64({2, 3}, {1, -2, 3, 4, 5, -6});
  Attributes a = attrs_of({{"axes", Attribute::of_ints({1})}, {"keepdims", Attribute::of_int(0)}});
  EXPECT_EQ(values<int64_t>(run1("ReduceSum", {arg(x)}, a, 11)), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<int64_t>(run1("ReduceProd", {arg(x)}, a, 11)), (std::vector<int64_t>{-6, -120}));
  EXPECT_EQ(values<int64_t>(run1("ReduceMax", {arg(x)}, a, 11)), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(values<int64_t>(run1("ReduceMin", {arg(x)}, a, 11)), (std::vector<int64_t>{-2, -6}));
  EXPECT_EQ(values<int32_t>(run1("ReduceL1", {arg(i32({3}, {-1, 2, -3}))}, {}, 11)), (std::vector<int32_t>{6}));
}

TEST(Reduce, LogSumExpIsStable) {
  Tensor x = f64({3}, {1000.0, 1000.0, 1000.0});
  Tensor y = run1("ReduceLogSumExp", {arg(x)}, {}, 13);
  EXPECT_NEAR(y.data_as<double>()[0], 1000.0 + std::log(3.0), 1e-9);
}

TEST(Reduce, ThreadsAgreeOnLargeInput) {
  Tensor x = random_f32({64, 1000}, 3, -1.f, 1.f);
  for (int axis : {0, 1})
    for (int threads : {1, 2}) {
      OpSpec s;
      s.op_type = "ReduceMean";
      s.inputs = {arg(x)};
      s.attrs = attrs_of({{"axes", Attribute::of_ints({axis})}});
      s.opset = 13;
      s.threads = threads;
      std::vector<double> want;
      std::vector<bool> reduced = {axis == 0, axis == 1};
      for (const auto& g : groups(x, reduced)) want.push_back(reduce_def("ReduceMean", g));
      expect_near_all(run_op(s)[0], want, 1e-5, 1e-6);
    }
}

TEST(Reduce, Errors) {
  OpSpec s;
  s.op_type = "ReduceSum";
  s.opset = 11;
  s.inputs = {arg(f32({2, 2}, {1.f, 2.f, 3.f, 4.f}))};
  s.attrs = attrs_of({{"axes", Attribute::of_ints({1, -1})}});
  EXPECT_NE(error_of(s).find("twice"), std::string::npos);
  s.attrs = attrs_of({{"axes", Attribute::of_ints({2})}});
  EXPECT_NE(error_of(s).find("out of range"), std::string::npos);
  // Axes given as a model input decide the output shape when the session plans, from each run's contents.
  s.attrs = {};
  s.opset = 13;
  s.inputs = {arg(f32({2, 2}, {1.f, 2.f, 3.f, 4.f})), arg(i64({1}, {2}))};
  EXPECT_NE(error_of(s).find("out of range"), std::string::npos);
  s.inputs = {arg(f32({2, 2}, {1.f, 2.f, 3.f, 4.f})), arg(i64({1}, {0}))};
  const Tensor sum0 = run_op(s)[0];
  EXPECT_EQ(sum0.shape(), (Shape{1, 2}));
  EXPECT_EQ(std::vector<float>(sum0.data_as<float>(), sum0.data_as<float>() + 2), (std::vector<float>{4.f, 6.f}));
  s.inputs = {arg(Tensor::zeros(DataType::UInt8, {2}))};
  const std::string e = error_of(s);
  EXPECT_NE(e.find("unsupported type uint8"), std::string::npos) << e;
}

TEST(ArgMax, AxesKeepdimsAndTies) {
  Tensor x = f32({2, 3}, {1.f, 7.f, 7.f, 9.f, 2.f, 9.f});
  Attributes a1 = attrs_of({{"axis", Attribute::of_int(1)}});
  Tensor y = run1("ArgMax", {arg(x)}, a1);
  EXPECT_EQ(y.dtype(), DataType::Int64);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{1, 0}));
  Attributes last = a1;
  last.set("select_last_index", Attribute::of_int(1));
  EXPECT_EQ(values<int64_t>(run1("ArgMax", {arg(x)}, last)), (std::vector<int64_t>{2, 2}));
  // Default axis 0, no keepdims.
  Tensor z = run1("ArgMin", {arg(x)}, attrs_of({{"keepdims", Attribute::of_int(0)}}));
  EXPECT_EQ(z.shape(), (Shape{3}));
  EXPECT_EQ(values<int64_t>(z), (std::vector<int64_t>{0, 1, 0}));
  // Negative axis on a 3-D int32 input.
  Tensor w = run1("ArgMin", {arg(i32({2, 2, 2}, {5, 1, 0, 3, 2, 2, -1, 4}))}, attrs_of({{"axis", Attribute::of_int(-2)}}));
  EXPECT_EQ(w.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values<int64_t>(w), (std::vector<int64_t>{1, 0, 1, 0}));
}

TEST(ArgMax, EmptyAxisIsAnError) {
  OpSpec s;
  s.op_type = "ArgMax";
  s.inputs = {arg(f32({2, 0}, {}))};
  s.attrs = attrs_of({{"axis", Attribute::of_int(1)}});
  EXPECT_NE(error_of(s).find("size 0"), std::string::npos);
}

}  // namespace
}  // namespace ninegrid
