// The vector element-wise quantised addition (kernels/x86/qadd_impl.h, ng.QAdd's vector kernel) against the
// scalar definition kernels/quantized.h's QuantizedAdd, bit for bit: every (a, b) byte pair under random
// zero points, multipliers (from a fraction of a unit to several: saturating), clamps (a fused ReLU),
// lengths that are not a multiple of the vector (the tail), and in place (y = a, y = b), for the VNNI and
// the AVX2 kernels (each skipped where the CPU lacks it), and on AArch64 the NEON one (kernels/arm/qadd_arm.h,
// the same template).
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/quantized.h"
#include "kernels/x86/qconv_kernels_x86.h"
#if defined(__aarch64__)
#include "kernels/arm/qadd_arm.h"
#endif

namespace ninegrid {
namespace {

using QuantizedAddFn = void (*)(const X86QuantizedAdd&, const uint8_t*, const uint8_t*, uint8_t*, int64_t);

struct Int8Isa {
  const char* name;
  bool runs;
  QuantizedAddFn add;
};

std::vector<Int8Isa> int8_isas() {
#if defined(__x86_64__)
  const CpuFeatures& f = cpu_features();
  return {{"vnni", f.avx512f && f.avx512bw && f.avx512vnni, vnni::quantized_add},
          {"avx2", f.avx2 && f.fma, avx2::quantized_add}};
#else
  return {{"neon", true, neon::quantized_add}};
#endif
}

TEST(QuantizedAddSimd, MatchesScalarBitForBit) {
  std::mt19937 rng(18);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 200; ++iter) {
      QuantizedAdd ref;
      ref.a_zero_point = static_cast<int32_t>(uniform(0, 2) == 0 ? 0 : uniform(0, 255));
      ref.b_zero_point = static_cast<int32_t>(uniform(0, 2) == 0 ? 255 : uniform(0, 255));
      ref.out_zero_point = static_cast<int32_t>(uniform(0, 255));
      // Exact halves sometimes, where the rounding meets ties.
      auto multiplier = [&]() {
        if (uniform(0, 3) == 0) return 0.5f * static_cast<float>(uniform(1, 4));
        return std::ldexp(static_cast<float>(uniform(1, 1 << 12)), -12 + static_cast<int>(uniform(-3, 2)));
      };
      ref.a_multiplier = multiplier();
      ref.b_multiplier = multiplier();
      ref.qmin = static_cast<int32_t>(uniform(0, 1) ? 0 : ref.out_zero_point);
      ref.qmax = static_cast<int32_t>(uniform(0, 1) ? 255 : uniform(ref.qmin, 255));
      X86QuantizedAdd q;
      q.a_zero_point = ref.a_zero_point, q.b_zero_point = ref.b_zero_point, q.out_zero_point = ref.out_zero_point;
      q.a_multiplier = ref.a_multiplier, q.b_multiplier = ref.b_multiplier;
      q.qmin = ref.qmin, q.qmax = ref.qmax;

      // The first iterations: all 65536 byte pairs; then random lengths, short ones (only a tail) included.
      const int64_t n = iter < 4 ? 65536 : uniform(0, 1) ? uniform(1, 40) : uniform(1, 3000);
      std::vector<uint8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        a[static_cast<size_t>(i)] = static_cast<uint8_t>(iter < 4 ? i & 255 : uniform(0, 255));
        b[static_cast<size_t>(i)] = static_cast<uint8_t>(iter < 4 ? i >> 8 : uniform(0, 255));
      }
      std::vector<uint8_t> want(static_cast<size_t>(n));
      for (size_t i = 0; i < want.size(); ++i) want[i] = ref(a[i], b[i]);

      // Guard bytes around the output catch stores outside it.
      const int64_t guard = 64;
      std::vector<uint8_t> y(static_cast<size_t>(n + 2 * guard), 0xA5);
      const int in_place = static_cast<int>(uniform(0, 2));  // 0: separate output, 1: y = a, 2: y = b
      uint8_t* out = y.data() + guard;
      if (in_place == 1) out = a.data();
      if (in_place == 2) out = b.data();
      const std::vector<uint8_t> a0 = a, b0 = b;
      isa.add(q, a.data(), b.data(), out, n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[i], want[static_cast<size_t>(i)])
            << isa.name << " element " << i << " of " << n << ": a " << int(a0[static_cast<size_t>(i)]) << " b "
            << int(b0[static_cast<size_t>(i)]);
      for (int64_t g = 0; g < guard; ++g) {
        ASSERT_EQ(y[static_cast<size_t>(g)], 0xA5) << isa.name << ": wrote before the output";
        ASSERT_EQ(y[static_cast<size_t>(guard + n + g)], 0xA5) << isa.name << ": wrote past the output";
      }
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
}

}  // namespace
}  // namespace ninegrid
#endif
