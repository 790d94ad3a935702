// Helpers for testing vector float kernels against their scalar reference in relative terms: errors are
// counted in u = 2^-24, float's unit roundoff (a correctly rounded result is within 1u of the exact
// value relative to it; one ulp is between 1u and 2u of the value it belongs to).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/cpu_features.h"
#include "vector_isas.h"

namespace ninegrid {
namespace accuracy {

constexpr double kU = 0x1p-24;

// The vector ISAs to test, each skipped (not failed) on a CPU without it.
inline bool cpu_has(Isa isa) { return cpu_runs(isa); }

#define NINEGRID_SKIP_WITHOUT(isa) \
  if (!::ninegrid::accuracy::cpu_has(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa)

// got == want within `tolerance` (absolute) for finite want; NaN must meet NaN and an infinity the same
// infinity. `what` names the element in the failure message.
inline ::testing::AssertionResult close(float got, float want, double tolerance, const std::string& what) {
  char text[256];
  if (std::isnan(want) || std::isinf(want)) {
    const bool same = std::isnan(want) ? std::isnan(got) : got == want;
    if (same) return ::testing::AssertionSuccess();
    std::snprintf(text, sizeof text, "%s: got %.9g, reference %.9g", what.c_str(), got, want);
    return ::testing::AssertionFailure() << text;
  }
  if (got == want) return ::testing::AssertionSuccess();  // whatever the tolerance (NaN for a NaN input)
  const double error = std::fabs(static_cast<double>(got) - static_cast<double>(want));
  if (error <= tolerance) return ::testing::AssertionSuccess();  // false for NaN got
  std::snprintf(text, sizeof text, "%s: got %.9g, reference %.9g, error %.3g > tolerance %.3g (%.2f u of the reference)",
                what.c_str(), got, want, error, tolerance, error / (std::fabs(want) * kU));
  return ::testing::AssertionFailure() << text;
}

}  // namespace accuracy
}  // namespace ninegrid
