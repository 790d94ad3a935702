// The calibration arithmetic of `ninegrid quantize` (tools/quant_calibration.h) on histograms whose
// right answers are known: the growing histogram against direct binning, each range method on data with
// known tails, the KL search on hand-built histograms, and the quantisation parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "quant_calibration.h"

namespace ninegrid::quant {
namespace {

TEST(QuantHistogram, GrowingKeepsEveryValueInItsBin) {
  // Batches with ever larger ranges: the width doubles several times; the result must equal binning
  // every value directly with the final width.
  std::mt19937 rng(7);
  std::vector<float> all;
  Histogram h;
  for (float range : {1.f, 3.f, 40.f, 1000.f}) {
    std::uniform_real_distribution<float> d(-range, range);
    std::vector<float> batch(5000);
    for (float& v : batch) v = d(rng);
    batch[0] = range * 0.999f;
    batch[1] = 0.f;
    h.add(batch.data(), batch.size());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  ASSERT_GT(h.bin_width(), 0);
  EXPECT_GE(h.bin_width() * Histogram::kBins, 999.0);           // the largest value fits
  EXPECT_LT(h.bin_width() * Histogram::kBins, 2 * 1000.0);       // and at least half the bins are in use
  std::vector<uint64_t> pos(Histogram::kBins, 0), neg(Histogram::kBins, 0);
  uint64_t zeros = 0;
  float mn = all[0], mx = all[0];
  for (float v : all) {
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    if (v == 0) {
      ++zeros;
      continue;
    }
    const int bin = std::min(Histogram::kBins - 1, static_cast<int>(std::fabs(static_cast<double>(v)) / h.bin_width()));
    ++(v > 0 ? pos : neg)[bin];
  }
  EXPECT_EQ(h.count(), all.size());
  EXPECT_EQ(h.zeros(), zeros);
  EXPECT_EQ(h.min(), mn);
  EXPECT_EQ(h.max(), mx);
  // Merged bins are exact except where a value sat within rounding of an old edge: allow none to move
  // by more than one bin, and almost all to match.
  uint64_t moved = 0;
  for (int i = 0; i < Histogram::kBins; ++i)
    moved += static_cast<uint64_t>(std::llabs(static_cast<long long>(pos[i]) - static_cast<long long>(h.positive()[i])) +
                                   std::llabs(static_cast<long long>(neg[i]) - static_cast<long long>(h.negative()[i])));
  EXPECT_LE(moved, 4u);
}

TEST(QuantHistogram, NonFiniteValuesAreCountedApart) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {1.f, -2.f, std::nanf(""), inf, -inf, 0.f};
  Histogram h;
  h.add(v.data(), v.size());
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.non_finite(), 3u);
  EXPECT_EQ(h.min(), -2.0);
  EXPECT_EQ(h.max(), 1.0);
}

TEST(QuantRange, MinMaxIsExact) {
  std::vector<float> v = {0.5f, -0.25f, 3.75f, 0.f};
  Histogram h;
  h.add(v.data(), v.size());
  const Range r = minmax_range(h);
  EXPECT_EQ(r.lo, -0.25);
  EXPECT_EQ(r.hi, 3.75);
}

// 99 990 values spread evenly over (0, 1) (and mirrored negative when `mirrored`), plus 10 outliers at
// +100 (and -100): 100 000 values a side.
Histogram body_with_outliers(bool mirrored) {
  std::vector<float> v;
  for (int i = 0; i < 99990; ++i) {
    const float x = (i + 0.5f) / 99990.f;
    v.push_back(x);
    if (mirrored) v.push_back(-x);
  }
  for (int i = 0; i < 10; ++i) {
    v.push_back(100.f);
    if (mirrored) v.push_back(-100.f);
  }
  Histogram h;
  h.add(v.data(), v.size());
  return h;
}

TEST(QuantRange, PercentileClipsExactlyTheTail) {
  const Histogram h = body_with_outliers(false);
  const double w = h.bin_width();
  // 99.99% of 100 000 leaves 10 values above the range: exactly the outliers.
  Range r = percentile_range(h, 99.99);
  EXPECT_GE(r.hi, 0.9999);
  EXPECT_LE(r.hi, 1.0 + w);
  EXPECT_EQ(r.lo, h.min());
  // 97% leaves 3000: the outliers and the top bin of the body (about 2340 values) fit, the next bin
  // does not, so the range ends at the lower edge of the body's top bin.
  r = percentile_range(h, 97);
  EXPECT_NEAR(r.hi, std::floor(1.0 / w) * w, 1e-9);
  // 99.9999% leaves 0.1 values: nothing can go, the outliers stay.
  EXPECT_NEAR(percentile_range(h, 99.9999).hi, 100.0, 1e-9);
  EXPECT_NEAR(percentile_range(h, 100).hi, 100.0, 1e-9);
}

TEST(QuantRange, PercentileClipsEachSideOnItsOwn) {
  const Histogram h = body_with_outliers(true);  // 200 000 values: 20 may go from each side at 99.99%
  const Range r = percentile_range(h, 99.99);
  EXPECT_LT(r.hi, 1.0 + h.bin_width());
  EXPECT_GT(r.hi, 0.99);
  EXPECT_GT(r.lo, -1.0 - h.bin_width());
  EXPECT_LT(r.lo, -0.99);
}

TEST(QuantKl, DivergenceOfKnownDistributions) {
  EXPECT_NEAR(kl_divergence({1, 1}, {1, 1}), 0.0, 1e-12);
  // P = (1/2, 1/2), Q = (1/4, 3/4): 1/2 ln 2 + 1/2 ln(2/3).
  EXPECT_NEAR(kl_divergence({2, 2}, {1, 3}), 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-12);
  // Bins where P is empty do not count; where Q is empty, the divergence is large but finite.
  EXPECT_NEAR(kl_divergence({0, 1}, {5, 1}), std::log(6.0), 1e-12);
  EXPECT_GT(kl_divergence({1, 1}, {1, 0}), 5.0);
}

TEST(QuantKl, ClipsAFarOutlierOffASteepBody) {
  // A steep body in bins 0..7 and one value in bin 63. With 8 quantised bins, a threshold of 8 bins
  // keeps the body exactly (the outlier folds into bin 7: a tiny divergence); any wider one merges body
  // bins and flattens them. The search must choose 8.
  std::vector<uint64_t> hist(64, 0);
  const uint64_t body[8] = {1000, 500, 250, 125, 60, 30, 15, 8};
  for (int i = 0; i < 8; ++i) hist[i] = body[i];
  hist[63] = 1;
  EXPECT_EQ(kl_threshold_bins(hist, 8), 8u);
}

TEST(QuantKl, KeepsEverythingWhenNothingIsLost) {
  // Occupied bins 0..3 and 7, merged two by two into 4 levels: every level's mass lands back exactly on
  // the bins it came from (divergence 0), so the full width wins over clipping at 4 bins.
  std::vector<uint64_t> hist = {10, 10, 10, 10, 0, 0, 0, 1, 0, 0};
  EXPECT_EQ(kl_threshold_bins(hist, 4), 8u);  // trailing empty bins are not searched
  // No more occupied bins than levels: no search, the whole occupied length.
  EXPECT_EQ(kl_threshold_bins({5, 0, 3, 0, 0}, 4), 3u);
}

TEST(QuantKl, RangeOfALongTailedTensorIsClipped) {
  // |x| exponentially distributed (a ReLU output's typical shape), 10^6 values reaching about
  // ln(10^6) = 14, and ten stray values at 200. KL gives up the strays and the sparse end of the tail
  // (a Python twin of the search puts the threshold at 12.8), so the range ends far below the max yet
  // keeps the bulk (far above the mean of 1).
  std::mt19937 rng(3);
  std::exponential_distribution<float> d(1.f);
  std::vector<float> v(1000000);
  for (float& x : v) x = d(rng);
  for (int i = 0; i < 10; ++i) v.push_back(200.f);
  Histogram h;
  h.add(v.data(), v.size());
  const Range r = kl_range(h);
  EXPECT_EQ(r.lo, h.min());  // no negative values: nothing to clip below
  EXPECT_LT(r.hi, 20.0);
  EXPECT_GT(r.hi, 8.0);
}

TEST(QuantKl, RangeOfABoundedTensorIsNotClipped) {
  // Uniform on [0, 1]: no tail to give up, so the threshold stays at (nearly) the max.
  std::vector<float> v(200000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1) / v.size();
  Histogram h;
  h.add(v.data(), v.size());
  EXPECT_GT(kl_range(h).hi, 0.95);
}

TEST(QuantKl, SignedRangeIsSymmetricForASymmetricTensor) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(400000);
  for (float& x : v) x = d(rng);
  Histogram h;
  h.add(v.data(), v.size());
  const Range r = kl_range(h);
  EXPECT_LE(r.hi, h.max());
  EXPECT_GT(r.hi, 2.0);
  // One threshold T for |x|: [max(min, -T), min(max, T)], so each end is T or the extreme beyond it.
  const double t = std::max(r.hi, -r.lo);
  EXPECT_TRUE(r.hi == t || r.hi == h.max()) << r.lo << " " << r.hi;
  EXPECT_TRUE(-r.lo == t || r.lo == h.min()) << r.lo << " " << r.hi;
  EXPECT_LT(t, std::max(h.max(), -h.min()));  // the rarer end is clipped
}

// The squared error of quantising `v` to uint8 over range r, computed value by value (independent of the
// histogram model mse_range searches).
double actual_squared_error(const std::vector<float>& v, Range r) {
  const ActivationParams p = activation_params(r);
  double e = 0;
  for (float x : v) {
    const double d = static_cast<double>(fake_quantize(x, p)) - x;
    e += d * d;
  }
  return e;
}

void expect_no_candidate_beats_mse_range(const std::vector<float>& v) {
  Histogram h;
  h.add(v.data(), v.size());
  const Range best = mse_range(h);
  EXPECT_LE(best.hi, h.max());
  EXPECT_GE(best.lo, h.min());
  const double e = actual_squared_error(v, best);
  // Min/max and a grid of ranges shrunk from either end: none is better by more than the histogram's
  // approximation (bin centres, step^2/12) allows.
  EXPECT_LE(e, actual_squared_error(v, minmax_range(h)) * 1.02);
  for (double a = 0.3; a <= 1.0; a += 0.05)
    for (double b = 0.3; b <= 1.0; b += 0.05) {
      const Range r = {h.min() * b, h.max() * a};
      EXPECT_LE(e, actual_squared_error(v, r) * 1.02) << "range [" << r.lo << ", " << r.hi << "] beats ["
                                                      << best.lo << ", " << best.hi << "]";
    }
}

TEST(QuantRange, MseRangeOfALongTailedTensorIsTheLeastError) {
  // A ReLU output's shape: exponential, with exact zeros.
  std::mt19937 rng(11);
  std::exponential_distribution<float> d(1.f);
  std::vector<float> v(200000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 0.f : d(rng);
  expect_no_candidate_beats_mse_range(v);
  Histogram h;
  h.add(v.data(), v.size());
  // At the max, shrinking the range by d saves rounding error in proportion to d on every value and
  // costs clipping error in d^2 on the few at the end: some of the tail is always given up.
  EXPECT_LT(mse_range(h).hi, h.max());
}

TEST(QuantRange, MseRangeOfASkewedSignedTensorIsTheLeastError) {
  // Signed and asymmetric, a Conv output before its activation: both ends searched together.
  std::mt19937 rng(12);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(200000);
  for (float& x : v) {
    x = d(rng);
    if (x > 0) x *= 3.f;
  }
  expect_no_candidate_beats_mse_range(v);
}

TEST(QuantRange, MseKeepsABoundedTensorWhole) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1) / v.size();
  Histogram h;
  h.add(v.data(), v.size());
  EXPECT_GT(mse_range(h).hi, 0.99);
  EXPECT_EQ(mse_range(h).lo, h.min());
}

TEST(QuantBiasCorrection, ChannelMeansAlongAnAxis) {
  // Shape [2, 3, 2], channels along axis 1: channel c holds x[o][c][*] for both o.
  const std::vector<float> x = {1, 2, 0.3f, 0.3f, -1, -1,  // o = 0
                                3, 4, 0.3f, 0.3f, -1, -3};  // o = 1
  ChannelMeans m;
  const ActivationParams p = activation_params({-2.55, 0});  // scale 0.01, zero point 255: clips above 0
  m.add(x.data(), {2, 3, 2}, 1, p);
  ASSERT_EQ(m.channels(), 3u);
  EXPECT_EQ(m.per_channel, 4u);
  EXPECT_DOUBLE_EQ(m.sum_x[0], 10.0);
  EXPECT_NEAR(m.sum_x[1], 1.2, 1e-6);
  EXPECT_DOUBLE_EQ(m.sum_x[2], -6.0);
  EXPECT_DOUBLE_EQ(m.sum_xq[0], 0.0);              // every positive value clips to 0
  EXPECT_NEAR(m.sum_xq[2], -1 - 1 - 1 - 2.55, 1e-5);  // -3 saturates at -2.55
}

TEST(QuantBiasCorrection, OutputMeanShiftOfDenseAndGroupedWeights) {
  ChannelMeans m;
  m.sum_x = {1, 2};  // E[x] = (0.5, 1) over 2 values a channel
  m.sum_xq = {1, 3};  // E[x_q] = (0.5, 1.5)
  m.per_channel = 2;
  // Dense: one output, two inputs, one tap: w = (1, 2), w_q = (1.5, 2):
  // 1.5 * 0.5 + 2 * 1.5 - (1 * 0.5 + 2 * 1) = 3.75 - 2.5.
  const std::vector<float> w = {1, 2}, wq = {1.5f, 2};
  std::vector<double> s = output_mean_shift(w.data(), wq.data(), 1, 2, 1, 1, m);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0], 1.25);
  // Depthwise (2 groups, one input each) with two taps: output c reads only input c.
  const std::vector<float> dw = {1, 1, 2, 2}, dwq = {1, 1, 2, 2};
  s = output_mean_shift(dw.data(), dwq.data(), 2, 1, 2, 2, m);
  EXPECT_DOUBLE_EQ(s[0], 0.0);                   // E[x_q] = E[x] for channel 0
  EXPECT_DOUBLE_EQ(s[1], 2 * 2 * (1.5 - 1.0));  // two taps of weight 2, mean up by 0.5
  // Means of another channel count than the weight reads: no correction.
  EXPECT_EQ(output_mean_shift(dw.data(), dwq.data(), 1, 4, 1, 1, m), std::vector<double>(1, 0.0));
}

TEST(QuantParams, ActivationParameters) {
  ActivationParams p = activation_params({0, 2.55});
  EXPECT_FLOAT_EQ(p.scale, 0.01f);
  EXPECT_EQ(p.zero_point, 0);
  p = activation_params({-1, 3});  // zero point 63.75 rounds to 64
  EXPECT_FLOAT_EQ(p.scale, 4.f / 255);
  EXPECT_EQ(p.zero_point, 64);
  p = activation_params({-2, -1});  // widened to include 0: [-2, 0]
  EXPECT_FLOAT_EQ(p.scale, 2.f / 255);
  EXPECT_EQ(p.zero_point, 255);
  p = activation_params({1, 3});  // [0, 3]
  EXPECT_FLOAT_EQ(p.scale, 3.f / 255);
  EXPECT_EQ(p.zero_point, 0);
  p = activation_params({0, 0});
  EXPECT_EQ(p.scale, 1.f);
  EXPECT_EQ(p.zero_point, 0);
}

TEST(QuantParams, FakeQuantizeRoundsAndSaturates) {
  const ActivationParams p = activation_params({-1, 3});  // scale 4/255, zero point 64
  EXPECT_EQ(fake_quantize(0.f, p), 0.f);  // zero is exact
  EXPECT_NEAR(fake_quantize(0.3f, p), 0.3f, p.scale / 2);
  EXPECT_FLOAT_EQ(fake_quantize(5.f, p), (255 - 64) * p.scale);   // saturates high
  EXPECT_FLOAT_EQ(fake_quantize(-5.f, p), (0 - 64) * p.scale);    // and low
}

TEST(QuantParams, WeightsPerChannelAndPerTensor) {
  // Two output channels of 3 values (axis 0, inner 3); the second is all zero.
  const std::vector<float> w = {1.27f, -0.635f, 0.f, 0.f, 0.f, 0.f};
  WeightQuant q = quantize_weights(w.data(), 1, 2, 3, true);
  ASSERT_EQ(q.scale.size(), 2u);
  EXPECT_FLOAT_EQ(q.scale[0], 0.01f);
  EXPECT_FLOAT_EQ(q.scale[1], 0.01f);  // a zero channel borrows the largest scale: never 0
  EXPECT_EQ(q.q[0], 127);
  EXPECT_EQ(q.q[1], -64);  // -63.5 rounds to even
  EXPECT_EQ(q.q[3], 0);
  // Along axis 1 of a 2x2 [K, N] weight (outer = K = 2, channels = N = 2, inner = 1).
  const std::vector<float> m = {1.f, 0.1f, -2.f, 0.05f};
  q = quantize_weights(m.data(), 2, 2, 1, true);
  EXPECT_FLOAT_EQ(q.scale[0], 2.f / 127);
  EXPECT_FLOAT_EQ(q.scale[1], 0.1f / 127);
  EXPECT_EQ(q.q[2], -127);
  EXPECT_EQ(q.q[1], 127);
  EXPECT_EQ(q.q[3], 64);  // 63.5 rounds to even
  q = quantize_weights(m.data(), 2, 2, 1, false);
  ASSERT_EQ(q.scale.size(), 1u);
  EXPECT_FLOAT_EQ(q.scale[0], 2.f / 127);
  EXPECT_EQ(q.q[1], 6);  // 0.1 / (2/127) = 6.35
  const std::vector<float> zero(4, 0.f);
  EXPECT_EQ(quantize_weights(zero.data(), 1, 4, 1, true).scale, std::vector<float>(4, 1.f));
}

TEST(QuantParams, SevenBitWeights) {
  // weight_max 63: scale max|w| / 63, values in [-63, 63] (no pair of them can saturate vpmaddubsw).
  const std::vector<float> w = {1.26f, -0.63f, 0.3f, -1.26f, 0.f, 0.02f};
  WeightQuant q = quantize_weights(w.data(), 1, 2, 3, true, 63);
  EXPECT_FLOAT_EQ(q.scale[0], 0.02f);
  EXPECT_FLOAT_EQ(q.scale[1], 0.02f);
  EXPECT_EQ(q.q[0], 63);
  EXPECT_EQ(q.q[1], -32);  // -31.5 rounds to even
  EXPECT_EQ(q.q[2], 15);
  EXPECT_EQ(q.q[3], -63);
  EXPECT_EQ(q.q[5], 1);
  q = quantize_weights(w.data(), 1, 2, 3, false, 63);
  ASSERT_EQ(q.scale.size(), 1u);
  EXPECT_FLOAT_EQ(q.scale[0], 0.02f);
  for (int8_t v : q.q) EXPECT_LE(std::abs(static_cast<int>(v)), 63);
}

TEST(QuantParams, BiasInUnitsOfInputTimesWeightScale) {
  const std::vector<float> b = {1.f, -0.5f};
  std::vector<int32_t> q;
  std::vector<float> s;
  EXPECT_EQ(quantize_bias(b.data(), 2, 0.1f, {0.01f, 0.001f}, &q, &s), 0u);
  EXPECT_EQ(q, (std::vector<int32_t>{1000, -5000}));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FLOAT_EQ(s[0], 0.001f);
  EXPECT_EQ(quantize_bias(b.data(), 2, 1e-10f, {1e-10f}, &q, &s), 2u);  // saturates, and says so
  EXPECT_EQ(q[0], 2147483647);
  EXPECT_EQ(q[1], -2147483647);
}

TEST(QuantAgreement, CosineAndMaxError) {
  Agreement a;
  const std::vector<float> x = {1, 2, 3}, y = {1, 2, 3.5f}, neg = {-1, -2, -3}, zero = {0, 0, 0};
  a.add(x.data(), x.data(), 3);
  EXPECT_DOUBLE_EQ(a.cosine(), 1.0);
  EXPECT_EQ(a.max_abs, 0.0);
  a.add(x.data(), y.data(), 3);  // accumulates across calls
  EXPECT_LT(a.cosine(), 1.0);
  EXPECT_EQ(a.max_abs, 0.5);
  Agreement b;
  b.add(x.data(), neg.data(), 3);
  EXPECT_NEAR(b.cosine(), -1.0, 1e-12);
  Agreement c;
  c.add(zero.data(), zero.data(), 3);
  EXPECT_EQ(c.cosine(), 1.0);
  Agreement d;
  const std::vector<float> nan = {0, std::nanf(""), 0};
  d.add(x.data(), nan.data(), 3);
  EXPECT_TRUE(std::isinf(d.max_abs));  // a NaN is never hidden
}

}  // namespace
}  // namespace ninegrid::quant
