// Element-wise operators run as one-node graphs: unary math and activations, broadcasting binary
// arithmetic, comparisons and logic, Where, PRelu, Clip, variadic Sum/Mean/Max/Min. Expected values come
// from hand computation or from std:: math applied to hand-written inputs in double precision, with
// broadcasting done by explicit index arithmetic (not the engine's run-coalescing indexer).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "elementwise_test_util.h"

namespace ninegrid {
namespace {

using namespace eltest;

// Offset of output coordinate `coord` in an input of shape `in` broadcast to an output of rank
// coord.size(): leading dims are missing, size-1 dims repeat.
int64_t broadcast_offset(const Shape& in, const std::vector<int64_t>& coord) {
  const size_t lead = coord.size() - in.size();
  int64_t off = 0;
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : coord[lead + d]);
  return off;
}

std::vector<int64_t> unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

// y = f(a, b) over `out` by explicit index arithmetic.
template <class A, class B, class Y, class F>
std::vector<Y> naive_binary(const Shape& out, const Tensor& a, const Tensor& b, F f) {
  std::vector<Y> y(static_cast<size_t>(shape_numel(out)));
  for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
    const auto c = unravel(i, out);
    y[i] = f(a.data_as<A>()[broadcast_offset(a.shape(), c)], b.data_as<B>()[broadcast_offset(b.shape(), c)]);
  }
  return y;
}

Tensor random_f32(const Shape& shape, unsigned seed, float lo = -3.f, float hi = 3.f) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// ---------------------------------------------------------------- unary float

struct UnaryCase {
  const char* op;
  std::function<double(double)> f;  // the ONNX definition, evaluated in double
  std::vector<float> x;
  Attributes attrs;
};

TEST(UnaryFloat, MatchesDefinitions) {
  const std::vector<float> all = {-4.f, -1.5f, -0.5f, -0.f, 0.25f, 0.5f, 1.5f, 4.f};
  const std::vector<float> positive = {0.01f, 0.5f, 1.f, 2.f, 10.f, 1000.f};
  const std::vector<float> unit = {-0.99f, -0.5f, 0.f, 0.3f, 0.9f};
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  const std::vector<UnaryCase> cases = {
      {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, all, {}},
      {"Tanh", [](double v) { return std::tanh(v); }, all, {}},
      {"LeakyRelu", [](double v) { return v >= 0 ? v : 0.01 * v; }, all, {}},
      {"LeakyRelu", [](double v) { return v >= 0 ? v : 0.2 * v; }, all, attrs_of({{"alpha", Attribute::of_float(0.2f)}})},
      {"HardSigmoid", [](double v) { return std::min(1.0, std::max(0.0, 0.2 * v + 0.5)); }, all, {}},
      {"HardSigmoid", [](double v) { return std::min(1.0, std::max(0.0, 0.5 * v + 0.25)); }, all,
       attrs_of({{"alpha", Attribute::of_float(0.5f)}, {"beta", Attribute::of_float(0.25f)}})},
      {"HardSwish", [](double v) { return v * std::min(1.0, std::max(0.0, v / 6 + 0.5)); }, all, {}},
      {"Elu", [](double v) { return v > 0 ? v : std::exp(v) - 1; }, all, {}},
      {"Elu", [](double v) { return v > 0 ? v : 2 * (std::exp(v) - 1); }, all, attrs_of({{"alpha", Attribute::of_float(2.f)}})},
      {"Selu", [=](double v) { return selu_g * (v > 0 ? v : selu_a * (std::exp(v) - 1)); }, all, {}},
      {"Celu", [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); }, all,
       attrs_of({{"alpha", Attribute::of_float(2.f)}})},
      {"ThresholdedRelu", [](double v) { return v > 1 ? v : 0; }, all, {}},
      {"Softplus", [](double v) { return std::log(1 + std::exp(v)); }, all, {}},
      {"Softsign", [](double v) { return v / (1 + std::fabs(v)); }, all, {}},
      {"Shrink", [](double v) { return v < -0.5 ? v + 0.1 : (v > 0.5 ? v - 0.1 : 0); }, all,
       attrs_of({{"bias", Attribute::of_float(0.1f)}})},
      {"Gelu", [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, all, {}},
      {"Gelu", [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }, all,
       attrs_of({{"approximate", Attribute::of_string("tanh")}})},
      {"Exp", [](double v) { return std::exp(v); }, all, {}},
      {"Log", [](double v) { return std::log(v); }, positive, {}},
      {"Sqrt", [](double v) { return std::sqrt(v); }, positive, {}},
      {"Reciprocal", [](double v) { return 1 / v; }, positive, {}},
      {"Floor", [](double v) { return std::floor(v); }, all, {}},
      {"Ceil", [](double v) { return std::ceil(v); }, all, {}},
      {"Erf", [](double v) { return std::erf(v); }, all, {}},
      {"Sin", [](double v) { return std::sin(v); }, all, {}},
      {"Cos", [](double v) { return std::cos(v); }, all, {}},
      {"Tan", [](double v) { return std::tan(v); }, unit, {}},
      {"Asin", [](double v) { return std::asin(v); }, unit, {}},
      {"Acos", [](double v) { return std::acos(v); }, unit, {}},
      {"Atan", [](double v) { return std::atan(v); }, all, {}},
      {"Sinh", [](double v) { return std::sinh(v); }, all, {}},
      {"Cosh", [](double v) { return std::cosh(v); }, all, {}},
      {"Asinh", [](double v) { return std::asinh(v); }, all, {}},
      {"Acosh", [](double v) { return std::acosh(v); }, {1.f, 1.5f, 3.f, 100.f}, {}},
      {"Atanh", [](double v) { return std::atanh(v); }, unit, {}},
  };
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.op);
    const Shape shape = {static_cast<int64_t>(c.x.size())};
    Tensor y = run1(c.op, {arg(f32(shape, c.x))}, c.attrs);
    ASSERT_EQ(y.shape(), shape);
    std::vector<double> want;
    for (float v : c.x) want.push_back(c.f(v));
    expect_near_all(y, want, 2e-6, 1e-7);
  }
}

TEST(UnaryFloat, HandValues) {
  // HardSwish at its corners: 0 below -3, x above 3, x * (x/6 + 1/2) between.
  EXPECT_EQ(values<float>(run1("HardSwish", {arg(f32({4}, {-4.f, -3.f, 3.f, 5.f}))})),
            (std::vector<float>{0.f, 0.f, 3.f, 5.f}));
  // Round: halves go to the even neighbour.
  EXPECT_EQ(values<float>(run1("Round", {arg(f32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f}))})),
            (std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 3.f}));
  // Softplus must not overflow for large inputs, nor lose small values for very negative ones.
  // (log(1 + exp(-20)) in float would round 1 + 2e-9 to 1 and give 0.)
  Tensor sp = run1("Softplus", {arg(f32({2}, {100.f, -20.f}))});
  EXPECT_FLOAT_EQ(sp.data_as<float>()[0], 100.f);
  EXPECT_NEAR(sp.data_as<float>()[1], std::exp(-20.0), 1e-6 * std::exp(-20.0));
  // Sigmoid saturates cleanly.
  EXPECT_EQ(values<float>(run1("Sigmoid", {arg(f32({2}, {-200.f, 200.f}))})), (std::vector<float>{0.f, 1.f}));
}

TEST(UnaryFloat, ZeroSizeAndScalar) {
  Tensor y = run1("Exp", {arg(f32({2, 0, 3}, {}))});
  EXPECT_EQ(y.shape(), (Shape{2, 0, 3}));
  Tensor s = run1("Neg", {arg(f32({}, {2.5f}))});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.data_as<float>()[0], -2.5f);
}

TEST(UnaryFloat, RejectsOtherTypes) {
  OpSpec s;
  s.op_type = "Sigmoid";
  s.inputs = {arg(i64({2}, {1, 2}))};
  const std::string e = error_of(s);
  EXPECT_NE(e.find("unsupported"), std::string::npos) << e;
  EXPECT_NE(e.find("int64"), std::string::npos) << e;
  EXPECT_NE(e.find("node_under_test"), std::string::npos) << e;
}

TEST(UnaryFloat, RejectsBadGeluApproximation) {
  OpSpec s;
  s.op_type = "Gelu";
  s.inputs = {arg(f32({1}, {1.f}))};
  s.attrs = attrs_of({{"approximate", Attribute::of_string("fast")}});
  EXPECT_NE(error_of(s).find("approximate"), std::string::npos);
}

// ---------------------------------------------------------------- unary typed

TEST(UnaryTyped, IntegerReluNegAbsSign) {
  EXPECT_EQ(values<int32_t>(run1("Relu", {arg(i32({4}, {-5, 0, 7, -1}))})), (std::vector<int32_t>{0, 0, 7, 0}));
  EXPECT_EQ(values<float>(run1("Relu", {arg(f32({3}, {-2.f, 0.f, 1.5f}))})), (std::vector<float>{0.f, 0.f, 1.5f}));
  const int64_t lo = std::numeric_limits<int64_t>::min();
  // Negating the most negative value wraps to itself (two's complement) instead of being undefined.
  EXPECT_EQ(values<int64_t>(run1("Neg", {arg(i64({3}, {3, -4, lo}))})), (std::vector<int64_t>{-3, 4, lo}));
  EXPECT_EQ(values<int8_t>(run1("Abs", {arg(i8({3}, {-7, 5, -128}))})), (std::vector<int8_t>{7, 5, -128}));
  EXPECT_EQ(values<uint8_t>(run1("Abs", {arg(u8({2}, {200, 3}))})), (std::vector<uint8_t>{200, 3}));
  EXPECT_EQ(values<int64_t>(run1("Sign", {arg(i64({3}, {-9, 0, 4}))})), (std::vector<int64_t>{-1, 0, 1}));
  Tensor s = run1("Sign", {arg(f32({4}, {-0.5f, 0.f, 2.f, std::nanf("")}))});
  EXPECT_EQ(s.data_as<float>()[0], -1.f);
  EXPECT_EQ(s.data_as<float>()[1], 0.f);
  EXPECT_EQ(s.data_as<float>()[2], 1.f);
  EXPECT_TRUE(std::isnan(s.data_as<float>()[3]));
}

TEST(UnaryTyped, NotIsNanIsInf) {
  EXPECT_EQ(values<bool>(run1("Not", {arg(boolean({3}, {1, 0, 1}))})), (std::vector<bool>{false, true, false}));
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = f32({4}, {1.f, std::nanf(""), inf, -inf});
  EXPECT_EQ(values<bool>(run1("IsNaN", {arg(x)})), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(values<bool>(run1("IsInf", {arg(x)})), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(values<bool>(run1("IsInf", {arg(x)}, attrs_of({{"detect_positive", Attribute::of_int(0)}}))),
            (std::vector<bool>{false, false, false, true}));
}

// ---------------------------------------------------------------- Clip

TEST(Clip, BoundsAsOptionalInputs) {
  Tensor x = f32({5}, {-3.f, -1.f, 0.5f, 2.f, 9.f});
  EXPECT_EQ(values<float>(run1("Clip", {arg(x), konst(f32({}, {-1.5f})), konst(f32({}, {2.5f}))})),
            (std::vector<float>{-1.5f, -1.f, 0.5f, 2.f, 2.5f}));
  // Only max: min omitted.
  EXPECT_EQ(values<float>(run1("Clip", {arg(x), omitted(), konst(f32({}, {1.f}))})),
            (std::vector<float>{-3.f, -1.f, 0.5f, 1.f, 1.f}));
  // Only min, given at run time.
  EXPECT_EQ(values<float>(run1("Clip", {arg(x), arg(f32({}, {0.f}))})),
            (std::vector<float>{0.f, 0.f, 0.5f, 2.f, 9.f}));
  // No bounds: identity.
  EXPECT_EQ(values<float>(run1("Clip", {arg(x)})), values<float>(x));
  // min > max gives max everywhere (as ONNX Runtime does).
  EXPECT_EQ(values<float>(run1("Clip", {arg(x), konst(f32({}, {3.f})), konst(f32({}, {1.f}))})),
            (std::vector<float>(5, 1.f)));
}

TEST(Clip, IntegersAndAttributeForm) {
  EXPECT_EQ(values<int8_t>(run1("Clip", {arg(i8({4}, {-128, -3, 5, 127})), konst(i8({}, {-4})), konst(i8({}, {6}))})),
            (std::vector<int8_t>{-4, -3, 5, 6}));
  EXPECT_EQ(values<int64_t>(run1("Clip", {arg(i64({3}, {-10, 0, 10})), konst(i64({}, {-1}))})),
            (std::vector<int64_t>{-1, 0, 10}));
  // Clip-6 attributes on a graph built without the importer.
  EXPECT_EQ(values<float>(run1("Clip", {arg(f32({3}, {-1.f, 3.f, 7.f}))},
                               attrs_of({{"min", Attribute::of_float(0.f)}, {"max", Attribute::of_float(6.f)}}))),
            (std::vector<float>{0.f, 3.f, 6.f}));
}

TEST(Clip, RejectsNonScalarOrMistypedBounds) {
  OpSpec s;
  s.op_type = "Clip";
  s.inputs = {arg(f32({2}, {1.f, 2.f})), konst(f32({2}, {0.f, 1.f}))};
  EXPECT_NE(error_of(s).find("scalar"), std::string::npos);
  s.inputs = {arg(f32({2}, {1.f, 2.f})), konst(i64({}, {0}))};
  EXPECT_NE(error_of(s).find("int64"), std::string::npos);
}

// ---------------------------------------------------------------- broadcasting binary

TEST(Binary, BroadcastShapesAgainstIndexArithmetic) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {3, 1}, {2, 3, 4}},     {{2, 3, 4}, {4}, {2, 3, 4}},       {{2, 3, 4}, {1}, {2, 3, 4}},
      {{2, 3, 4}, {}, {2, 3, 4}},         {{}, {2, 3}, {2, 3}},              {{2, 1, 4}, {3, 1}, {2, 3, 4}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}, {2, 3, 4, 5}}, {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{3, 1}, {1, 3}, {3, 3}},
      {{1, 4, 2, 2}, {4, 1, 1}, {1, 4, 2, 2}},    {{1}, {1}, {1}},           {{5, 1, 1}, {1}, {5, 1, 1}},
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.a) + " vs " + shape_str(c.b));
    Tensor a = random_f32(c.a, seed++), b = random_f32(c.b, seed++, 0.5f, 2.f);
    const std::vector<std::pair<const char*, std::function<float(float, float)>>> ops = {
        {"Add", [](float x, float y) { return x + y; }},
        {"Sub", [](float x, float y) { return x - y; }},
        {"Mul", [](float x, float y) { return x * y; }},
        {"Div", [](float x, float y) { return x / y; }},
    };
    for (const auto& op : ops) {
      Tensor y = run1(op.first, {arg(a), arg(b)});
      ASSERT_EQ(y.shape(), c.out) << op.first;
      EXPECT_EQ(values<float>(y), (naive_binary<float, float, float>(c.out, a, b, op.second))) << op.first;
    }
  }
}

TEST(Binary, RandomShapesAgainstIndexArithmetic) {
  // Random pairs of rank <= 5 where each dimension is either shared or 1 on one side.
  std::mt19937 rng(42);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = static_cast<int>(rng() % 6);
    Shape out(rank), a, b;
    for (int d = 0; d < rank; ++d) out[d] = 1 + rng() % 4;
    const int ra = static_cast<int>(rng() % (rank + 1)), rb = static_cast<int>(rng() % (rank + 1));
    for (int d = rank - ra; d < rank; ++d) a.push_back(rng() % 3 == 0 ? 1 : out[d]);
    for (int d = rank - rb; d < rank; ++d) b.push_back(rng() % 3 == 0 ? 1 : out[d]);
    Shape want;  // rank max(ra, rb); a missing or size-1 dimension takes the other side's
    for (int d = rank - std::max(ra, rb); d < rank; ++d) {
      const int64_t da = d >= rank - ra ? a[d - (rank - ra)] : 1, db = d >= rank - rb ? b[d - (rank - rb)] : 1;
      want.push_back(std::max(da, db));
    }
    SCOPED_TRACE(shape_str(a) + " vs " + shape_str(b));
    Tensor ta = random_f32(a, 100 + iter), tb = random_f32(b, 200 + iter);
    Tensor y = run1("Sub", {arg(ta), arg(tb)});
    ASSERT_EQ(y.shape(), want);
    EXPECT_EQ(values<float>(y), (naive_binary<float, float, float>(want, ta, tb, [](float x, float z) { return x - z; })));
  }
}

TEST(Binary, ZeroSizeDimensions) {
  Tensor y = run1("Add", {arg(f32({0, 3}, {})), arg(f32({1, 3}, {1.f, 2.f, 3.f}))});
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
  Tensor z = run1("Mul", {arg(f32({2, 0}, {})), arg(f32({}, {2.f}))});
  EXPECT_EQ(z.shape(), (Shape{2, 0}));
  Tensor w = run1("Less", {arg(f32({0}, {})), arg(f32({1}, {2.f}))});
  EXPECT_EQ(w.shape(), (Shape{0}));
  EXPECT_EQ(w.dtype(), DataType::Bool);
}

TEST(Binary, IncompatibleShapesAreAnError) {
  OpSpec s;
  s.op_type = "Add";
  s.inputs = {arg(f32({2, 3}, std::vector<float>(6, 0.f))), arg(f32({4}, std::vector<float>(4, 0.f)))};
  const std::string e = error_of(s);
  EXPECT_NE(e.find("2x3"), std::string::npos) << e;
  EXPECT_NE(e.find("broadcast"), std::string::npos) << e;
}

TEST(Binary, TypeErrors) {
  OpSpec s;
  s.op_type = "Add";
  s.inputs = {arg(f32({1}, {1.f})), arg(i64({1}, {1}))};
  EXPECT_NE(error_of(s).find("same type"), std::string::npos);
  s.inputs = {arg(Tensor::zeros(DataType::Float16, {2})), arg(Tensor::zeros(DataType::Float16, {2}))};
  const std::string e = error_of(s);
  EXPECT_NE(e.find("unsupported"), std::string::npos) << e;
  EXPECT_NE(e.find("float16"), std::string::npos) << e;
  s.op_type = "And";
  s.inputs = {arg(f32({1}, {1.f})), arg(f32({1}, {1.f}))};
  EXPECT_NE(error_of(s).find("unsupported type float32"), std::string::npos);
}

TEST(Binary, IntegerArithmetic) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  // Shape arithmetic as exported graphs do it: int64 with a broadcast scalar.
  EXPECT_EQ(values<int64_t>(run1("Mul", {arg(i64({3}, {1, 3, 224})), konst(i64({}, {2}))})),
            (std::vector<int64_t>{2, 6, 448}));
  // Overflow wraps instead of being undefined.
  EXPECT_EQ(values<int64_t>(run1("Add", {arg(i64({1}, {big})), arg(i64({1}, {1}))})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(values<uint8_t>(run1("Sub", {arg(u8({2}, {3, 250})), arg(u8({2}, {5, 10}))})),
            (std::vector<uint8_t>{254, 240}));
  // Division truncates toward zero; by zero gives 0; MIN / -1 wraps.
  const int32_t lo = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(values<int32_t>(run1("Div", {arg(i32({5}, {7, -7, 7, 5, lo})), arg(i32({5}, {-2, 2, 2, 0, -1}))})),
            (std::vector<int32_t>{-3, -3, 3, 0, lo}));
}

TEST(Binary, Mod) {
  Tensor a = i32({6}, {-7, 7, -7, 7, 5, 4}), b = i32({6}, {3, -3, -3, 3, 0, 2});
  // fmod=0: the result takes the divisor's sign (Python's %).
  EXPECT_EQ(values<int32_t>(run1("Mod", {arg(a), arg(b)})), (std::vector<int32_t>{2, -2, -1, 1, 0, 0}));
  // fmod=1: the dividend's sign (C's %).
  EXPECT_EQ(values<int32_t>(run1("Mod", {arg(a), arg(b)}, attrs_of({{"fmod", Attribute::of_int(1)}}))),
            (std::vector<int32_t>{-1, 1, -1, 1, 0, 0}));
  EXPECT_EQ(values<float>(run1("Mod", {arg(f32({3}, {-7.5f, 7.5f, 5.f})), arg(f32({1}, {2.f}))},
                               attrs_of({{"fmod", Attribute::of_int(1)}}))),
            (std::vector<float>{-1.5f, 1.5f, 1.f}));
  OpSpec s;
  s.op_type = "Mod";
  s.inputs = {arg(f32({1}, {1.f})), arg(f32({1}, {1.f}))};
  EXPECT_NE(error_of(s).find("fmod"), std::string::npos);
}

TEST(Binary, PowMixedTypes) {
  Tensor y = run1("Pow", {arg(f32({3}, {2.f, 3.f, 4.f})), konst(i64({}, {2}))});
  EXPECT_EQ(y.dtype(), DataType::Float32);
  EXPECT_EQ(values<float>(y), (std::vector<float>{4.f, 9.f, 16.f}));
  Tensor z = run1("Pow", {arg(i32({3}, {2, 3, -2})), arg(f32({3}, {3.f, 0.5f, 3.f}))});
  EXPECT_EQ(z.dtype(), DataType::Int32);
  EXPECT_EQ(values<int32_t>(z), (std::vector<int32_t>{8, 1, -8}));  // 3^0.5 = 1.73 truncates to 1
  expect_near_all(run1("Pow", {arg(f32({2, 2}, {1.f, 2.f, 3.f, 4.f})), arg(f32({2}, {0.5f, -1.f}))}),
                  {1.0, 0.5, std::sqrt(3.0), 0.25});
}

TEST(Binary, ComparisonsAndLogic) {
  Tensor a = f32({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}), b = f32({3}, {2.f, 2.f, 7.f});
  EXPECT_EQ(values<bool>(run1("Less", {arg(a), arg(b)})), (std::vector<bool>{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(values<bool>(run1("LessOrEqual", {arg(a), arg(b)})), (std::vector<bool>{1, 1, 1, 0, 0, 1}));
  EXPECT_EQ(values<bool>(run1("Greater", {arg(a), arg(b)})), (std::vector<bool>{0, 0, 0, 1, 1, 0}));
  EXPECT_EQ(values<bool>(run1("GreaterOrEqual", {arg(a), arg(b)})), (std::vector<bool>{0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(values<bool>(run1("Equal", {arg(a), arg(b)})), (std::vector<bool>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(values<bool>(run1("Equal", {arg(i64({2, 1}, {3, 4})), arg(i64({2}, {4, 3}))})),
            (std::vector<bool>{0, 1, 1, 0}));
  EXPECT_EQ(values<bool>(run1("Equal", {arg(boolean({2}, {1, 0})), arg(boolean({1}, {0}))})),
            (std::vector<bool>{0, 1}));
  Tensor p = boolean({2, 2}, {0, 0, 1, 1}), q = boolean({2}, {0, 1});
  EXPECT_EQ(values<bool>(run1("And", {arg(p), arg(q)})), (std::vector<bool>{0, 0, 0, 1}));
  EXPECT_EQ(values<bool>(run1("Or", {arg(p), arg(q)})), (std::vector<bool>{0, 1, 1, 1}));
  EXPECT_EQ(values<bool>(run1("Xor", {arg(p), arg(q)})), (std::vector<bool>{0, 1, 1, 0}));
}

TEST(Binary, LargeTensorsSplitAcrossThreads) {
  // Big enough to take the thread pool; rows of a per-row and a per-column operand.
  Tensor a = random_f32({3, 40000}, 5), b = random_f32({3, 1}, 6), c = random_f32({40000}, 7);
  for (int threads : {1, 2, 3}) {
    OpSpec s;
    s.op_type = "Add";
    s.threads = threads;
    s.inputs = {arg(a), arg(b)};
    EXPECT_EQ(values<float>(run_op(s)[0]),
              (naive_binary<float, float, float>({3, 40000}, a, b, [](float x, float y) { return x + y; })));
    s.op_type = "Mul";
    s.inputs = {arg(a), arg(c)};
    EXPECT_EQ(values<float>(run_op(s)[0]),
              (naive_binary<float, float, float>({3, 40000}, a, c, [](float x, float y) { return x * y; })));
  }
}

// ---------------------------------------------------------------- PRelu, Where, variadic

TEST(PRelu, PerChannelSlope) {
  Tensor x = f32({1, 2, 2, 2}, {-1.f, 2.f, -3.f, 4.f, -5.f, 6.f, 0.f, -8.f});
  Tensor slope = f32({2, 1, 1}, {0.5f, 0.25f});
  EXPECT_EQ(values<float>(run1("PRelu", {arg(x), konst(slope)})),
            (std::vector<float>{-0.5f, 2.f, -1.5f, 4.f, -1.25f, 6.f, 0.f, -2.f}));
  OpSpec s;
  s.op_type = "PRelu";
  s.inputs = {arg(f32({2}, {1.f, -1.f})), konst(f32({2, 2}, {1.f, 1.f, 1.f, 1.f}))};  // would grow X
  EXPECT_NE(error_of(s).find("does not broadcast"), std::string::npos);
}

TEST(Where, ThreeWayBroadcast) {
  Tensor cond = boolean({2, 1}, {1, 0});
  Tensor x = f32({1, 3}, {1.f, 2.f, 3.f});
  Tensor y = f32({}, {-1.f});
  Tensor out = run1("Where", {arg(cond), arg(x), arg(y)});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{1.f, 2.f, 3.f, -1.f, -1.f, -1.f}));
  Tensor l = run1("Where", {arg(boolean({3}, {0, 1, 0})), arg(i64({3}, {1, 2, 3})), arg(i64({1}, {9}))});
  EXPECT_EQ(values<int64_t>(l), (std::vector<int64_t>{9, 2, 9}));
  OpSpec s;
  s.op_type = "Where";
  s.inputs = {arg(f32({1}, {1.f})), arg(x), arg(y)};
  EXPECT_NE(error_of(s).find("condition"), std::string::npos);
}

TEST(Variadic, SumMeanMaxMin) {
  Tensor a = f32({3}, {1.f, 2.f, 3.f}), b = f32({2, 3}, {10.f, 20.f, 30.f, 40.f, 50.f, 60.f}), c = f32({2, 1}, {-1.f, 5.f});
  EXPECT_EQ(values<float>(run1("Sum", {arg(a), arg(b), arg(c)})),
            (std::vector<float>{10.f, 21.f, 32.f, 46.f, 57.f, 68.f}));
  expect_near_all(run1("Mean", {arg(a), arg(b), arg(c)}), {10.0 / 3, 7.0, 32.0 / 3, 46.0 / 3, 19.0, 68.0 / 3});
  EXPECT_EQ(values<float>(run1("Max", {arg(a), arg(c)})), (std::vector<float>{1.f, 2.f, 3.f, 5.f, 5.f, 5.f}));
  EXPECT_EQ(values<int32_t>(run1("Min", {arg(i32({2}, {4, -2})), arg(i32({1}, {0})), arg(i32({2}, {3, 7}))})),
            (std::vector<int32_t>{0, -2}));
  EXPECT_EQ(values<float>(run1("Max", {arg(a)})), values<float>(a));
  // NaN propagates through Max and Min, as in numpy.
  Tensor n = run1("Max", {arg(f32({2}, {std::nanf(""), 1.f})), arg(f32({2}, {0.f, std::nanf("")}))});
  EXPECT_TRUE(std::isnan(n.data_as<float>()[0]));
  EXPECT_TRUE(std::isnan(n.data_as<float>()[1]));
  OpSpec s;
  s.op_type = "Sum";
  s.inputs = {arg(i64({1}, {1})), arg(i64({1}, {1}))};
  EXPECT_NE(error_of(s).find("unsupported type int64"), std::string::npos);
}

}  // namespace
}  // namespace ninegrid
