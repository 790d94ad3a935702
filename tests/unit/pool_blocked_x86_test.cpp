// The AVX-512 and AVX2 (x86-64) and NEON (AArch64) MaxPool / AveragePool kernels on channel-blocked tensors (kernels/x86/pool_impl.h,
// through pool_blocked_fast.h with the ISA given explicitly) against the blocked reference
// (kernels/ref/pool_blocked_ref.h), bit for bit: random 2-D windows (kernels 1..5, strides 1..3,
// dilation 1 or 2, pads up to the kernel, so that edge windows can be partly or wholly outside, ceil_mode
// windows past the end padding), planes from 1x1 to 57x61, channels that fill the last block or leave it
// zero-padded as the layout does, and inputs sprinkled with NaN (two payloads), +-0 and +-inf, whose
// results depend on the order of the taps; and the int8 MaxPool on uint8 and int8 bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/pool_blocked_fast.h"
#include "kernels/ref/pool_blocked_ref.h"
#include "core/cpu_features.h"
#include "unit/conv_test_util.h"

namespace ninegrid {
namespace {

using conv_test::pick;
using conv_test::uniform;

float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct Case {
  PoolParams p;
  int64_t batch = 1, channels = 1, block = 16;
  bool count_include_pad = false;

  std::string describe() const {
    auto s = [](int64_t v) { return std::to_string(v); };
    return "batch " + s(batch) + ", channels " + s(channels) + " (block " + s(block) + "), in " + s(p.in[1]) + "x" +
           s(p.in[2]) + ", out " + s(p.out[1]) + "x" + s(p.out[2]) + ", kernel " + s(p.kernel[1]) + "x" +
           s(p.kernel[2]) + ", stride " + s(p.stride[1]) + "x" + s(p.stride[2]) + ", dilation " + s(p.dilation[1]) +
           "x" + s(p.dilation[2]) + ", pads " + s(p.pad_begin[1]) + "," + s(p.pad_begin[2]) + "," + s(p.pad_end[1]) +
           "," + s(p.pad_end[2]) + (count_include_pad ? ", count_include_pad" : "");
  }
};

// One axis of a random window: the output size as ONNX's formula gives it (ceil_mode's last window
// dropped when it would start inside the end padding), or false when the kernel does not fit.
bool random_axis(std::mt19937& rng, PoolParams& p, int a, int64_t in) {
  p.in[a] = in;
  p.kernel[a] = uniform(rng, 1, 5);
  p.stride[a] = uniform(rng, 1, 3);
  p.dilation[a] = uniform(rng, 0, 4) == 0 ? 2 : 1;
  // Pads up to the kernel itself (ONNX allows less, the kernels any): wholly padded edge windows too.
  p.pad_begin[a] = uniform(rng, 0, p.kernel[a]);
  p.pad_end[a] = uniform(rng, 0, p.kernel[a]);
  const int64_t span = (p.kernel[a] - 1) * p.dilation[a] + 1, room = in + p.pad_begin[a] + p.pad_end[a] - span;
  if (room < 0) return false;
  p.out[a] = room / p.stride[a] + 1;
  if (uniform(rng, 0, 2) == 0 && room % p.stride[a] != 0) {  // ceil_mode
    if (p.out[a] * p.stride[a] < in + p.pad_begin[a]) ++p.out[a];
  }
  return true;
}

Case random_case(std::mt19937& rng, int64_t block) {
  for (;;) {
    Case c;
    c.block = block;
    c.batch = uniform(rng, 0, 3) == 0 ? 2 : 1;
    // Whole blocks, or a last block with only some real channels (the rest zero, as the layout pads them).
    c.channels = uniform(rng, 1, 3) * block - (uniform(rng, 0, 1) ? uniform(rng, 1, block - 1) : 0);
    int64_t h, w;
    switch (uniform(rng, 0, 4)) {
      case 0: h = 1, w = 1; break;
      case 1: h = 2, w = 3; break;
      case 2: h = 57, w = 61; break;
      default: h = uniform(rng, 1, 20), w = uniform(rng, 1, 20); break;
    }
    if (!random_axis(rng, c.p, 1, h) || !random_axis(rng, c.p, 2, w)) continue;
    c.p.planes = c.batch * ((c.channels + block - 1) / block) * block;
    c.count_include_pad = uniform(rng, 0, 1) != 0;
    return c;
  }
}

// Blocked input [planes / block][h][w][block] with values in [-4, 4], many ties (a coarse grid), and with
// `specials` some NaN (two payloads, both signs), +0, -0, +inf and -inf; lanes past the real channels zero.
// The max keeps the first NaN of a window, so its payload tells whether the taps ran in the reference's
// order. For the average, which NaN's payload a sum keeps depends on which operand of each addition the
// compiler puts first (GCC treats float addition as commutative): the test holds both kernels as built.
std::vector<float> random_input(std::mt19937& rng, const Case& c, bool specials) {
  const int64_t plane = c.p.in[1] * c.p.in[2], blocks = c.p.planes / c.block;
  std::vector<float> x(static_cast<size_t>(c.p.planes * plane));
  const float nan_a = std::numeric_limits<float>::quiet_NaN(), nan_b = bits_to_float(0xffc01234u);
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t blocks_per_image = blocks / c.batch;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < plane; ++i)
      for (int64_t l = 0; l < c.block; ++l) {
        float& v = x[static_cast<size_t>((b * plane + i) * c.block + l)];
        if ((b % blocks_per_image) * c.block + l >= c.channels) {
          v = 0.f;
          continue;
        }
        const int k = static_cast<int>(uniform(rng, 0, 99));
        if (specials && k < 3) v = k == 0 ? nan_a : k == 1 ? nan_b : -nan_a;
        else if (specials && k < 6) v = k == 3 ? 0.f : k == 4 ? -0.f : -inf;
        else if (specials && k == 6) v = inf;
        else v = static_cast<float>(uniform(rng, -16, 16)) * 0.25f;
      }
  return x;
}

enum class Kind { Max, Average };

void run(Kind kind, Isa isa, const Case& c, const float* x, float* y, int64_t begin, int64_t end) {
  if (kind == Kind::Max) max_pool_blocked_fast(isa, c.p, c.block, x, y, begin, end);
  else average_pool_blocked_fast(isa, c.p, c.count_include_pad, c.block, x, y, begin, end);
}

// The fast kernel of `isa` on c, its output rows in up to three pieces (as the thread pool splits them),
// equals the reference bit for bit; except that where an average meets two different NaNs, which payload
// survives is the addition's operand order, which the compiler picks (RelWithDebInfo and Release differ),
// so there any NaN matches a NaN. MaxPool's selects fix the payload in the source: bit for bit always.
void expect_same_as_ref(Kind kind, Isa isa, const Case& c, const std::vector<float>& x, std::mt19937& rng) {
  const int64_t rows = c.p.planes / c.block * c.p.out[1];
  const size_t size = static_cast<size_t>(c.p.planes * c.p.out[1] * c.p.out[2]);
  std::vector<float> want(size, 7.f), got(size, 7.f);
  if (kind == Kind::Max) max_pool_blocked_ref(c.p, c.block, x.data(), want.data(), 0, rows);
  else average_pool_blocked_ref(c.p, c.count_include_pad, c.block, x.data(), want.data(), 0, rows);
  const int64_t cut1 = uniform(rng, 0, rows), cut2 = uniform(rng, cut1, rows);
  run(kind, isa, c, x.data(), got.data(), 0, cut1);
  run(kind, isa, c, x.data(), got.data(), cut1, cut2);
  run(kind, isa, c, x.data(), got.data(), cut2, rows);
  if (std::memcmp(got.data(), want.data(), size * sizeof(float)) == 0) return;
  for (size_t i = 0; i < size; ++i) {
    uint32_t g, w;
    std::memcpy(&g, &got[i], sizeof g);
    std::memcpy(&w, &want[i], sizeof w);
    const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
    if (g != w && !(kind == Kind::Average && both_nan)) {
      ADD_FAILURE() << (kind == Kind::Max ? "MaxPool " : "AveragePool ") << isa_name(isa) << ", " << c.describe()
                    << ": element " << i << " is " << got[i] << " (0x" << std::hex << g << "), the reference "
                    << want[i] << " (0x" << w << ")" << std::dec;
      return;
    }
  }
}

class PoolBlockedX86 : public ::testing::TestWithParam<Isa> {};

TEST_P(PoolBlockedX86, MaxPoolMatchesReferenceBitForBit) {
  const Isa isa = GetParam();
  SKIP_WITHOUT(isa);
  ASSERT_EQ(pool_blocked_isa(isa_block(isa), isa), isa);
  std::mt19937 rng(11);
  for (int t = 0; t < 400 && !HasFailure(); ++t) {
    const Case c = random_case(rng, isa_block(isa));
    expect_same_as_ref(Kind::Max, isa, c, random_input(rng, c, t % 2 == 0), rng);
  }
}

TEST_P(PoolBlockedX86, AveragePoolMatchesReferenceBitForBit) {
  const Isa isa = GetParam();
  SKIP_WITHOUT(isa);
  std::mt19937 rng(12);
  for (int t = 0; t < 400 && !HasFailure(); ++t) {
    const Case c = random_case(rng, isa_block(isa));
    expect_same_as_ref(Kind::Average, isa, c, random_input(rng, c, t % 2 == 0), rng);
  }
}

// A k x k, stride-2 pool of 64 channels from 112x112 to 56x56: ResNet's stem pool for k = 3 (pad 1) and
// the 2x2 downsampling pool for k = 2 (no pad), the shapes the unrolled whole-window path was written for.
Case stride2_pool_112(int64_t block, int64_t k) {
  Case c;
  c.block = block;
  c.channels = c.p.planes = 64;
  c.p.in[1] = c.p.in[2] = 112;
  c.p.kernel[1] = c.p.kernel[2] = k;
  c.p.stride[1] = c.p.stride[2] = 2;
  c.p.pad_begin[1] = c.p.pad_begin[2] = c.p.pad_end[1] = c.p.pad_end[2] = k == 3 ? 1 : 0;
  c.p.out[1] = c.p.out[2] = 56;
  return c;
}

TEST_P(PoolBlockedX86, CommonPoolsMatchReference) {
  const Isa isa = GetParam();
  SKIP_WITHOUT(isa);
  std::mt19937 rng(13);
  for (int64_t k : {2, 3}) {
    const Case c = stride2_pool_112(isa_block(isa), k);
    for (bool specials : {false, true}) {
      const std::vector<float> x = random_input(rng, c, specials);
      expect_same_as_ref(Kind::Max, isa, c, x, rng);
      expect_same_as_ref(Kind::Average, isa, c, x, rng);
    }
  }
}

// GlobalAveragePool: each lane summed in double pixel after pixel, as the reference does, so bit for bit
// (NaN payloads aside, as for AveragePool); planes from empty to EfficientNet's 112x112, block planes split
// in up to three pieces.
TEST_P(PoolBlockedX86, GlobalAveragePoolMatchesReferenceBitForBit) {
  const Isa isa = GetParam();
  SKIP_WITHOUT(isa);
  std::mt19937 rng(14);
  const int64_t block = isa_block(isa);
  for (int64_t plane : {0, 1, 3, 49, 196, 785, 12544}) {
    for (bool specials : {false, true}) {
      const int64_t block_planes = uniform(rng, 1, 7);
      Case c;
      c.block = block;
      c.channels = block_planes * block - uniform(rng, 0, block - 1);  // the last block maybe zero-padded
      c.p.planes = block_planes * block;
      c.p.in[1] = 1, c.p.in[2] = plane;
      const std::vector<float> x = plane > 0 ? random_input(rng, c, specials) : std::vector<float>(1, 0.f);
      std::vector<float> want(static_cast<size_t>(c.p.planes), 7.f), got(want.size(), 7.f);
      global_average_pool_blocked_ref(plane, block, x.data(), want.data(), 0, block_planes);
      const int64_t cut1 = uniform(rng, 0, block_planes), cut2 = uniform(rng, cut1, block_planes);
      global_average_pool_blocked_fast(isa, plane, block, x.data(), got.data(), 0, cut1);
      global_average_pool_blocked_fast(isa, plane, block, x.data(), got.data(), cut1, cut2);
      global_average_pool_blocked_fast(isa, plane, block, x.data(), got.data(), cut2, block_planes);
      for (size_t i = 0; i < want.size(); ++i) {
        uint32_t g, w;
        std::memcpy(&g, &got[i], sizeof g);
        std::memcpy(&w, &want[i], sizeof w);
        if (!(std::isnan(got[i]) && std::isnan(want[i]))) {
          ASSERT_EQ(g, w) << isa_name(isa) << ", plane " << plane << ", lane " << i << ": " << got[i] << " vs "
                          << want[i];
        }
      }
    }
  }
}

// The int8 MaxPool (uint8 activations of quantised models, and int8) on the same random windows: bytes
// drawn over the whole range, with the extremes (0 and 255, -128 and 127) often, so that a signed max on
// unsigned data, an unsigned one on signed data or a wrong start value for a window all show; output rows
// in up to three pieces. Integer max is exact: bit for bit.
template <class E>
void expect_int8_max_pool_same_as_ref(Isa isa, const Case& c, std::mt19937& rng) {
  const int64_t plane = c.p.in[1] * c.p.in[2], blocks = c.p.planes / c.block, blocks_per_image = blocks / c.batch;
  const int lo = std::numeric_limits<E>::lowest(), hi = std::numeric_limits<E>::max();
  std::vector<E> x(static_cast<size_t>(c.p.planes * plane));
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < plane; ++i)
      for (int64_t l = 0; l < c.block; ++l) {
        const bool real = (b % blocks_per_image) * c.block + l < c.channels;
        const int k = static_cast<int>(uniform(rng, 0, 9));
        const int v = !real ? 0 : k == 0 ? lo : k == 1 ? hi : static_cast<int>(uniform(rng, lo, hi));
        x[static_cast<size_t>((b * plane + i) * c.block + l)] = static_cast<E>(v);
      }
  const int64_t rows = blocks * c.p.out[1];
  const size_t size = static_cast<size_t>(c.p.planes * c.p.out[1] * c.p.out[2]);
  std::vector<E> want(size, E(7)), got(size, E(7));
  max_pool_blocked_ref(c.p, c.block, x.data(), want.data(), 0, rows);
  const int64_t cut1 = uniform(rng, 0, rows), cut2 = uniform(rng, cut1, rows);
  max_pool_blocked_fast(isa, c.p, c.block, x.data(), got.data(), 0, cut1);
  max_pool_blocked_fast(isa, c.p, c.block, x.data(), got.data(), cut1, cut2);
  max_pool_blocked_fast(isa, c.p, c.block, x.data(), got.data(), cut2, rows);
  for (size_t i = 0; i < size; ++i) {
    if (got[i] != want[i]) {
      ADD_FAILURE() << (std::is_signed<E>::value ? "int8" : "uint8") << " MaxPool " << isa_name(isa) << ", "
                    << c.describe() << ": element " << i << " is " << int(got[i]) << ", the reference "
                    << int(want[i]);
      return;
    }
  }
}

TEST_P(PoolBlockedX86, Int8MaxPoolMatchesReferenceBitForBit) {
  const Isa isa = GetParam();
  SKIP_WITHOUT(isa);
  std::mt19937 rng(15);
  for (int t = 0; t < 300 && !HasFailure(); ++t) {
    const Case c = random_case(rng, isa_block(isa));
    if (t % 2 == 0) expect_int8_max_pool_same_as_ref<uint8_t>(isa, c, rng);
    else expect_int8_max_pool_same_as_ref<int8_t>(isa, c, rng);
  }
  // ResNet's stem pool on uint8, the shape of quantised ResNets.
  expect_int8_max_pool_same_as_ref<uint8_t>(isa, stride2_pool_112(isa_block(isa), 3), rng);
}

INSTANTIATE_TEST_SUITE_P(Isas, PoolBlockedX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& i) { return std::string(isa_name(i.param)); });

// Which kernel runs: the vector one only for the block of its lane count (block 8 on an AVX-512 CPU takes
// the AVX2 kernel), never above what the CPU has; the reference for any other block.
TEST(PoolBlockedFast, ChoosesKernelByBlock) {
  EXPECT_EQ(pool_blocked_isa(16, Isa::Avx512), cpu_runs(Isa::Avx512) ? Isa::Avx512 : Isa::Ref);
  EXPECT_EQ(pool_blocked_isa(8, Isa::Avx512), cpu_runs(Isa::Avx2) ? Isa::Avx2 : Isa::Ref);
  EXPECT_EQ(pool_blocked_isa(16, Isa::Avx2), Isa::Ref);
  EXPECT_EQ(pool_blocked_isa(8, Isa::Ref), Isa::Ref);
  for (int64_t block : {4, 5, 32}) EXPECT_EQ(pool_blocked_isa(block, Isa::Avx512), Isa::Ref);
  // NEON: block 4 only (Dotprod's fp32 kernels are NEON's).
  EXPECT_EQ(pool_blocked_isa(4, Isa::Neon), cpu_runs(Isa::Neon) ? Isa::Neon : Isa::Ref);
  EXPECT_EQ(pool_blocked_isa(4, Isa::Dotprod), cpu_runs(Isa::Neon) ? Isa::Neon : Isa::Ref);  // capped to the CPU
  for (int64_t block : {1, 8, 16}) EXPECT_EQ(pool_blocked_isa(block, Isa::Neon), Isa::Ref);
}

// Blocks without a vector kernel (and block 8 asked for AVX-512) still give the reference's results.
TEST(PoolBlockedFast, OtherBlocksMatchReference) {
  std::mt19937 rng(14);
  for (int64_t block : {4, 5, 8, 16, 32})
    for (int t = 0; t < 20 && !HasFailure(); ++t) {
      const Case c = random_case(rng, block);
      const std::vector<float> x = random_input(rng, c, true);
      expect_same_as_ref(Kind::Max, Isa::Avx512, c, x, rng);
      expect_same_as_ref(Kind::Average, Isa::Avx512, c, x, rng);
      expect_int8_max_pool_same_as_ref<uint8_t>(Isa::Avx512, c, rng);
      expect_int8_max_pool_same_as_ref<int8_t>(Isa::Avx512, c, rng);
    }
}

}  // namespace
}  // namespace ninegrid
