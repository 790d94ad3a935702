// The AVX-512 and AVX2 (x86-64) and NEON (AArch64) float element-wise kernels (kernels/x86/unary_impl.h, through unary_f32_fast with
// the ISA given explicitly, so NINEGRID_ISA is not consulted) against the scalar reference ref::unary_f32
// over random and special inputs, and their exp-based functions against double-precision truth.
//
// Tolerances come from error analysis, in u = 2^-24 (float_accuracy_test_util.h). Against the reference
// a bound is the vector kernel's own (stated in kernels/x86/vector_math_impl.h: exp 2u, expm1 4u,
// log1p 4u, plus 1u per further rounding) plus the reference's: glibc's libm-test-ulps for x86-64 lists
// at most 2 ulp (4u) for the float functions it calls (expf 1 ulp, tanhf 2, expm1f and log1pf none), and
// 1u per float operation around them.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "float_accuracy_test_util.h"
#include "kernels/ref/unary_f32.h"
#include "kernels/unary_f32_fast.h"
#include "core/cpu_features.h"

#if defined(__x86_64__) || defined(__aarch64__)
#include "kernels/x86/unary_x86.h"
#endif

namespace ninegrid {
namespace {

using accuracy::kU;
using ref::UnaryF32;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Relative bound `k` u of the reference result; below FLT_MIN results are subnormal, with an absolute
// precision of 2^-149 rather than a relative one, so the bound is taken of FLT_MIN there (k/2 subnormal
// ulps).
double relative(double k, float want) { return k * kU * std::max<double>(std::fabs(want), FLT_MIN); }

struct UnaryCase {
  const char* name;
  UnaryF32 op;
  ref::UnaryParams params;
  // The largest |vector - reference| allowed for input x and reference result `want`.
  std::function<double(float x, float want)> tolerance;
};

ref::UnaryParams params(float alpha, float beta = 0.f, float gamma = 0.f) {
  ref::UnaryParams p;
  p.alpha = alpha;
  p.beta = beta;
  p.gamma = gamma;
  return p;
}

std::vector<UnaryCase> unary_cases() {
  return {
      // The same single product x * alpha in both: identical.
      {"LeakyRelu", UnaryF32::LeakyRelu, params(0.1f), [](float, float) { return 0.0; }},
      // e^x: 2u (vector) + 2u (expf).
      {"Exp", UnaryF32::Exp, {}, [](float, float y) { return relative(4, y); }},
      // 1 / (1 + e^-x): 2u (exp) + 1u (sum) + 1u (division) in both.
      {"Sigmoid", UnaryF32::Sigmoid, {}, [](float, float y) { return relative(8, y); }},
      // x sigmoid(x): the sigmoid's 8u and the product's 1u in each.
      {"Silu", UnaryF32::Silu, {}, [](float, float y) { return relative(10, y); }},
      // e / (e + 2) with e = expm1(2|x|) (4u, weighted by 2 / (e + 2) <= 1), the sum and the division:
      // 6u; tanhf 4u.
      {"Tanh", UnaryF32::Tanh, {}, [](float, float y) { return relative(10, y); }},
      // alpha expm1(x): 4u + 1u; the reference's expm1f (taken as 2u) + 1u.
      {"Elu", UnaryF32::Elu, params(1.f), [](float, float y) { return relative(8, y); }},
      {"Elu alpha 0.3", UnaryF32::Elu, params(0.3f), [](float, float y) { return relative(8, y); }},
      // One more product by gamma on each side.
      {"Selu", UnaryF32::Selu, params(1.67326319217681884765625f, 0.f, 1.05070102214813232421875f),
       [](float, float y) { return relative(10, y); }},
      // max(x, 0) + log1p(e^-|x|): exp 2u passed through log1p (condition number <= 1), log1p 4u, the
      // sum 1u: 7u; the reference's expf, log1pf and sum: 5u.
      {"Softplus", UnaryF32::Softplus, {}, [](float, float y) { return relative(12, y); }},
      // clamp(alpha x + beta, 0, 1): each side rounds the product and the sum (or fuses them), each
      // within 2u of |alpha x| + |beta|; the clamp does not enlarge a difference.
      {"HardSigmoid", UnaryF32::HardSigmoid, params(0.2f, 0.5f),
       [](float x, float) { return 4 * kU * (std::fabs(0.2 * x) + 0.5); }},
      // x clamp(x/6 + 1/2, 0, 1): the clamp's argument as for HardSigmoid, times |x|, and the final
      // product 1u on each side.
      {"HardSwish", UnaryF32::HardSwish, {},
       [](float x, float y) { return std::fabs(x) * 4 * kU * (std::fabs(x) / 6 + 0.5) + 2 * kU * std::fabs(y); }},
      // Gelu's tanh form, x sigmoid(2z) in the vector kernel, x/2 (1 + tanh z) in the reference, with
      // z = sqrt(2/pi) (x + 0.044715 x^3). Each side rounds z by up to 5u, and sigmoid(2z) moves by
      // |2z| (1 - sigmoid) <= |2z| times z's relative change: 10|z| u on the vector side (with 4u for the
      // sigmoid and 1u for the product), and the same through (1 - tanh^2) on the reference side. The
      // reference's 1 + tanh z also cancels where tanh z nears -1: tanhf's 4u absolute error, times |x|/2.
      {"GeluTanh", UnaryF32::GeluTanh, {},
       [](float x, float y) {
         const double xd = x, z = 0.79788456080286536 * (xd + 0.044715 * xd * xd * xd);
         return (8 + 20 * std::fabs(z)) * kU * std::max<double>(std::fabs(y), FLT_MIN) + 2 * kU * std::fabs(xd);
       }},
  };
}

float next_up(float v) { return std::nextafter(v, kInf); }
float next_down(float v) { return std::nextafter(v, -kInf); }

// Inputs where the functions change behaviour: zeros, infinities, NaN, the subnormal edge, where exp
// overflows (88.72) and underflows (-87.34 to subnormal, -103.97 to 0), where tanh and sigmoid round to
// +-1 (9.01, 16.6), where expm1 rounds to -1 (-17.33), the clamps' corners (HardSigmoid +-2.5, HardSwish
// +-3), the range-reduction boundary ln2/2, and the float neighbours of each.
std::vector<float> special_inputs() {
  const float points[] = {0.f,       FLT_MIN,    FLT_MIN / 8, 1e-30f,   1e-7f,  0.34657359f, 0.5f,   1.f,
                          2.5f,      3.f,        9.01f,       10.f,     16.6f,  17.33f,      20.f,   30.f,
                          87.3365f,  88.02969f,  88.7228394f, 89.f,     100.f,  103.972f,    104.f,  200.f,
                          FLT_MAX,   kInf};
  std::vector<float> v;
  for (float p : points)
    for (float q : {p, next_up(p), next_down(p)})
      if (q >= 0.f) {
        v.push_back(q);
        v.push_back(-q);
      }
  v.push_back(kNaN);
  v.push_back(-kNaN);
  return v;
}

// Random inputs: uniform on [-12, 12] (where the activations bend), magnitudes spread log-uniformly
// over 1e-30 .. 1e3 with either sign, and the special inputs mixed in.
std::vector<float> random_inputs(std::mt19937& rng, int64_t n) {
  const std::vector<float> specials = special_inputs();
  std::uniform_real_distribution<float> uniform(-12.f, 12.f), exponent(-30.f, 3.f);
  std::uniform_int_distribution<int> kind(0, 3);
  std::uniform_int_distribution<size_t> special(0, specials.size() - 1);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    switch (kind(rng)) {
      case 0: v = uniform(rng); break;
      case 1: v = std::pow(10.f, exponent(rng)) * (kind(rng) < 2 ? -1.f : 1.f); break;
      case 2: v = specials[special(rng)]; break;
      default: v = uniform(rng) * 10.f; break;
    }
  }
  return x;
}

// Runs `c` on x with the vector kernel of `isa` and the reference, checking every element and that the
// vector kernel writes nothing past n.
void expect_matches_reference(Isa isa, const UnaryCase& c, const std::vector<float>& x, const std::string& what) {
  const size_t n = x.size();
  constexpr float kSentinel = 1234.5f;
  std::vector<float> got(n + 32, kSentinel), want(n);
  unary_f32_fast(isa, c.op, c.params, x.data(), got.data(), static_cast<int64_t>(n));
  ref::unary_f32(c.op, c.params, x.data(), want.data(), static_cast<int64_t>(n));
  int failures = 0;
  for (size_t k = 0; k < n && failures < 5; ++k) {
    char where[160];
    std::snprintf(where, sizeof where, "%s %s %s n=%zu x[%zu]=%.9g", isa_name(isa), c.name, what.c_str(), n, k, x[k]);
    const ::testing::AssertionResult ok = accuracy::close(got[k], want[k], c.tolerance(x[k], want[k]), where);
    EXPECT_TRUE(ok);
    if (!ok) ++failures;
  }
  for (size_t k = n; k < got.size(); ++k) ASSERT_EQ(got[k], kSentinel) << c.name << ": wrote past n = " << n;
}

class UnaryX86 : public ::testing::TestWithParam<Isa> {};

// Every op, every tail length, random and special inputs.
TEST_P(UnaryX86, MatchesReferenceOnRandomInputs) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::mt19937 rng(7);
  for (const UnaryCase& c : unary_cases()) {
    ASSERT_EQ(unary_f32_isa(c.op, isa), isa) << c.name << " has no vector kernel";
    for (int64_t n : {1, 3, 15, 16, 17, 33, 1000})
      for (int round = 0; round < 3; ++round) expect_matches_reference(isa, c, random_inputs(rng, n), "random");
  }
}

// Each special input alone and all of them in one run (so they meet the full-vector path too).
TEST_P(UnaryX86, MatchesReferenceOnSpecialInputs) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  const std::vector<float> specials = special_inputs();
  for (const UnaryCase& c : unary_cases()) {
    expect_matches_reference(isa, c, specials, "specials");
    for (float v : specials) expect_matches_reference(isa, c, {v}, "special");
  }
}

// A dense sweep of [-110, 110]: every 4099th float, both signs.
TEST_P(UnaryX86, MatchesReferenceOnASweep) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::vector<float> x;
  // Every 4099th float up to 110 (0x42DC0000), both signs. On AArch64 every 16411th: CI runs that build
  // under qemu twice, where the reference's libm calls made this the slowest test (about 50 s per CPU).
#if defined(__aarch64__)
  constexpr uint32_t kStep = 16411;
#else
  constexpr uint32_t kStep = 4099;
#endif
  for (uint32_t bits = 0; bits < 0x42DC0000u; bits += kStep) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
    x.push_back(-v);
  }
  for (const UnaryCase& c : unary_cases()) expect_matches_reference(isa, c, x, "sweep");
}

// Where the reference gives a limit value (+-0 with its sign, +-1, +-inf or NaN) for a zero or infinite
// input, the vector kernel gives exactly the same.
TEST_P(UnaryX86, LimitsAtZerosAndInfinitiesExactly) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  const std::vector<float> x = {0.f, -0.f, kInf, -kInf};
  for (const UnaryCase& c : unary_cases()) {
    std::vector<float> got(x.size()), want(x.size());
    unary_f32_fast(isa, c.op, c.params, x.data(), got.data(), static_cast<int64_t>(x.size()));
    ref::unary_f32(c.op, c.params, x.data(), want.data(), static_cast<int64_t>(x.size()));
    for (size_t k = 0; k < x.size(); ++k) {
      const std::string what = std::string(isa_name(isa)) + " " + c.name + "(" + std::to_string(x[k]) + ")";
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(got[k])) << what << " = " << got[k];
      } else if (want[k] == 0.f || std::fabs(want[k]) == 1.f || std::isinf(want[k])) {
        EXPECT_EQ(got[k], want[k]) << what;
        EXPECT_EQ(std::signbit(got[k]), std::signbit(want[k])) << what;
      }
    }
  }
}

// The vector kernels may run in place (the op's output may share the input's buffer).
TEST_P(UnaryX86, InPlace) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::mt19937 rng(3);
  const std::vector<float> x = random_inputs(rng, 37);
  for (const UnaryCase& c : unary_cases()) {
    std::vector<float> separate(x.size()), in_place = x;
    unary_f32_fast(isa, c.op, c.params, x.data(), separate.data(), static_cast<int64_t>(x.size()));
    unary_f32_fast(isa, c.op, c.params, in_place.data(), in_place.data(), static_cast<int64_t>(x.size()));
    for (size_t k = 0; k < x.size(); ++k) {
      if (!(std::isnan(separate[k]) && std::isnan(in_place[k]))) {
        EXPECT_EQ(in_place[k], separate[k]) << c.name;
      }
    }
  }
}

// Exp, Sigmoid, Tanh, Elu (expm1) and Softplus against double-precision evaluations of their definitions,
// with the vector kernels' own bounds (vector_math_impl.h: exp 2u; sigmoid 2u + 1u + 1u; tanh 6u; expm1
// 4u; softplus 7u), over every 1021st float of [-110, 110] with a normal result.
TEST_P(UnaryX86, WithinItsOwnBoundOfTheExactFunction) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  struct Exact {
    UnaryF32 op;
    double bound_u;
    double (*f)(double);
  };
  const Exact functions[] = {
      {UnaryF32::Exp, 2, [](double v) { return std::exp(v); }},
      {UnaryF32::Sigmoid, 4, [](double v) { return 1 / (1 + std::exp(-v)); }},
      // Where the sigmoid factor itself is no normal float (x below about -87.3) Silu returns 0, as the
      // Mul(x, Sigmoid(x)) it stands for does (and PyTorch's x / (1 + e^-x)): those x are left out.
      {UnaryF32::Silu, 5,
       [](double v) {
         const double s = 1 / (1 + std::exp(-v));
         return s >= FLT_MIN ? v * s : std::nan("");
       }},
      {UnaryF32::Tanh, 6, [](double v) { return std::tanh(v); }},
      {UnaryF32::Elu, 4, [](double v) { return v > 0 ? v : std::expm1(v); }},  // alpha 1: expm1 exactly
      {UnaryF32::Softplus, 7, [](double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }},
  };
  std::vector<float> x;
  for (uint32_t bits = 0; bits < 0x42DC0000u; bits += 1021) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
    x.push_back(-v);
  }
  std::vector<float> got(x.size());
  for (const Exact& e : functions) {
    unary_f32_fast(isa, e.op, params(1.f), x.data(), got.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    float worst_x = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      const double exact = e.f(x[k]);
      if (!(std::fabs(exact) >= FLT_MIN && std::fabs(exact) <= FLT_MAX)) continue;
      const double error_u = std::fabs(got[k] - exact) / (std::fabs(exact) * kU);
      if (!(error_u <= worst)) worst = error_u, worst_x = x[k];
    }
    EXPECT_LE(worst, e.bound_u) << isa_name(isa) << " op " << static_cast<int>(e.op) << " at x = " << worst_x;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, UnaryX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

// The ops listed as vectorised (unary_f32_isa) are exactly those the ISA kernels accept, and Isa::Ref
// runs the reference bit for bit (NINEGRID_ISA=ref reaches the kernels as Isa::Ref).
TEST(UnaryX86Dispatch, VectorListMatchesKernelsAndRefIsTheReference) {
  std::mt19937 rng(11);
  const std::vector<float> x = random_inputs(rng, 40);
  for (int k = 0; k <= static_cast<int>(UnaryF32::Atanh); ++k) {
    const UnaryF32 op = static_cast<UnaryF32>(k);
    const ref::UnaryParams p = params(0.5f, 0.25f, 1.5f);
    EXPECT_EQ(unary_f32_isa(op, Isa::Ref), Isa::Ref);
    std::vector<float> got(x.size()), want(x.size());
    unary_f32_fast(Isa::Ref, op, p, x.data(), got.data(), static_cast<int64_t>(x.size()));
    ref::unary_f32(op, p, x.data(), want.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), x.size() * sizeof(float))) << "op " << k;
#if defined(__x86_64__)
    if (accuracy::cpu_has(Isa::Avx512)) {
      EXPECT_EQ(avx512::unary_f32(op, p, x.data(), got.data(), 40), unary_f32_isa(op, Isa::Avx512) == Isa::Avx512)
          << "op " << k;
    }
    if (accuracy::cpu_has(Isa::Avx2)) {
      EXPECT_EQ(avx2::unary_f32(op, p, x.data(), got.data(), 40), unary_f32_isa(op, Isa::Avx2) == Isa::Avx2)
          << "op " << k;
    }
#elif defined(__aarch64__)
    if (accuracy::cpu_has(Isa::Neon)) {
      EXPECT_EQ(neon::unary_f32(op, p, x.data(), got.data(), 40), unary_f32_isa(op, Isa::Neon) == Isa::Neon)
          << "op " << k;
    }
#endif
  }
}

}  // namespace
}  // namespace ninegrid
