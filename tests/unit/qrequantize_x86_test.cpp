// The x86 int8 requantisation epilogue (kernels/x86/qconv_epilogue_impl.h, through requantize_sums) against
// the scalar definition kernels/quantized.h's requantize, bit for bit: random sums from the whole int32 range
// and from the range real convolutions produce, per-channel multipliers, clamps, zero points at both ends, a
// fused residual, every output block, channel counts that are not a multiple of the vector, for the VNNI and
// the AVX2 kernels (each skipped where the CPU lacks it).
#if defined(__x86_64__)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/quantized.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

using RequantizeFn = void (*)(const int32_t*, int64_t, int64_t, const X86Requantize&, int64_t, int64_t, int64_t,
                              uint8_t*);

struct Int8Isa {
  const char* name;
  int lanes;
  bool runs;
  RequantizeFn requantize;
};

std::vector<Int8Isa> int8_isas() {
  const CpuFeatures& f = cpu_features();
  return {{"vnni", 16, f.avx512f && f.avx512bw && f.avx512vnni, vnni::requantize_sums},
          {"avx2", 8, f.avx2 && f.fma, avx2::requantize_sums}};
}

int64_t offset_in_block(int64_t c, int64_t pixel, int64_t plane, int64_t block) {
  return ((c / block) * plane + pixel) * block + c % block;
}

TEST(RequantizeX86, MatchesScalarBitForBit) {
  std::mt19937 rng(20261128);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int P = isa.lanes;
    for (int iter = 0; iter < 300; ++iter) {
      // Output blocks the kernels store: their own, each smaller power of two from 4, and plain.
      std::vector<int64_t> blocks = {1};
      for (int b = 4; b <= P; b *= 2) blocks.push_back(b);
      const int64_t out_block = blocks[static_cast<size_t>(uniform(0, static_cast<int64_t>(blocks.size()) - 1))];
      // Blocked outputs hold whole blocks; plain ones any count.
      int64_t channels = uniform(1, 3 * P);
      if (out_block > 1) channels = out_block * uniform(1, 3 * P / out_block);
      const int64_t plane = uniform(1, 13);
      const int64_t vectors = (channels + P - 1) / P;

      std::vector<int32_t> sums(static_cast<size_t>(vectors * plane * P));
      const int kind = static_cast<int>(uniform(0, 2));
      for (int32_t& s : sums) {
        if (kind == 0) s = static_cast<int32_t>(uniform(-100000, 100000));  // what convolutions produce
        else if (kind == 1) s = static_cast<int32_t>(uniform(std::numeric_limits<int32_t>::min(),
                                                             std::numeric_limits<int32_t>::max()));
        else s = static_cast<int32_t>(uniform(-300, 300));  // near the clamp, where rounding ties happen
      }
      std::vector<float> multiplier(static_cast<size_t>(vectors * P), 1.f);
      for (int64_t c = 0; c < channels; ++c)
        multiplier[static_cast<size_t>(c)] = kind == 2 ? 0.5f * static_cast<float>(uniform(1, 4))  // exact halves
                                                       : std::ldexp(static_cast<float>(uniform(1, 1 << 20)), -28);
      X86Requantize q;
      q.multiplier = multiplier.data();
      q.out_zero_point = static_cast<int32_t>(uniform(0, 2) == 0 ? 0 : uniform(0, 2) == 0 ? 255 : uniform(0, 255));
      q.qmin = static_cast<int32_t>(uniform(0, 1) ? 0 : uniform(0, q.out_zero_point));  // a fused ReLU: qmin = zp
      q.qmax = static_cast<int32_t>(uniform(0, 1) ? 255 : uniform(q.qmin, 255));
      std::vector<uint8_t> residual(static_cast<size_t>(channels * plane));
      const bool with_residual = uniform(0, 1) == 1;
      if (with_residual) {
        for (uint8_t& r : residual) r = static_cast<uint8_t>(uniform(0, 255));
        q.residual = residual.data();
        q.residual_zero_point = static_cast<int32_t>(uniform(0, 255));
        q.residual_multiplier = std::ldexp(static_cast<float>(uniform(1, 1 << 12)), -11);
      }

      // Guard bytes around the output catch stores past the tensor or into the padding lanes.
      const int64_t guard = 64;
      std::vector<uint8_t> y(static_cast<size_t>(channels * plane + 2 * guard), 0xA5);
      isa.requantize(sums.data(), channels, plane, q, out_block, 0, vectors, y.data() + guard);

      Requantization ref;
      ref.multiplier = multiplier.data();
      ref.out_zero_point = q.out_zero_point;
      ref.qmin = q.qmin;
      ref.qmax = q.qmax;
      if (with_residual) {
        ref.residual = residual.data();
        ref.residual_zero_point = q.residual_zero_point;
        ref.residual_multiplier = q.residual_multiplier;
      }
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t p = 0; p < plane; ++p) {
          const int64_t at = offset_in_block(c, p, plane, out_block);
          const int32_t acc = sums[static_cast<size_t>(((c / P) * plane + p) * P + c % P)];
          const uint8_t want = requantize(acc, c, ref, with_residual ? residual[static_cast<size_t>(at)] : 0);
          ASSERT_EQ(y[static_cast<size_t>(guard + at)], want)
              << isa.name << " channel " << c << " of " << channels << ", pixel " << p << ", block " << out_block
              << ", sum " << acc;
        }
      for (int64_t g = 0; g < guard; ++g) {
        ASSERT_EQ(y[static_cast<size_t>(g)], 0xA5) << isa.name << ": wrote before the output";
        ASSERT_EQ(y[static_cast<size_t>(guard + channels * plane + g)], 0xA5) << isa.name << ": wrote past the output";
      }
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
}

}  // namespace
}  // namespace ninegrid
#endif
