// Strassen 1x1 convolution (ops/conv_strassen.h), levels 0 and 1, AVX2 and AVX-512, against the plain
// reference conv2d_ref on random shapes (odd planes, channel counts at and above the split's minimum,
// both input blocks, every activation, residual separate and in place), and the cost model's verdicts.
//
// Tolerance (conv_rounding_test_util.h): one level of Strassen sums, for each output, up to four
// half-size products M_i = P_i S_i whose operands are sums of W and X sub-matrices (P_i, S_i); the
// products' terms are larger than the direct conv's (cancellation happens only between the M_i). Each
// M_i rounds with a standard deviation of about u sqrt(ic / 2 + 2) rss_i, rss_i = sqrt(sum_k (P_i S_i)^2)
// computed here in double from the very operands, plus the sums that formed P_i and S_i and the
// combination of the M_i (a few more roundings of the same magnitudes: sqrt(ic / 2 + 8) is used). The
// sigmas of the M_i are added (an upper bound on their root-sum-square) to the reference's
// u sqrt(ic + 2) sqrt(sum (x w)^2), and 7 sigmas allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "conv_rounding_test_util.h"
#include "conv_test_util.h"
#include "ninegrid/tensor.h"
#include "ops/conv_cost_model.h"
#include "ops/conv_select.h"
#include "ops/conv_strassen.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

using namespace conv_test;
using namespace conv_rounding;

// sigma per output (plain NCHW) for `levels` levels of Strassen.
std::vector<double> strassen_sigma(const Case& c, int levels) {
  const Conv2dParams& p = c.p;
  const int64_t ic = p.in_channels, oc = p.out_channels, hw = p.in_h * p.in_w;
  const std::vector<double> direct = direct_terms_rss(c);
  std::vector<double> sigma(direct.size());
  for (size_t i = 0; i < sigma.size(); ++i) sigma[i] = kUnit * std::sqrt(double(ic + 2)) * direct[i] * 2;
  if (levels == 0) return sigma;
  const int64_t m = oc / 2, k = ic / 2, half = hw / 2;
  auto W = [&](int64_t o, int64_t i) { return double(c.w[o * ic + i]); };
  for (int64_t n = 0; n < p.batch; ++n) {
    auto X = [&](int64_t i, int64_t j) { return double(c.x[(n * ic + i) * hw + j]); };
    // P_i(o, i) and S_i(i, j) of the seven products, and the quadrants each contributes to.
    struct Product {
      std::function<double(int64_t, int64_t)> p, s;
      std::vector<int> quadrants;  // 0 = C11, 1 = C12, 2 = C21, 3 = C22
    };
    const std::vector<Product> products = {
        {[&](int64_t o, int64_t i) { return W(o, i) + W(m + o, k + i); },
         [&](int64_t i, int64_t j) { return X(i, j) + X(k + i, half + j); }, {0, 3}},
        {[&](int64_t o, int64_t i) { return W(m + o, i) + W(m + o, k + i); }, [&](int64_t i, int64_t j) { return X(i, j); },
         {2, 3}},
        {[&](int64_t o, int64_t i) { return W(o, i); },
         [&](int64_t i, int64_t j) { return X(i, half + j) - X(k + i, half + j); }, {1, 3}},
        {[&](int64_t o, int64_t i) { return W(m + o, k + i); },
         [&](int64_t i, int64_t j) { return X(k + i, j) - X(i, j); }, {0, 2}},
        {[&](int64_t o, int64_t i) { return W(o, i) + W(o, k + i); },
         [&](int64_t i, int64_t j) { return X(k + i, half + j); }, {0, 1}},
        {[&](int64_t o, int64_t i) { return W(m + o, i) - W(o, i); },
         [&](int64_t i, int64_t j) { return X(i, j) + X(i, half + j); }, {3}},
        {[&](int64_t o, int64_t i) { return W(o, k + i) - W(m + o, k + i); },
         [&](int64_t i, int64_t j) { return X(k + i, j) + X(k + i, half + j); }, {0}},
    };
    for (const Product& pr : products)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t j = 0; j < half; ++j) {
          double sum = 0;
          for (int64_t i = 0; i < k; ++i) sum += std::pow(pr.p(o, i) * pr.s(i, j), 2);
          const double s = kUnit * std::sqrt(double(k + 8)) * std::sqrt(sum);
          for (int q : pr.quadrants) {
            const int64_t channel = o + (q >= 2 ? m : 0), pixel = j + (q % 2 == 1 ? half : 0);
            sigma[static_cast<size_t>((n * oc + channel) * hw + pixel)] += s;
          }
        }
  }
  return sigma;
}

Conv2dParams pointwise(int64_t batch, int64_t ic, int64_t oc, int64_t h, int64_t w) {
  Conv2dParams p;
  p.batch = batch, p.in_channels = ic, p.out_channels = oc;
  p.in_h = p.out_h = h, p.in_w = p.out_w = w;
  return p;
}

std::vector<float> run_x86(const Case& c, Isa isa, int64_t in_block, int levels, ThreadPool* pool = nullptr,
                           bool in_place_residual = false) {
  const Conv2dParams& p = c.p;
  const int64_t out_block = isa == Isa::Avx512 ? 16 : 8, plane = p.in_h * p.in_w;
  const std::vector<float> xb = to_block(c.x, p.batch, p.in_channels, plane, in_block);
  std::vector<float> yb(static_cast<size_t>(p.batch * p.out_channels * plane)), rb;
  if (c.with_residual) {
    rb = to_block(c.residual, p.batch, p.out_channels, plane, out_block);
    if (in_place_residual) yb = rb;
  }
  const StrassenConv1x1 conv(p, c.w.data(), c.bias.data(), c.act, strassen_plan(p, in_block, out_block, isa, levels));
  EXPECT_EQ(conv.levels(), levels);
  conv.run(xb.data(), yb.data(), c.with_residual ? (in_place_residual ? yb.data() : rb.data()) : nullptr, pool);
  return from_block(yb, p.batch, p.out_channels, plane, out_block);
}

class StrassenX86 : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_has(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
  }
  int64_t lanes() const { return GetParam() == Isa::Avx512 ? 16 : 8; }
};

TEST_P(StrassenX86, MatchesDirectReference) {
  std::mt19937 rng(GetParam() == Isa::Avx512 ? 201 : 202);
  double worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t in_block = pick(rng, {8, 16});
    const Conv2dParams p = pointwise(pick(rng, {1, 1, 2}), 2 * in_block * uniform(rng, 1, 4),
                                     2 * lanes() * uniform(rng, 1, 3), uniform(rng, 1, 9), uniform(rng, 1, 13));
    const int levels = StrassenConv1x1::splittable(p, in_block, lanes()) ? trial % 2 : 0;
    const Case c = make_case(rng, p, trial, trial % 3 != 0);
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_x86(c, GetParam(), in_block, levels);
    const std::string what = "levels " + std::to_string(levels) + " in block " + std::to_string(in_block) + " " +
                             activation_name(c.act.kind) + " " + describe(p);
    worst = std::max(worst, check_within(got, want, tolerance_from_sigma(c, strassen_sigma(c, levels), want), what));
  }
  std::printf("%s strassen: largest error / tolerance %.3g\n", isa_name(GetParam()), worst);
}

// The tolerance is tight enough to matter: an error of 1% of an output (+0.01) exceeds it on most outputs.
TEST_P(StrassenX86, ToleranceIsBelowOnePercent) {
  std::mt19937 rng(211);
  const Conv2dParams p = pointwise(1, 64, 64, 8, 8);
  const Case c = make_case(rng, p, 0, false);
  const std::vector<float> want = expected(c);
  const std::vector<double> tol = tolerance_from_sigma(c, strassen_sigma(c, 1), want);
  check_within(run_x86(c, GetParam(), 16, 1), want, tol, "levels 1");
  size_t exceeded = 0;
  for (size_t i = 0; i < want.size(); ++i) exceeded += 0.01 * std::fabs(want[i]) + 0.01 > tol[i];
  EXPECT_GT(exceeded, want.size() * 9 / 10);
}

TEST_P(StrassenX86, ThreadedRunEqualsSingleThread) {
  std::mt19937 rng(221);
  ThreadPool pool(2);
  const Conv2dParams p = pointwise(2, 64, 4 * lanes(), 7, 9);
  const Case c = make_case(rng, p, 3, true);
  for (int levels : {0, 1}) EXPECT_EQ(run_x86(c, GetParam(), 16, levels), run_x86(c, GetParam(), 16, levels, &pool));
}

TEST_P(StrassenX86, ResidualMayBeTheOutput) {
  std::mt19937 rng(231);
  const Conv2dParams p = pointwise(1, 32, 2 * lanes(), 5, 5);
  const Case c = make_case(rng, p, 4, true);
  const std::vector<float> want = expected(c);
  for (int levels : {0, 1})
    check_within(run_x86(c, GetParam(), 16, levels, nullptr, true), want,
                 tolerance_from_sigma(c, strassen_sigma(c, levels), want), "in place, levels " + std::to_string(levels));
}

TEST_P(StrassenX86, RejectsWhatItCannotCompute) {
  const Conv2dParams p = pointwise(1, 32, 32, 4, 4);
  EXPECT_TRUE(StrassenConv1x1::supports(p, 16, lanes(), GetParam()));
  EXPECT_FALSE(StrassenConv1x1::supports(p, 1, lanes(), GetParam()));  // plain NCHW input
  EXPECT_FALSE(StrassenConv1x1::supports(p, 16, 1, GetParam()));        // plain NCHW output
  Conv2dParams q = p;
  q.kernel_h = q.kernel_w = 3, q.pad_top = q.pad_left = 1;
  EXPECT_FALSE(StrassenConv1x1::supports(q, 16, lanes(), GetParam()));
  std::vector<float> w(32 * 32, 0.f);
  const Conv2dParams tiny = pointwise(1, 16, lanes(), 1, 1);  // halves would not fill blocks; 1 pixel
  EXPECT_FALSE(StrassenConv1x1::splittable(tiny, 16, lanes()));
  EXPECT_THROW(StrassenConv1x1(tiny, w.data(), nullptr, Activation::none(), strassen_plan(tiny, 16, lanes(), GetParam(), 1)), Error);
  EXPECT_EQ(StrassenConv1x1(tiny, w.data(), nullptr, Activation::none(), strassen_plan(tiny, 16, lanes(), GetParam(), -1)).levels(), 0);
  EXPECT_THROW(StrassenConv1x1(p, w.data(), nullptr, Activation::prelu(nullptr), strassen_plan(p, 16, lanes(), GetParam())), Error);
}

INSTANTIATE_TEST_SUITE_P(Isa, StrassenX86, ::testing::Values(Isa::Avx2, Isa::Avx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

// MNN's finding, which the cost model reproduces: recursion pays only for large channel counts.
TEST(StrassenCostModel, RecursionPaysOnlyForLargeChannelCounts) {
  EXPECT_FALSE(strassen_recursion_pays(pointwise(1, 64, 64, 56, 56), Isa::Avx512));
  EXPECT_FALSE(strassen_recursion_pays(pointwise(1, 128, 128, 28, 28), Isa::Avx512));
  EXPECT_TRUE(strassen_recursion_pays(pointwise(1, 1024, 1024, 14, 14), Isa::Avx512));
}

}  // namespace
}  // namespace ninegrid
