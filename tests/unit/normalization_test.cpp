// BatchNormalization (inference), InstanceNormalization and LRN (one-node Graph/Session) against their
// formulas evaluated directly in double in this file.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "unit/elementwise_test_util.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::attrs_of;
using eltest::f32;
using eltest::konst;
using eltest::OpSpec;

Tensor random_tensor(std::mt19937& rng, const Shape& shape, float lo = -2.f, float hi = 2.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t = Tensor::empty(DataType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

TEST(BatchNormalizationOp, MatchesTheFormula) {
  std::mt19937 rng(1);
  for (const Shape& xs : {Shape{2, 3, 4, 5}, Shape{3, 5}, Shape{1, 17, 6}, Shape{2, 3, 2, 2, 2}}) {
    const int64_t c = xs[1];
    const Tensor x = random_tensor(rng, xs), scale = random_tensor(rng, {c}), b = random_tensor(rng, {c}),
                 mean = random_tensor(rng, {c}), var = random_tensor(rng, {c}, 0.1f, 3.f);
    const float eps = 1e-3f;
    OpSpec s;
    s.op_type = "BatchNormalization";
    s.inputs = {arg(x), konst(scale), konst(b), konst(mean), konst(var)};
    s.attrs = attrs_of({{"epsilon", Attribute::of_float(eps)}});
    s.num_outputs = 3;  // opset < 14 models may declare running mean and var outputs
    const auto out = eltest::run_op(s);
    int64_t plane = 1;
    for (size_t i = 2; i < xs.size(); ++i) plane *= xs[i];
    std::vector<double> want(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t ch = (i / plane) % c;
      want[i] = (x.data_as<float>()[i] - mean.data_as<float>()[ch]) / std::sqrt(double(var.data_as<float>()[ch]) + eps) *
                    scale.data_as<float>()[ch] + b.data_as<float>()[ch];
    }
    eltest::expect_near_all(out[0], want, 1e-5, 1e-6);
    EXPECT_EQ(eltest::values<float>(out[1]), eltest::values<float>(mean));
    EXPECT_EQ(eltest::values<float>(out[2]), eltest::values<float>(var));
  }
}

TEST(BatchNormalizationOp, Errors) {
  const Tensor x = f32({1, 2, 1, 1}, {1, 2}), p2 = f32({2}, {1, 1}), p3 = f32({3}, {1, 1, 1});
  auto err = [&](std::vector<eltest::In> in, Attributes a = {}) {
    OpSpec s;
    s.op_type = "BatchNormalization";
    s.inputs = std::move(in);
    s.attrs = std::move(a);
    return eltest::error_of(s);
  };
  std::string m = err({arg(x), konst(p2), konst(p3), konst(p2), konst(p2)});
  EXPECT_NE(m.find("B must have shape [2]"), std::string::npos) << m;
  m = err({arg(x), konst(p2), konst(p2), konst(p2), konst(p2)}, attrs_of({{"training_mode", Attribute::of_int(1)}}));
  EXPECT_NE(m.find("unsupported: training_mode"), std::string::npos) << m;
  m = err({arg(x), konst(p2), konst(p2), konst(p2)});
  EXPECT_NE(m.find("expects 5 inputs"), std::string::npos) << m;
  m = err({arg(f32({2}, {1, 2})), konst(p2), konst(p2), konst(p2), konst(p2)});
  EXPECT_NE(m.find("rank 2 or more"), std::string::npos) << m;
}

TEST(InstanceNormalizationOp, MatchesTheFormula) {
  std::mt19937 rng(2);
  const Shape xs = {2, 3, 4, 5};
  const Tensor x = random_tensor(rng, xs), scale = random_tensor(rng, {3}), b = random_tensor(rng, {3});
  const float eps = 1e-5f;
  const Tensor y = eltest::run1("InstanceNormalization", {arg(x), konst(scale), konst(b)},
                                attrs_of({{"epsilon", Attribute::of_float(eps)}}));
  std::vector<double> want;
  for (int64_t p = 0; p < 6; ++p) {
    const float* xp = x.data_as<float>() + p * 20;
    double mean = 0, var = 0;
    for (int i = 0; i < 20; ++i) mean += xp[i] / 20.0;
    for (int i = 0; i < 20; ++i) var += (xp[i] - mean) * (xp[i] - mean) / 20.0;
    for (int i = 0; i < 20; ++i)
      want.push_back(scale.data_as<float>()[p % 3] * (xp[i] - mean) / std::sqrt(var + eps) + b.data_as<float>()[p % 3]);
  }
  eltest::expect_near_all(y, want, 1e-5, 1e-5);
}

TEST(LrnOp, MatchesTheFormula) {
  std::mt19937 rng(3);
  const Shape xs = {2, 7, 3, 2};
  const Tensor x = random_tensor(rng, xs);
  for (int64_t size : {1, 2, 3, 5}) {
    const float alpha = 2e-2f, beta = 0.6f, bias = 1.5f;
    const Tensor y = eltest::run1("LRN", {arg(x)},
                                  attrs_of({{"size", Attribute::of_int(size)},
                                            {"alpha", Attribute::of_float(alpha)},
                                            {"beta", Attribute::of_float(beta)},
                                            {"bias", Attribute::of_float(bias)}}));
    std::vector<double> want;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 7; ++c)
        for (int64_t i = 0; i < 6; ++i) {
          // square_sum over channels max(0, c - floor((size-1)/2)) .. min(C-1, c + ceil((size-1)/2))
          double sq = 0;
          for (int64_t j = std::max<int64_t>(0, c - (size - 1) / 2); j <= std::min<int64_t>(6, c + size / 2); ++j) {
            const double v = x.data_as<float>()[(n * 7 + j) * 6 + i];
            sq += v * v;
          }
          want.push_back(x.data_as<float>()[(n * 7 + c) * 6 + i] / std::pow(bias + alpha / size * sq, beta));
        }
    eltest::expect_near_all(y, want, 1e-5, 1e-6);
  }
}

}  // namespace
}  // namespace ninegrid
