// The AVX-512 and AVX2 (x86-64) and NEON (AArch64) Softmax / LogSoftmax kernels along a strided axis (kernels/x86/softmax_impl.h,
// through softmax_fast.h with the ISA given explicitly) against the scalar reference kernels/ref/softmax,
// over shapes that cover whole vectors, masked tails and inner sizes below one vector.
//
// Tolerances from error analysis, in u = 2^-24 (float_accuracy_test_util.h), for an axis of A elements:
//   Softmax e_i / sum: the vector exp 2u for e_i; the float sum of A exponentials 2u + (A - 1)u relative
//   (each addition rounds by at most u of the final sum); the reciprocal and the product 1u each: A + 5.
//   The reference: expf 2u, its double sum 2u, the reciprocal rounded to float and the product: 6u.
//   LogSoftmax (x - max) - log(sum): both compute x - max identically; the vector log(sum) is off by the
//   sum's relative error (A + 1)u plus log_v's 4u of |log(sum)| <= ln A; the reference's by 2u + 1u of
//   ln A; each final subtraction rounds by 1u of the result.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "float_accuracy_test_util.h"
#include "kernels/ref/softmax.h"
#include "kernels/softmax_fast.h"
#include "core/cpu_features.h"

namespace ninegrid {
namespace {

using accuracy::kU;
using ref::SoftmaxKind;

constexpr float kInf = std::numeric_limits<float>::infinity();

double tolerance(SoftmaxKind kind, int64_t axis, float want) {
  const double a = static_cast<double>(axis);
  if (kind == SoftmaxKind::Softmax) return (a + 11) * kU * std::max<double>(std::fabs(want), FLT_MIN);
  return (a + 3 + 5 * std::log(a)) * kU + 2 * kU * std::fabs(want);
}

const char* kind_name(SoftmaxKind kind) { return kind == SoftmaxKind::Softmax ? "Softmax" : "LogSoftmax"; }

// Values spread over [-30, 30] with some far apart (+-80 .. 100, where e^(x - max) underflows) and, with
// `specials`, some -inf, +inf and NaN.
std::vector<float> random_input(std::mt19937& rng, int64_t n, bool specials) {
  std::uniform_real_distribution<float> near(-30.f, 30.f), far(80.f, 100.f);
  std::uniform_int_distribution<int> kind(0, 99);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) {
    const int k = kind(rng);
    if (specials && k == 0) v = -kInf;
    else if (specials && k == 1) v = kInf;
    else if (specials && k == 2) v = std::numeric_limits<float>::quiet_NaN();
    else if (k < 12) v = k % 2 ? far(rng) : -far(rng);
    else v = near(rng);
  }
  return x;
}

void expect_close_all(const std::vector<float>& got, const std::vector<float>& want, SoftmaxKind kind,
                      int64_t axis, const std::string& what) {
  int failures = 0;
  for (size_t k = 0; k < want.size() && failures < 5; ++k) {
    const ::testing::AssertionResult ok =
        accuracy::close(got[k], want[k], tolerance(kind, axis, want[k]), what + " element " + std::to_string(k));
    EXPECT_TRUE(ok);
    if (!ok) ++failures;
  }
}

class SoftmaxX86 : public ::testing::TestWithParam<Isa> {};

// Whole slices (softmax_f32_fast) for every combination of outer, axis and inner sizes.
TEST_P(SoftmaxX86, MatchesReferenceOverShapes) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::mt19937 rng(5);
  for (SoftmaxKind kind : {SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax})
    for (bool specials : {false, true})
      for (int64_t outer : {1, 3})
        for (int64_t axis : {1, 2, 3, 10})
          for (int64_t inner : {1, 5, 16, 17, 100}) {
            EXPECT_EQ(softmax_f32_isa(kind, inner, isa), inner > 1 ? isa : Isa::Ref);
            const std::vector<float> x = random_input(rng, outer * axis * inner, specials);
            std::vector<float> got(x.size()), want(x.size());
            softmax_f32_fast(isa, kind, x.data(), got.data(), axis, inner, 0, outer);
            ref::softmax_f32(kind, x.data(), want.data(), axis, inner, 0, outer);
            const std::string what = std::string(isa_name(isa)) + " " + kind_name(kind) + (specials ? " specials" : "") +
                                     " outer " + std::to_string(outer) + " axis " + std::to_string(axis) +
                                     " inner " + std::to_string(inner);
            expect_close_all(got, want, kind, axis, what);
          }
}

// Column ranges of one slice (softmax_f32_columns_fast, how threads share a slice): the same values as
// the reference's column ranges, and nothing written outside the range.
TEST_P(SoftmaxX86, ColumnRangesMatchReferenceAndStayInside) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::mt19937 rng(9);
  const int64_t outer = 2, axis = 2, inner = 100;
  const std::vector<float> x = random_input(rng, outer * axis * inner, false);
  constexpr float kSentinel = -7.f;
  for (SoftmaxKind kind : {SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax})
    for (auto range : {std::pair<int64_t, int64_t>{0, 100}, {3, 20}, {16, 48}, {17, 18}, {90, 100}}) {
      std::vector<float> got(x.size(), kSentinel), want(x.size(), kSentinel);
      softmax_f32_columns_fast(isa, kind, x.data(), got.data(), axis, inner, 1, range.first, range.second);
      ref::softmax_f32_columns(kind, x.data(), want.data(), axis, inner, 1, range.first, range.second);
      const std::string what = std::string(isa_name(isa)) + " " + kind_name(kind) + " columns " +
                               std::to_string(range.first) + ".." + std::to_string(range.second);
      expect_close_all(got, want, kind, axis, what);  // the sentinels must match exactly too
    }
}

// The 2-class detection-head shape, a large plane: every column sums to 1 within the analysis above
// (each element within (A + 5)u = 7u of its exact value relative to it, so the pair within 7u of 1).
TEST_P(SoftmaxX86, TwoClassColumnsSumToOne) {
  const Isa isa = GetParam();
  NINEGRID_SKIP_WITHOUT(isa);
  std::mt19937 rng(13);
  const int64_t axis = 2, inner = 160 * 80;
  const std::vector<float> x = random_input(rng, axis * inner, false);
  std::vector<float> y(x.size());
  softmax_f32_fast(isa, SoftmaxKind::Softmax, x.data(), y.data(), axis, inner, 0, 1);
  for (int64_t i = 0; i < inner; ++i)
    ASSERT_NEAR(static_cast<double>(y[i]) + y[inner + i], 1.0, 7 * kU) << "column " << i;
}

INSTANTIATE_TEST_SUITE_P(Isas, SoftmaxX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

// Hardmax, contiguous rows (inner == 1) and Isa::Ref (what NINEGRID_ISA=ref gives) run the reference.
TEST(SoftmaxX86Dispatch, ReferenceWhereNoVectorKernelApplies) {
  EXPECT_EQ(softmax_f32_isa(SoftmaxKind::Hardmax, 100, Isa::Avx512), Isa::Ref);
  EXPECT_EQ(softmax_f32_isa(SoftmaxKind::Softmax, 1, Isa::Avx512), Isa::Ref);
  EXPECT_EQ(softmax_f32_isa(SoftmaxKind::Softmax, 100, Isa::Ref), Isa::Ref);
  std::mt19937 rng(17);
  const std::vector<float> x = random_input(rng, 3 * 4 * 7, true);
  for (SoftmaxKind kind : {SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax, SoftmaxKind::Hardmax}) {
    std::vector<float> got(x.size()), want(x.size());
    softmax_f32_fast(Isa::Ref, kind, x.data(), got.data(), 4, 7, 0, 3);
    ref::softmax_f32(kind, x.data(), want.data(), 4, 7, 0, 3);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), x.size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace ninegrid
