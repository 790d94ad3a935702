// The vector QuantizeLinear / DequantizeLinear kernels between float and uint8 with one scale and zero point
// (kernels/x86/quantize_linear_impl.h) against kernels/ref/quantize_linear_ref.cpp, bit for bit: quotients
// on rounding ties and a few ulps from them (where multiplying by 1 / scale could round otherwise), past both
// ends of the range, infinite, NaN and subnormal inputs, random scales and zero points (0 and 255 included),
// lengths that are not a multiple of the vector; every uint8 value dequantised.
// For the VNNI and the AVX2 kernels (each skipped where the CPU lacks it), and on AArch64 the NEON ones
// (kernels/arm/quantize_linear_arm.h, the same template).
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/ref/quantize_linear_ref.h"
#if defined(__x86_64__)
#include "kernels/x86/qconv_kernels_x86.h"
#else
#include "kernels/arm/quantize_linear_arm.h"
#endif

namespace ninegrid {
namespace {

struct Int8Isa {
  const char* name;
  bool runs;
  void (*quantize)(const float*, float, int32_t, uint8_t*, int64_t);
  void (*dequantize)(const uint8_t*, float, int32_t, float*, int64_t);
};

std::vector<Int8Isa> int8_isas() {
#if defined(__x86_64__)
  const CpuFeatures& f = cpu_features();
  return {{"vnni", f.avx512f && f.avx512bw && f.avx512vnni, vnni::quantize_u8, vnni::dequantize_u8},
          {"avx2", f.avx2 && f.fma, avx2::quantize_u8, avx2::dequantize_u8}};
#else
  return {{"neon", true, neon::quantize_u8, neon::dequantize_u8}};
#endif
}

TEST(QuantizeLinearSimd, MatchesReferenceBitForBit) {
  std::mt19937 rng(10);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 200; ++iter) {
      // Exact halves sometimes, so that the ties below are exact quotients.
      const int exponent = -20 - static_cast<int>(uniform(0, 8));
      const float scale = iter % 5 == 0 ? 0.5f * static_cast<float>(uniform(1, 4))
                                        : std::ldexp(static_cast<float>(uniform(1, 1 << 20)), exponent);
      const uint8_t zp = static_cast<uint8_t>(uniform(0, 3) == 0 ? (uniform(0, 1) ? 0 : 255) : uniform(0, 255));
      const int64_t n = uniform(0, 1) ? uniform(1, 40) : uniform(1, 3000);
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) {
        switch (uniform(0, 9)) {
          case 0: v = scale * (static_cast<float>(uniform(-300, 300)) + 0.5f); break;  // ties (when exact)
          case 1: v = std::numeric_limits<float>::quiet_NaN(); break;
          case 2: v = std::numeric_limits<float>::infinity() * (uniform(0, 1) ? 1.f : -1.f); break;
          case 3: v = std::ldexp(1.f, static_cast<int>(uniform(-149, 127))) * (uniform(0, 1) ? 1.f : -1.f); break;
          case 4: {
            // A few ulps from a tie: where x * (1 / scale) and x / scale can round to different integers.
            v = scale * (static_cast<float>(uniform(-300, 300)) + 0.5f);
            const float toward = (uniform(0, 1) ? 1.f : -1.f) * std::numeric_limits<float>::infinity();
            for (int64_t k = uniform(0, 3); k > 0; --k) v = std::nextafter(v, toward);
            break;
          }
          default:
            v = scale * static_cast<float>(uniform(-400, 400)) * std::ldexp(1.f, -static_cast<int>(uniform(0, 3)));
        }
      }
      std::vector<uint8_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n) + 64, 0xA5);
      quantize_linear_ref(x.data(), &scale, &zp, DataType::UInt8, want.data(), QuantAxis{}, 0, n);
      isa.quantize(x.data(), scale, zp, got.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)])
            << isa.name << " element " << i << " of " << n << ": x " << x[static_cast<size_t>(i)] << " scale " << scale
            << " zero point " << int(zp);
      for (int64_t g = 0; g < 64; ++g) ASSERT_EQ(got[static_cast<size_t>(n + g)], 0xA5) << isa.name << ": wrote past";

      // Dequantised: every value, then a random run.
      std::vector<uint8_t> q(static_cast<size_t>(n < 256 ? 256 : n));
      for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(i < 256 ? i : uniform(0, 255));
      const int64_t m = static_cast<int64_t>(q.size());
      std::vector<float> want_x(q.size()), got_x(q.size() + 16, -7.f);
      dequantize_linear_ref(q.data(), DataType::UInt8, &scale, &zp, want_x.data(), QuantAxis{}, 0, m);
      isa.dequantize(q.data(), scale, zp, got_x.data(), m);
      EXPECT_EQ(std::memcmp(got_x.data(), want_x.data(), want_x.size() * sizeof(float)), 0) << isa.name;
      for (int64_t g = 0; g < 16; ++g) ASSERT_EQ(got_x[static_cast<size_t>(m + g)], -7.f) << isa.name << ": wrote past";
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
}

}  // namespace
}  // namespace ninegrid
#endif
