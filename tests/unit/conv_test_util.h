// Helpers shared by the blocked/x86 convolution tests: random data, random conv shapes, the activations to
// sweep, and a tolerance bound derived from the magnitude of what each output accumulates.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/ref/conv2d_blocked_ref.h"
#include "core/cpu_features.h"
#include "vector_isas.h"

namespace ninegrid {
namespace conv_test {

// Whether this CPU runs `isa`'s kernels (the tests call each ISA's kernels directly).
inline bool cpu_has(Isa isa) { return cpu_runs(isa); }

// Channels per vector of the ISA's fp32 kernels: 16, 8 or 4.
inline int lanes_of(Isa isa) { return isa_block(isa); }

// Skips the current test on a CPU without `isa`.
#define SKIP_WITHOUT(isa) \
  if (!::ninegrid::conv_test::cpu_has(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa)

inline std::vector<float> random_vector(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

inline std::vector<float> abs_of(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs(v[i]);
  return a;
}

inline int64_t pick(std::mt19937& rng, std::initializer_list<int64_t> v) {
  return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
}

inline int64_t uniform(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Fills the derived output size; false when the kernel does not fit the padded input.
inline bool finish_shape(Conv2dParams& p) {
  p.out_h = conv_output_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
  p.out_w = conv_output_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, p.pad_right);
  return p.out_h > 0 && p.out_w > 0;
}

inline std::string describe(const Conv2dParams& p) {
  return "batch " + std::to_string(p.batch) + ", channels " + std::to_string(p.in_channels) + "->" +
         std::to_string(p.out_channels) + ", groups " + std::to_string(p.groups) + ", in " + std::to_string(p.in_h) +
         "x" + std::to_string(p.in_w) + ", kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
         ", stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", dilation " +
         std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) + ", pads " + std::to_string(p.pad_top) +
         "," + std::to_string(p.pad_left) + "," + std::to_string(p.pad_bottom) + "," + std::to_string(p.pad_right);
}

// `act` followed by y * scale + shift (Activation::affine_after).
inline Activation with_affine_after(Activation act, float scale, float shift) {
  act.affine_after = true;
  act.scale_after = scale, act.shift_after = shift;
  return act;
}

// Every fused activation, PRelu with the given per-channel slopes (at least out_channels of them), and
// three with an affine after them: HardSwish (as PP-OCRv4 has it), a clamp (whose fast stores then give
// way to the general ones) and PRelu (the first-layer kernel's own path). The scales keep every case
// at most 1.5-Lipschitz, as the tolerances assume.
inline std::vector<Activation> all_activations(const float* slopes) {
  return {Activation::none(),        Activation::relu(),          Activation::relu6(),
          Activation::clip(-0.5f, 0.25f), Activation::leaky_relu(0.1f), Activation::prelu(slopes),
          Activation::sigmoid(),     Activation::hard_sigmoid(0.2f, 0.5f), Activation::hard_swish(),
          Activation::silu(),
          with_affine_after(Activation::hard_swish(), 0.75f, 0.3f),
          with_affine_after(Activation::relu(), -0.5f, 0.25f),
          with_affine_after(Activation::prelu(slopes), 0.75f, -0.2f)};
}

// The name a test reports for an activation: its kind, and "+affine" where an affine follows it.
inline std::string activation_label(const Activation& act) {
  return std::string(activation_name(act.kind)) + (act.affine_after ? "+affine" : "");
}

// Per output, sum |bias| + |residual| + sum |w * x| over the taps the output reads: the scale of the float
// rounding any summation order can make. Computed by the blocked reference on absolute values.
inline std::vector<float> magnitude_bound(const Conv2dParams& p, int64_t in_block, int64_t out_block,
                                          const std::vector<float>& x, const std::vector<float>& w,
                                          const float* bias, const float* residual) {
  const std::vector<float> ax = abs_of(x), aw = abs_of(w);
  std::vector<float> abias, ares;
  if (bias) abias = abs_of(std::vector<float>(bias, bias + p.out_channels));
  const size_t out_size = static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  if (residual) ares = abs_of(std::vector<float>(residual, residual + out_size));
  Epilogue e;
  e.residual = residual ? ares.data() : nullptr;
  std::vector<float> mag(out_size);
  conv2d_blocked_ref(p, e, in_block, out_block, ax.data(), aw.data(), bias ? abias.data() : nullptr, mag.data());
  return mag;
}

// Summing m float terms in any order errs by at most ~m * 2^-24 of their magnitude: 1e-5 of the magnitude
// covers thousands of terms. Activations are at most 1.5-Lipschitz (HardSwish), and a vectorised exp may be
// off by a few ulp of the result, hence the small term relative to the expected value itself.
inline void expect_within_bound(const std::vector<float>& got, const std::vector<float>& want,
                                const std::vector<float>& mag, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 1.5e-5 * mag[i] + 1e-6 * std::fabs(want[i]);
    ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), tol)
        << what << " at output " << i << ": got " << got[i] << ", want " << want[i];
  }
}

}  // namespace conv_test
}  // namespace ninegrid
