// Winograd F(m x m, 3 x 3): the transform matrices against Lavin & Gray's published F(4x4, 3x3) and the
// correlation identity; the tile-by-tile reference (kernels/ref/winograd_ref.h) and the x86 kernels
// (ops/conv_winograd.h, AVX2 and AVX-512, tiles 2, 4 and 6, every block combination) against the plain
// direct convolution reference (kernels/ref/conv2d_ref.h) on random shapes.
//
// Tolerance. Winograd's rounding grows with the transforms, whose large coefficients (up to 32 in F(6x6)'s
// A^T) scale the values that get rounded. The worst-case bound (gamma_n times the pipeline run on absolute
// values) is sound but, for random-signed data, hundreds of times the real error: for F(6x6) it reached
// half the outputs' magnitude, which would accept wrong results. So the tests use the probabilistic model
// of rounding error (Higham & Mary, SISC 2019 and 2020: independent mean-zero rounding errors; zero-mean
// random data, as here): an output's error has a standard deviation of about
//   sigma = u * sqrt(n) * rss,   u = 2^-24, n = ic + 4 alpha + 4 roundings on any path (ic in the channel
//   sum, up to 2 alpha in each 2-D transform, a few in the epilogue),
// where rss is the root of the sum of squares of all the product terms the output expands into: the
// Winograd pipeline run in double on squared matrices and squared data (winograd_rss). The reference
// conv2d_ref adds its own u * sqrt(9 ic + 2) * sqrt(sum (x w)^2). Allowed: kLambda = 7 sigma (a false
// alarm per output has probability ~1e-12), times the activation's Lipschitz constant, plus 2u of
// |bias| + |residual| and a few ulp of the result for a vectorised exp. Over 400 random cases per ISA the
// largest error was 0.3 of this tolerance, and the tolerance averaged 0.2% of the outputs' magnitude;
// BoundDetectsOneMissingTap shows a single missing weight tap fails it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "conv_rounding_test_util.h"
#include "conv_test_util.h"
#include "kernels/ref/conv2d_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "kernels/ref/winograd_ref.h"
#include "ninegrid/tensor.h"
#include "ops/conv_cost_model.h"
#include "ops/conv_select.h"
#include "ops/conv_winograd.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

using namespace conv_test;
using namespace conv_rounding;

// The root of the sum of squares of every product term of each output, when the Winograd pipeline is
// expanded into a plain sum over (ic, input pixel, weight tap, transform positions): the pipeline run on
// squared matrices and squared data, in double, then a square root. Plain NCHW.
std::vector<double> winograd_rss(const Conv2dParams& p, int m, const std::vector<float>& x,
                                 const std::vector<float>& w) {
  const WinogradMatrices& t = winograd_matrices(m);
  const int n = t.alpha;
  auto squares = [](std::vector<double> v) {
    for (double& d : v) d = d * d;
    return v;
  };
  const std::vector<double> at = squares(t.at), g = squares(t.g), bt = squares(t.bt);
  const int64_t ic_count = p.in_channels, oc_count = p.out_channels, positions = n * n;
  std::vector<double> u(static_cast<size_t>(oc_count * ic_count * positions));
  for (int64_t pair = 0; pair < oc_count * ic_count; ++pair) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) s += g[i * 3 + a] * double(w[pair * 9 + a * 3 + b]) * w[pair * 9 + a * 3 + b] * g[j * 3 + b];
        u[pair * positions + i * n + j] = s;
      }
  }
  const int64_t tiles_h = (p.out_h + m - 1) / m, tiles_w = (p.out_w + m - 1) / m;
  std::vector<double> out(static_cast<size_t>(p.batch * oc_count * p.out_h * p.out_w));
  std::vector<double> v(static_cast<size_t>(ic_count * positions)), d(positions), tmp(positions), acc(positions);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t ty = 0; ty < tiles_h; ++ty)
      for (int64_t tx = 0; tx < tiles_w; ++tx) {
        for (int64_t ic = 0; ic < ic_count; ++ic) {
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              const int64_t ih = ty * m - p.pad_top + i, iw = tx * m - p.pad_left + j;
              d[i * n + j] = ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w
                                 ? std::pow(double(x[((b * ic_count + ic) * p.in_h + ih) * p.in_w + iw]), 2)
                                 : 0.0;
            }
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              double s = 0;
              for (int k = 0; k < n; ++k) s += bt[i * n + k] * d[k * n + j];
              tmp[i * n + j] = s;
            }
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              double s = 0;
              for (int k = 0; k < n; ++k) s += tmp[i * n + k] * bt[j * n + k];
              v[ic * positions + i * n + j] = s;
            }
        }
        for (int64_t oc = 0; oc < oc_count; ++oc) {
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t ic = 0; ic < ic_count; ++ic)
            for (int e = 0; e < positions; ++e) acc[e] += u[(oc * ic_count + ic) * positions + e] * v[ic * positions + e];
          for (int i = 0; i < m && ty * m + i < p.out_h; ++i)
            for (int j = 0; j < m && tx * m + j < p.out_w; ++j) {
              double s = 0;
              for (int k = 0; k < n; ++k)
                for (int l = 0; l < n; ++l) s += at[i * n + k] * acc[k * n + l] * at[j * n + l];
              out[((b * oc_count + oc) * p.out_h + ty * m + i) * p.out_w + tx * m + j] = std::sqrt(s);
            }
        }
      }
  return out;
}

Conv2dParams random_params(std::mt19937& rng, std::initializer_list<int64_t> channels) {
  for (;;) {
    Conv2dParams p;
    p.batch = pick(rng, {1, 1, 2});
    p.in_channels = pick(rng, channels);
    p.out_channels = pick(rng, channels);
    p.kernel_h = p.kernel_w = 3;
    p.in_h = uniform(rng, 1, 23);
    p.in_w = uniform(rng, 1, 23);
    p.pad_top = uniform(rng, 0, 2), p.pad_bottom = uniform(rng, 0, 2);
    p.pad_left = uniform(rng, 0, 2), p.pad_right = uniform(rng, 0, 2);
    if (finish_shape(p)) return p;
  }
}

// A 3x3 stride-1 conv padded by 1 on every side, so the output plane is the input's: the dense layers
// Winograd is for.
Conv2dParams same_3x3(int64_t in_channels, int64_t out_channels, int64_t h, int64_t w) {
  Conv2dParams p;
  p.in_channels = in_channels, p.out_channels = out_channels;
  p.kernel_h = p.kernel_w = 3;
  p.in_h = h, p.in_w = w;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  EXPECT_TRUE(finish_shape(p)) << describe(p);
  return p;
}

// Per output: the tolerance described at the top of the file, for tile m.
std::vector<double> tolerance(const Case& c, int m, const std::vector<float>& want) {
  const Conv2dParams& p = c.p;
  const int alpha = m + 2;
  const std::vector<double> wino = winograd_rss(p, m, c.x, c.w), direct = direct_terms_rss(c);
  const double n_wino = double(p.in_channels + 4 * alpha + 4), n_ref = double(9 * p.in_channels + 2);
  std::vector<double> sigma(want.size());
  for (size_t i = 0; i < want.size(); ++i)
    sigma[i] = kUnit * (std::sqrt(n_wino) * wino[i] + std::sqrt(n_ref) * direct[i]);
  return tolerance_from_sigma(c, sigma, want);
}

// Runs WinogradConv2d on blocked copies of the case's tensors; returns y in plain NCHW.
// oc_tile: the plan's register tile (0 the rule, 1 tall, 2 wide).
std::vector<float> run_fast(const Case& c, Isa isa, int tile, int64_t in_block, int64_t out_block,
                            ThreadPool* pool = nullptr, bool in_place_residual = false, int oc_tile = 0) {
  const Conv2dParams& p = c.p;
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  std::vector<float> xb(c.x.size()), yb(static_cast<size_t>(p.batch * p.out_channels * out_plane)), rb;
  reorder_blocks_ref(c.x.data(), xb.data(), p.batch, p.in_channels, in_plane, 1, in_block);
  if (c.with_residual) {
    rb.resize(yb.size());
    reorder_blocks_ref(c.residual.data(), rb.data(), p.batch, p.out_channels, out_plane, 1, out_block);
    if (in_place_residual) yb = rb;
  }
  ConvPlan plan = winograd_plan(p, in_block, out_block, isa, tile);
  plan.oc_tile = oc_tile;
  WinogradConv2d conv(p, c.w.data(), c.bias.data(), c.act, plan);
  const float* residual = c.with_residual ? (in_place_residual ? yb.data() : rb.data()) : nullptr;
  conv.run(xb.data(), yb.data(), residual, pool);
  std::vector<float> y(yb.size());
  reorder_blocks_ref(yb.data(), y.data(), p.batch, p.out_channels, out_plane, out_block, 1);
  return y;
}

// ---- The matrices ----

TEST(WinogradMatrices, F4MatchesLavinAndGray) {
  // Lavin & Gray 2016, section 4.2: F(4x4, 3x3) with points 0, +-1, +-2.
  const double bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                           {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  const double g[6][3] = {{1. / 4, 0, 0},          {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
                          {1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1}};
  const double at[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  const WinogradMatrices& t = winograd_matrices(4);
  ASSERT_EQ(t.alpha, 6);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_NEAR(t.bt[i * 6 + j], bt[i][j], 1e-15) << "B^T " << i << "," << j;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(t.g[i * 3 + j], g[i][j], 1e-15) << "G " << i << "," << j;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_NEAR(t.at[i * 6 + j], at[i][j], 1e-15) << "A^T " << i << "," << j;
}

TEST(WinogradMatrices, ComputeTheCorrelation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int m : {2, 4, 6}) {
    const WinogradMatrices& t = winograd_matrices(m);
    const int n = t.alpha;
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> d(n), g(3), gg(n), bd(n);
      for (double& v : d) v = dist(rng);
      for (double& v : g) v = dist(rng);
      for (int j = 0; j < n; ++j) {
        gg[j] = bd[j] = 0;
        for (int k = 0; k < 3; ++k) gg[j] += t.g[j * 3 + k] * g[k];
        for (int k = 0; k < n; ++k) bd[j] += t.bt[j * n + k] * d[k];
      }
      for (int i = 0; i < m; ++i) {
        double y = 0, want = 0;
        for (int j = 0; j < n; ++j) y += t.at[i * n + j] * gg[j] * bd[j];
        for (int k = 0; k < 3; ++k) want += d[i + k] * g[k];
        EXPECT_NEAR(y, want, 1e-12) << "F(" << m << ",3) output " << i;
      }
    }
  }
  EXPECT_THROW(winograd_matrices(3), Error);
}

// U = G g G^T for a few kernels, computed here from the matrices in long double, against the load-time
// transform, in its plain layout [pair][position] and laid out with strides as the fast kernels' packing
// asks for (pair p's position q at p * pair_stride + q * position_stride).
TEST(WinogradMatrices, WeightTransformIsGgGtInEitherLayout) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (int m : {2, 4, 6}) {
    const WinogradMatrices& t = winograd_matrices(m);
    const int n = t.alpha;
    const int64_t pairs = 5, pair_stride = 7, position_stride = pairs * pair_stride + 3;
    std::vector<float> kernels(static_cast<size_t>(pairs * 9));
    for (float& v : kernels) v = dist(rng);
    std::vector<float> plain(static_cast<size_t>(pairs * n * n), -1.f);
    std::vector<float> strided(static_cast<size_t>(n * n * position_stride), -1.f);
    winograd_transform_weights(m, kernels.data(), pairs, plain.data());
    winograd_transform_weights(m, kernels.data(), pairs, pair_stride, position_stride, strided.data());
    for (int64_t pr = 0; pr < pairs; ++pr)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          long double want = 0;
          for (int a = 0; a < 3; ++a)
            for (int c = 0; c < 3; ++c)
              want += static_cast<long double>(t.g[i * 3 + a]) * kernels[pr * 9 + a * 3 + c] * t.g[j * 3 + c];
          const float got = plain[(pr * n + i) * n + j];
          EXPECT_NEAR(got, static_cast<double>(want), 1e-6 * (1 + std::fabs(static_cast<double>(want))))
              << "F(" << m << ") pair " << pr << " position " << i << "," << j;
          EXPECT_EQ(strided[pr * pair_stride + (i * n + j) * position_stride], got) << "strided layout";
        }
    // Nothing written between the strided values.
    int64_t untouched = 0;
    for (float v : strided) untouched += v == -1.f;
    EXPECT_EQ(untouched, static_cast<int64_t>(strided.size()) - pairs * n * n);
  }
}

// The load-time transform against the generic loops it replaced (kept here as they were), bit for bit
// (memcmp, so the sign of a zero counts too) on random kernels, kernels with zero rows and all-zero ones,
// in both layouts.
void transform_weights_generic_loops(int m, const float* kernels, int64_t pairs, float* out) {
  const WinogradMatrices& t = winograd_matrices(m);
  const int n = t.alpha;
  double gg[8 * 3];
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const float* g = kernels + pair * 9;
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += t.g[i * 3 + k] * g[k * 3 + c];
        gg[i * 3 + c] = s;
      }
    float* u = out + pair * n * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0.0;
        for (int c = 0; c < 3; ++c) s += gg[i * 3 + c] * t.g[j * 3 + c];
        u[i * n + j] = static_cast<float>(s);
      }
  }
}

TEST(WinogradMatrices, WeightTransformBitForBitAsTheGenericLoops) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  for (int m : {2, 4, 6}) {
    const int n = winograd_matrices(m).alpha;
    const int64_t pairs = 67;  // odd: the transform's pairs of lanes and a last pair alone
    std::vector<float> kernels(static_cast<size_t>(pairs * 9));
    for (float& v : kernels) v = dist(rng);
    for (int k = 0; k < 9; ++k) kernels[k] = 0.f;          // pair 0: all zero
    for (int k = 9; k < 18; ++k) kernels[k] = -0.f;        // pair 1: all negative zero
    for (int k = 18; k < 21; ++k) kernels[k] = 0.f;        // pair 2: a zero row
    for (int k = 27; k < 36; k += 3) kernels[k] = -0.f;    // pair 3: a zero column
    kernels[40] = 1e-30f, kernels[41] = -3e38f;            // pair 4: tiny and huge values
    std::vector<float> want(static_cast<size_t>(pairs * n * n));
    std::vector<float> got(want.size() + static_cast<size_t>(n * n), -1.f);  // one pair's worth of guard values
    transform_weights_generic_loops(m, kernels.data(), pairs, want.data());
    winograd_transform_weights(m, kernels.data(), pairs, got.data());
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << "F(" << m << ") plain";
    for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], -1.f) << "F(" << m << ") wrote past the last pair";
    const int64_t pair_stride = 3, position_stride = pairs * pair_stride + 1;
    std::vector<float> strided(static_cast<size_t>(n * n * position_stride), -1.f);
    winograd_transform_weights(m, kernels.data(), pairs, pair_stride, position_stride, strided.data());
    int64_t untouched = 0;
    for (float v : strided) untouched += v == -1.f;
    EXPECT_EQ(untouched, static_cast<int64_t>(strided.size()) - pairs * n * n) << "F(" << m << ") strided";
    for (int64_t pr = 0; pr < pairs; ++pr)
      for (int q = 0; q < n * n; ++q)
        ASSERT_EQ(std::memcmp(&strided[pr * pair_stride + q * position_stride], &want[pr * n * n + q], sizeof(float)), 0)
            << "F(" << m << ") strided, pair " << pr << " position " << q;
  }
}

TEST(WinogradMatrices, Applicability) {
  Conv2dParams p;
  p.in_channels = p.out_channels = 32;
  p.kernel_h = p.kernel_w = 3;
  p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.pad_top = p.pad_left = 1;
  EXPECT_TRUE(winograd_applicable(p));
  EXPECT_TRUE(WinogradConv2d::supports(p));
  Conv2dParams q = p;
  q.stride_h = 2;
  EXPECT_FALSE(winograd_applicable(q));
  q = p, q.dilation_w = 2;
  EXPECT_FALSE(winograd_applicable(q));
  q = p, q.groups = 2;
  EXPECT_FALSE(winograd_applicable(q));
  q = p, q.kernel_w = 5;
  EXPECT_FALSE(winograd_applicable(q));
  q = p, q.in_channels = 8;  // computable, but too few channels to pay
  EXPECT_TRUE(WinogradConv2d::applicable(q));
  EXPECT_FALSE(WinogradConv2d::supports(q));
  EXPECT_FALSE(WinogradConv2d::supports(p, 1, 3, Isa::Avx512));  // block must be 1, 8 or 16
  EXPECT_FALSE(WinogradConv2d::supports(p, 1, 1, Isa::Ref));
}

// The cost model's choices on ResNet's 3x3 layers follow what was measured on each kind of core
// (conv_winograd.cpp): F(4x4) on the large planes everywhere; at 256 channels 14x14 F(2x2) on the
// full-rate Xeon (F(4x4)'s 9.4 MB of weights come from memory in a model run) but F(4x4) on Zen 4 (its
// GEMM at half rate weighs more than the streaming); F(2x2) at 512 channels 7x7 on both; and a clear gain
// over the direct conv on the large planes.
TEST(WinogradCostModel, ChoosesTilesLikeTheMeasurements) {
  auto layer = [](int64_t channels, int64_t side) {
    Conv2dParams p;
    p.in_channels = p.out_channels = channels;
    p.kernel_h = p.kernel_w = 3;
    p.in_h = p.in_w = p.out_h = p.out_w = side;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    return p;
  };
  for (WinogradCore core : {WinogradCore::FullRate512, WinogradCore::HalfRate512}) {
    const bool zen4 = core == WinogradCore::HalfRate512;
    for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
      if (!cpu_has(isa)) continue;
      const std::string what = std::string(isa_name(isa)) + (zen4 ? " half-rate" : " full-rate");
      EXPECT_EQ(winograd_default_tile(layer(64, 56), isa, core), 4) << what;
      EXPECT_EQ(winograd_default_tile(layer(64, 112), isa, core), 4) << what;
      EXPECT_EQ(winograd_default_tile(layer(128, 28), isa, core), 4) << what;
      EXPECT_EQ(winograd_default_tile(layer(256, 14), isa, core), zen4 ? 4 : 2) << what;
      EXPECT_EQ(winograd_default_tile(layer(512, 7), isa, core), 2) << what;
      // ... and F(2x2) beats the direct conv on ResNet-18's 512-channel 7x7 layers (Xeon 1.5-1.8 ms vs
      // 2.7; Zen 4 1.6 vs 2.4-2.9).
      EXPECT_GT(winograd_estimated_speedup(layer(512, 7), isa, core), 1.2) << what;
      EXPECT_GT(winograd_estimated_speedup(layer(64, 56), isa, core), 2.0) << what;
      EXPECT_GT(winograd_estimated_speedup(layer(64, 56), isa, core),
                winograd_estimated_speedup(layer(512, 7), isa, core))
          << what;
    }
  }
  // This machine's choice is one of the two (where the AVX2 kernels run: elsewhere winograd_plan has no
  // x86 kernel to plan for).
  const WinogradCore here = this_winograd_core();
  const Conv2dParams l = layer(256, 14);
  if (cpu_has(Isa::Avx2)) {
    EXPECT_EQ(winograd_plan(l, 16, 16, Isa::Avx2).winograd_tile, winograd_default_tile(l, Isa::Avx2, here));
  }
  Conv2dParams strided = layer(64, 56);
  strided.stride_h = 2;
  EXPECT_EQ(winograd_estimated_speedup(strided, Isa::Avx512, here), 0.0);
}

// ---- The reference twin ----

TEST(WinogradRef, MatchesDirectReference) {
  std::mt19937 rng(11);
  double worst = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int m = trial % 3 == 0 ? 2 : trial % 3 == 1 ? 4 : 6;
    const Conv2dParams p = random_params(rng, {1, 3, 8, 17, 32, 40});
    const Case c = make_case(rng, p, trial, trial % 2 == 1);
    const std::vector<float> want = expected(c);
    std::vector<float> got(want.size());
    Epilogue e;
    e.activation = c.act;
    e.residual = c.with_residual ? c.residual.data() : nullptr;
    conv2d_winograd_ref(p, e, m, c.x.data(), c.w.data(), c.bias.data(), got.data());
    worst = std::max(worst, check_within(got, want, tolerance(c, m, want), "F(" + std::to_string(m) + ") " + describe(p)));
  }
  std::printf("winograd_ref: largest error / tolerance %.3g\n", worst);
}

TEST(WinogradRef, ResidualMayBeTheOutput) {
  std::mt19937 rng(12);
  const Conv2dParams p = random_params(rng, {8});
  const Case c = make_case(rng, p, 1, true);
  const std::vector<float> want = expected(c);
  std::vector<float> y = c.residual;
  Epilogue e;
  e.activation = c.act;
  e.residual = y.data();
  conv2d_winograd_ref(p, e, 4, c.x.data(), c.w.data(), c.bias.data(), y.data());
  check_within(y, want, tolerance(c, 4, want), describe(p));
}

// ---- The vector kernels (AVX2 and AVX-512 on x86-64, NEON on AArch64) ----

class WinogradX86 : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_has(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
  }
};

// Channels 32..96 (multiples of 8 that are not of 16 included), odd planes, pads 0..2, every activation,
// with and without residual, both tiles, random blocks.
TEST_P(WinogradX86, MatchesDirectReference) {
  std::mt19937 rng(GetParam() == Isa::Avx512 ? 21 : 22);
  double worst = 0, tol_share = 0;
  for (int trial = 0; trial < 36; ++trial) {
    const Conv2dParams p = random_params(rng, {32, 40, 48, 56, 64, 72, 80, 96});
    const Case c = make_case(rng, p, trial, trial % 3 != 0);
    const int tile = 2 + 2 * (trial % 3);
    const int64_t in_block = random_block(rng, p.in_channels, GetParam());
    const int64_t out_block = random_block(rng, p.out_channels, GetParam());
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_fast(c, GetParam(), tile, in_block, out_block);
    const std::string what = "F(" + std::to_string(tile) + ") blocks " + std::to_string(in_block) + "->" +
                             std::to_string(out_block) + " " + activation_name(c.act.kind) + " " + describe(p);
    const std::vector<double> tol = tolerance(c, tile, want);
    worst = std::max(worst, check_within(got, want, tol, what));
    double tol_sum = 0, want_sum = 0;
    for (size_t i = 0; i < want.size(); ++i) tol_sum += tol[i], want_sum += std::fabs(want[i]);
    tol_share = std::max(tol_share, tol_sum / want_sum);
  }
  std::printf("%s winograd: largest error / tolerance %.3g; mean tolerance / mean |output| at most %.3g\n",
              isa_name(GetParam()), worst, tol_share);
}

// Channel counts that leave padding lanes in the vectors (applicable, though too small to be chosen).
TEST_P(WinogradX86, FewAndOddChannels) {
  std::mt19937 rng(GetParam() == Isa::Avx512 ? 31 : 32);
  for (int trial = 0; trial < 16; ++trial) {
    const Conv2dParams p = random_params(rng, {1, 3, 5, 8, 17, 24});
    const Case c = make_case(rng, p, trial, trial % 2 == 0);
    const int tile = 2 + 2 * (trial % 3);
    const int64_t in_block = random_block(rng, p.in_channels, GetParam());
    const int64_t out_block = random_block(rng, p.out_channels, GetParam());
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_fast(c, GetParam(), tile, in_block, out_block);
    check_within(got, want, tolerance(c, tile, want),
                 "blocks " + std::to_string(in_block) + "->" + std::to_string(out_block) + " " + describe(p));
  }
}

// Planes of several chunks (the scratch holds a bounded number of tiles) and ResNet-like padding.
TEST_P(WinogradX86, LargePlaneSpansChunks) {
  std::mt19937 rng(41);
  const Conv2dParams p = same_3x3(64, 48, 61, 59);
  const Case c = make_case(rng, p, 1, true);
  const std::vector<float> want = expected(c);
  for (int tile : {2, 4, 6}) {
    const int64_t out_block = lanes_of(GetParam());
    const std::vector<float> got = run_fast(c, GetParam(), tile, 16, out_block);
    check_within(got, want, tolerance(c, tile, want), "tile " + std::to_string(tile) + " " + describe(p));
  }
}

// The "tall" register tile (all of a chunk's tiles x one vector) transposes v to k-major on the stack up
// to kMaxPackedChannels (1024) input channels and reads it as it is beyond: both sides of that limit, odd
// tile counts included; and the wide tile on the same convs.
TEST_P(WinogradX86, TallTileBothSidesOfThePackingLimit) {
  std::mt19937 rng(45);
  for (int64_t in_channels : {1024, 1040}) {
    for (int64_t side : {7, 5}) {
      const Conv2dParams p = same_3x3(in_channels, 40, side, side);
      const int64_t out_block = GetParam() == Isa::Avx512 ? 8 : 1;
      // Each register tile forced, a case for each (see BothRegisterTilesOnSmallPlanes).
      for (int oc_tile : {1, 2}) {
        const Case c = make_case(rng, p, 2, side == 7);
        const std::vector<float> want = expected(c);
        const std::vector<float> got = run_fast(c, GetParam(), 2, 16, out_block, nullptr, false, oc_tile);
        check_within(got, want, tolerance(c, 2, want), "register tile " + std::to_string(oc_tile) + ", " + describe(p));
      }
    }
  }
}

// Either register tile on planes whose chunks fit the tall one (up to 16 tiles), whichever the rule would
// pick: tall (all tiles x one vector) and wide (row blocks x two vectors), odd tile and channel counts,
// narrow last groups of output channels.
TEST_P(WinogradX86, BothRegisterTilesOnSmallPlanes) {
  std::mt19937 rng(GetParam() == Isa::Avx512 ? 47 : 48);
  const WinogradVectors vectors = winograd_vectors(GetParam());
  int tested = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t in_channels = pick(rng, {16, 24, 40, 64, 136, 520});
    const int64_t out_channels = pick(rng, {16, 24, 40, 56, 72});
    const int tile = trial % 2 == 0 ? 2 : 4;
    // Mostly 13-16 tiles (the wide tile's two row blocks), some fewer.
    const int64_t h = tile == 2 ? pick(rng, {7, 8, 8, 5}) : pick(rng, {13, 14, 16, 9});
    const int64_t w = tile == 2 ? pick(rng, {7, 8, 6, 3}) : pick(rng, {13, 14, 15, 5});
    const Conv2dParams p = same_3x3(in_channels, out_channels, h, w);
    if (!winograd_fits_tall_tile(p, tile, GetParam())) continue;
    const int64_t in_block = random_block(rng, p.in_channels, GetParam());
    const int64_t out_block = random_block(rng, p.out_channels, GetParam());
    for (int oc_tile : {1, 2}) {
      // A case of its own for each tile: the per-thread scratch keeps the other run's products, which
      // would hide tiles a run leaves out.
      const Case c = make_case(rng, p, trial, trial % 3 == 0);
      const std::vector<float> want = expected(c);
      const std::vector<float> got = run_fast(c, GetParam(), tile, in_block, out_block, nullptr, false, oc_tile);
      check_within(got, want, tolerance(c, tile, want),
                   "F(" + std::to_string(tile) + ") register tile " + std::to_string(oc_tile) + " " + describe(p));
    }
    ++tested;
  }
  EXPECT_GE(tested, 12);
  // The plan's choice is what the kernel gets; 0 leaves it to the rule, which takes one of the two, and
  // wide where the chunks do not fit the tall tile (F(2x2) on 14x14: 49 tiles).
  const Conv2dParams p = same_3x3(256, 256, 14, 14);
  EXPECT_EQ(winograd_group_vectors(p, GetParam(), 4, 1), 1);
  EXPECT_EQ(winograd_group_vectors(p, GetParam(), 4, 2), vectors.oc_vectors);
  const int64_t rule = winograd_group_vectors(p, GetParam(), 4, 0);
  EXPECT_TRUE(rule == 1 || rule == vectors.oc_vectors);
  ASSERT_FALSE(winograd_fits_tall_tile(p, 2, GetParam()));
  EXPECT_EQ(winograd_group_vectors(p, GetParam(), 2, 0), vectors.oc_vectors);
}

TEST_P(WinogradX86, ThreadedRunEqualsSingleThread) {
  std::mt19937 rng(51);
  ThreadPool pool(2);
  for (int trial = 0; trial < 6; ++trial) {
    Conv2dParams p = random_params(rng, {32, 48, 64});
    p.in_h += 20, p.in_w += 13;
    ASSERT_TRUE(finish_shape(p));
    const Case c = make_case(rng, p, trial, true);
    const int tile = 2 + 2 * (trial % 3);
    const std::vector<float> one = run_fast(c, GetParam(), tile, p.in_channels % 16 == 0 ? 16 : 8, 8);
    const std::vector<float> two = run_fast(c, GetParam(), tile, p.in_channels % 16 == 0 ? 16 : 8, 8, &pool);
    EXPECT_EQ(one, two) << describe(p);
  }
  // Planes with enough tiles for each thread to run whole chunks of its own (two images, so chunks of
  // both are handed out), for every tile size.
  for (int tile : {2, 4, 6}) {
    Conv2dParams p = random_params(rng, {32});
    p.batch = 2;
    p.in_h = 37, p.in_w = 45;
    p.kernel_h = p.kernel_w = 3, p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1, p.groups = 1;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    ASSERT_TRUE(finish_shape(p));
    const Case c = make_case(rng, p, tile, true);
    const std::vector<float> one = run_fast(c, GetParam(), tile, 16, 8);
    const std::vector<float> two = run_fast(c, GetParam(), tile, 16, 8, &pool);
    EXPECT_EQ(one, two) << "tile " << tile << ", " << describe(p);
  }
}

TEST_P(WinogradX86, ResidualMayBeTheOutput) {
  std::mt19937 rng(61);
  for (int64_t out_block : {1, 8, 16}) {
    Conv2dParams p = random_params(rng, {32, 48});
    const Case c = make_case(rng, p, 5, true);
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_fast(c, GetParam(), 4, 16, out_block, nullptr, true);
    check_within(got, want, tolerance(c, 4, want), "in place, out block " + std::to_string(out_block));
  }
}

// The tolerance is not so loose that a wrong result slips through: dropping one of the 9 taps of one
// (oc, ic) pair must fail somewhere.
TEST_P(WinogradX86, BoundDetectsOneMissingTap) {
  std::mt19937 rng(71);
  const Conv2dParams p = same_3x3(64, 64, 14, 14);
  Case c = make_case(rng, p, 0, false);
  const size_t tap = (5 * p.in_channels + 9) * 9 + 4;  // oc 5, ic 9, centre tap
  c.w[tap] = 0.75f;
  const std::vector<float> want = expected(c);
  const std::vector<double> tol = tolerance(c, 4, want);
  c.w[tap] = 0.f;
  const std::vector<float> got = run_fast(c, GetParam(), 4, 16, 16);
  size_t failures = 0;
  for (size_t i = 0; i < got.size(); ++i) failures += std::fabs(double(got[i]) - want[i]) > tol[i];
  EXPECT_GT(failures, got.size() / 64 / 2) << "most outputs of channel 5 should be out of tolerance";
}

TEST_P(WinogradX86, RejectsWhatItCannotCompute) {
  Conv2dParams p;
  p.in_channels = p.out_channels = 32;
  p.kernel_h = p.kernel_w = 3;
  p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.pad_top = p.pad_left = 1;
  std::vector<float> w(32 * 32 * 9, 0.f);
  EXPECT_NO_THROW(WinogradConv2d(p, w.data(), nullptr, Activation::none(), winograd_plan(p, 16, 8, GetParam())));
  EXPECT_THROW(WinogradConv2d(p, w.data(), nullptr, Activation::none(), winograd_plan(p, 16, 8, GetParam(), 5)), Error);
  EXPECT_THROW(WinogradConv2d(p, w.data(), nullptr, Activation::none(), winograd_plan(p, 3, 8, GetParam())), Error);
  EXPECT_THROW(WinogradConv2d(p, w.data(), nullptr, Activation::prelu(nullptr), winograd_plan(p, 16, 8, GetParam())), Error);
  EXPECT_THROW(WinogradConv2d(p, w.data(), nullptr, Activation::none(), winograd_plan(p, 16, 8, Isa::Ref)), Error);
  Conv2dParams q = p;
  q.stride_w = 2;
  EXPECT_THROW(WinogradConv2d(q, w.data(), nullptr, Activation::none(), winograd_plan(q, 16, 8, GetParam())), Error);
}

INSTANTIATE_TEST_SUITE_P(Isa, WinogradX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace ninegrid
