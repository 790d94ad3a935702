// Helpers for testing fast convolutions (Winograd, indirect) against the plain reference conv2d_ref with a
// tolerance derived from the data: random cases, the reference output, the root-sum-square of the product
// terms each output sums, and the comparison.
//
// The tolerance model (Higham & Mary, SISC 2019 and 2020: independent mean-zero rounding errors, zero-mean
// random data, as generated here): a sum of n rounded operations over terms t_i errs with a standard
// deviation of about u * sqrt(n) * sqrt(sum t_i^2), u = 2^-24. Tests allow kLambda such deviations (a false
// alarm per output has probability ~1e-12), times the activation's Lipschitz constant.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "kernels/ref/conv2d_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "core/cpu_features.h"

namespace ninegrid {
namespace conv_rounding {

constexpr double kUnit = 1.0 / (1 << 24);  // float unit roundoff
constexpr double kLambda = 7.0;             // standard deviations of the rounding-error model allowed

inline double lipschitz(const Activation& a) {
  switch (a.kind) {
    case ActivationKind::LeakyRelu: return std::max(1.0, std::fabs(double(a.alpha)));
    case ActivationKind::HardSigmoid: return std::fabs(double(a.alpha));
    case ActivationKind::HardSwish: return 1.5;  // d/dx x (x / 6 + 1/2) = x / 3 + 1/2 <= 1.5 on [-3, 3]
    case ActivationKind::Sigmoid: return 0.25;
    case ActivationKind::Silu: return 1.1;  // d/dx x sigmoid(x) peaks at 1.0998 (x = 2.40)
    default: return 1.0;  // None, Relu, Clip; PRelu with |slope| <= 1 (the tests' slopes)
  }
}

// One random case: data uniform in [-1, 1] (PRelu slopes too), plain NCHW.
struct Case {
  Conv2dParams p;
  std::vector<float> x, w, bias, slopes, residual;
  bool with_residual = false;
  Activation act;
};

inline Case make_case(std::mt19937& rng, const Conv2dParams& p, int activation_index, bool with_residual) {
  Case c;
  c.p = p;
  c.x = conv_test::random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
  c.w = conv_test::random_vector(
      rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h * p.kernel_w));
  c.bias = conv_test::random_vector(rng, static_cast<size_t>(p.out_channels));
  c.slopes = conv_test::random_vector(rng, static_cast<size_t>(p.out_channels));
  c.with_residual = with_residual;
  if (with_residual)
    c.residual = conv_test::random_vector(rng, static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
  const std::vector<Activation> acts = conv_test::all_activations(c.slopes.data());
  c.act = acts[static_cast<size_t>(activation_index) % acts.size()];
  return c;
}

// conv2d_ref's output for the case (plain NCHW).
inline std::vector<float> expected(const Case& c) {
  std::vector<float> y(static_cast<size_t>(c.p.batch * c.p.out_channels * c.p.out_h * c.p.out_w));
  Epilogue e;
  e.activation = c.act;
  e.residual = c.with_residual ? c.residual.data() : nullptr;
  conv2d_ref(c.p, e, c.x.data(), c.w.data(), c.bias.data(), y.data());
  return y;
}

// Per output, sqrt(sum (x w)^2) over the products the direct conv sums (conv2d_ref on squared data).
inline std::vector<double> direct_terms_rss(const Case& c) {
  std::vector<float> x2(c.x.size()), w2(c.w.size());
  for (size_t i = 0; i < x2.size(); ++i) x2[i] = c.x[i] * c.x[i];
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = c.w[i] * c.w[i];
  std::vector<float> sums(static_cast<size_t>(c.p.batch * c.p.out_channels * c.p.out_h * c.p.out_w));
  conv2d_ref(c.p, Epilogue{}, x2.data(), w2.data(), nullptr, sums.data());
  std::vector<double> rss(sums.size());
  for (size_t i = 0; i < sums.size(); ++i) rss[i] = std::sqrt(double(sums[i]));
  return rss;
}

// The tolerance of each output given sigma[i], the standard deviation of its rounding error before the
// epilogue: kLambda sigma through the activation, 2u of |bias| + |residual| for the two epilogue adds,
// and a few ulp of the result for a vectorised exp.
inline std::vector<double> tolerance_from_sigma(const Case& c, const std::vector<double>& sigma,
                                                const std::vector<float>& want) {
  const int64_t plane = c.p.out_h * c.p.out_w;
  const double lip = lipschitz(c.act);
  std::vector<double> tol(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t oc = (static_cast<int64_t>(i) / plane) % c.p.out_channels;
    const double extra = std::fabs(c.bias[oc]) + (c.with_residual ? std::fabs(c.residual[i]) : 0.0);
    tol[i] = lip * (kLambda * sigma[i] + 2 * kUnit * extra) + 4 * kUnit * (1 + std::fabs(want[i]));
  }
  return tol;
}

// Largest |got - want| / tol; fails (naming the first offender) when any output exceeds its tolerance.
inline double check_within(const std::vector<float>& got, const std::vector<float>& want,
                           const std::vector<double>& tol, const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    if (!(err <= tol[i])) {
      ADD_FAILURE() << what << ": output " << i << " got " << got[i] << ", want " << want[i] << ", error " << err
                    << " > tolerance " << tol[i];
      return HUGE_VAL;
    }
    worst = std::max(worst, err / tol[i]);
  }
  return worst;
}

// A channel block that divides `channels`: plain, or the blocks of the kernels of `isa`'s architecture
// (8 and 16 on x86-64; 4, and 16 which the 4-lane kernels also read, on AArch64).
inline int64_t random_block(std::mt19937& rng, int64_t channels, Isa isa = Isa::Avx512) {
  for (;;) {
    const int64_t b = is_arm_isa(isa) ? conv_test::pick(rng, {1, 4, 4, 16}) : conv_test::pick(rng, {1, 8, 16});
    if (channels % b == 0) return b;
  }
}

// Plain NCHW <-> NCHW[block]c copies of a tensor with `channels` channels and `plane` pixels per channel.
inline std::vector<float> to_block(const std::vector<float>& plain, int64_t batch, int64_t channels, int64_t plane,
                                   int64_t block) {
  std::vector<float> out(plain.size());
  reorder_blocks_ref(plain.data(), out.data(), batch, channels, plane, 1, block);
  return out;
}

inline std::vector<float> from_block(const std::vector<float>& blocked, int64_t batch, int64_t channels,
                                     int64_t plane, int64_t block) {
  std::vector<float> out(blocked.size());
  reorder_blocks_ref(blocked.data(), out.data(), batch, channels, plane, block, 1);
  return out;
}

}  // namespace conv_rounding
}  // namespace ninegrid
