// The per-layer conv algorithm choice (ops/conv_select.h): which algorithm each kind of layer gets, that
// NINEGRID_CONV_ALGORITHMS restricts it, and that whatever is chosen computes the layer (against the
// blocked reference). Each algorithm's accuracy is tested tightly in its own test file; here a plumbing
// fault (weights, bias, blocks or residual handed over wrongly) would be an error of the order of the
// outputs themselves.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "ninegrid/tensor.h"
#include "ops/conv_select.h"
#include "unit/conv_rounding_test_util.h"
#include "unit/conv_test_util.h"

namespace ninegrid {
namespace {

using conv_test::magnitude_bound;
using conv_test::random_vector;

Conv2dParams conv(int64_t ic, int64_t oc, int64_t hw, int64_t k, int64_t stride, int64_t groups = 1) {
  Conv2dParams p;
  p.in_channels = ic, p.out_channels = oc, p.groups = groups;
  p.in_h = p.in_w = hw;
  p.kernel_h = p.kernel_w = k;
  p.stride_h = p.stride_w = stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = k / 2;
  conv_test::finish_shape(p);
  return p;
}

ExecSettings settings(Isa isa, unsigned allowed) {
  ExecSettings s;
  s.isa = isa;
  s.conv_algorithms = allowed;
  return s;
}

// The name of the kernel chosen for p ("" when none), without running it: for layers too large to check
// against the (slow) reference in a unit test.
std::string chosen(const Conv2dParams& p, Isa isa, int64_t in_block, int64_t out_block, unsigned allowed = kConvAll) {
  const std::vector<float> w(static_cast<size_t>(p.out_channels * p.in_channels / p.groups * p.kernel_h * p.kernel_w));
  auto kernel = select_conv2d_kernel(p, w.data(), nullptr, Activation::none(), in_block, out_block, settings(isa, allowed));
  return kernel ? kernel->name() : "";
}

// Builds the chosen kernel, runs it with a bias, a residual and ReLU, checks it against the blocked
// reference and returns its name ("" when nothing was chosen).
std::string choose_and_check(const Conv2dParams& p, Isa isa, int64_t in_block, int64_t out_block,
                             unsigned allowed = kConvAll) {
  std::mt19937 rng(static_cast<unsigned>(p.in_channels * 131 + p.out_channels * 7 + p.in_h));
  const auto x = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
  const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels / p.groups * p.kernel_h * p.kernel_w));
  const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
  const auto residual = random_vector(rng, static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
  auto kernel =
      select_conv2d_kernel(p, w.data(), bias.data(), Activation::relu(), in_block, out_block, settings(isa, allowed));
  if (!kernel) return "";
  std::vector<float> got(residual.size()), want(residual.size());
  kernel->run(x.data(), got.data(), residual.data(), nullptr);
  Epilogue e;
  e.activation = Activation::relu();
  e.residual = residual.data();
  conv2d_blocked_ref(p, e, in_block, out_block, x.data(), w.data(), bias.data(), want.data());
  const auto mag = magnitude_bound(p, in_block, out_block, x, w, bias.data(), residual.data());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(got[i] - want[i]), 1e-3 * mag[i]) << kernel->name() << " output " << i;
  return kernel->name();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

class ConvSelect : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!conv_test::cpu_has(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
  }
  int64_t lanes() const { return GetParam() == Isa::Avx512 ? 16 : 8; }
};

TEST_P(ConvSelect, DenseThreeByThreeWithManyChannelsRunsWinograd) {
  const std::string isa = isa_name(GetParam());
  EXPECT_TRUE(starts_with(chosen(conv(64, 64, 56, 3, 1), GetParam(), lanes(), lanes()), "winograd"));
  EXPECT_TRUE(starts_with(choose_and_check(conv(64, 64, 28, 3, 1), GetParam(), lanes(), lanes()), "winograd"));
  // Stride 2 and few channels are not Winograd's: strided dense convs past the first layer run the
  // indirect kernel, the rest the direct one.
  EXPECT_EQ(choose_and_check(conv(64, 64, 28, 3, 2), GetParam(), lanes(), lanes()), "indirect/" + isa);
  EXPECT_EQ(choose_and_check(conv(3, 16, 28, 3, 2), GetParam(), 1, lanes()), "direct/" + isa);
  EXPECT_EQ(choose_and_check(conv(8, 16, 20, 3, 1), GetParam(), 8, lanes()), "direct/" + isa);
}

TEST_P(ConvSelect, SmallPlanesWithoutWinogradRunIndirect) {
  const std::string isa = isa_name(GetParam());
  const unsigned no_winograd = kConvDirect | kConvIndirect;
  EXPECT_EQ(choose_and_check(conv(64, 64, 7, 3, 1), GetParam(), lanes(), lanes(), no_winograd), "indirect/" + isa);
  EXPECT_EQ(choose_and_check(conv(64, 64, 14, 3, 1), GetParam(), lanes(), lanes(), no_winograd), "direct/" + isa);
  EXPECT_EQ(choose_and_check(conv(64, 64, 7, 1, 1), GetParam(), lanes(), lanes(), no_winograd), "pointwise/" + isa);
}

TEST_P(ConvSelect, OneByOneRunsPointwiseUnlessStrassenPays) {
  const std::string isa = isa_name(GetParam());
  EXPECT_EQ(choose_and_check(conv(64, 64, 28, 1, 1), GetParam(), lanes(), lanes()), "pointwise/" + isa);
  // Strassen only where its saving is clear. At 1024 channels and 14x14 it is with AVX2 (measured 3.9 ms
  // against the pointwise kernel's 4.5 ms) but not with AVX-512 (no faster than pointwise); at 2048 with both.
  EXPECT_EQ(chosen(conv(1024, 1024, 14, 1, 1), GetParam(), lanes(), lanes()),
            GetParam() == Isa::Avx2 ? "strassen1/avx2" : "pointwise/avx512");
  EXPECT_EQ(chosen(conv(2048, 2048, 14, 1, 1), GetParam(), lanes(), lanes()), "strassen1/" + isa);
}

TEST_P(ConvSelect, DepthwiseAndGroupedConvs) {
  const std::string isa = isa_name(GetParam());
  EXPECT_EQ(choose_and_check(conv(32, 32, 17, 3, 2, 32), GetParam(), lanes(), lanes()), "depthwise3x3/" + isa);
  // Output channels per group a multiple of the vector width: the direct kernel; 8 per group with
  // 16-lane output blocks: the indirect kernel's AVX2 variant.
  EXPECT_EQ(choose_and_check(conv(64, 64, 12, 3, 1, 64 / lanes()), GetParam(), lanes(), lanes()), "direct/" + isa);
  if (GetParam() == Isa::Avx512) {
    EXPECT_EQ(choose_and_check(conv(64, 64, 12, 3, 1, 8), GetParam(), 16, 16), "indirect/avx2");
  }
}

TEST_P(ConvSelect, AllowedAlgorithmsRestrictTheChoice) {
  const std::string isa = isa_name(GetParam());
  const Conv2dParams resnet = conv(64, 64, 28, 3, 1);
  EXPECT_EQ(choose_and_check(resnet, GetParam(), lanes(), lanes(), kConvDirect), "direct/" + isa);
  EXPECT_EQ(choose_and_check(resnet, GetParam(), lanes(), lanes(), kConvIndirect), "indirect/" + isa);
  EXPECT_EQ(chosen(conv(2048, 2048, 14, 1, 1), GetParam(), lanes(), lanes(), kConvDirect | kConvIndirect),
            "pointwise/" + isa);
  EXPECT_EQ(choose_and_check(resnet, GetParam(), lanes(), lanes(), 0), "");
}

INSTANTIATE_TEST_SUITE_P(Isa, ConvSelect, ::testing::Values(Isa::Avx2, Isa::Avx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

// On AArch64 the same rules pick among the NEON kernels (4-channel blocks); there is no Strassen or
// first-layer kernel, so those layers take the pointwise and direct kernels. Each choice runs against the
// reference where that is cheap. (The rules' thresholds were measured on x86 cores; no Arm core was.)
TEST(ConvSelectNeon, ChoosesAmongTheNeonKernels) {
  if (!conv_test::cpu_has(Isa::Neon)) GTEST_SKIP() << "this CPU lacks neon";
  const Isa neon = Isa::Neon;
  EXPECT_TRUE(starts_with(choose_and_check(conv(64, 64, 28, 3, 1), neon, 4, 4), "winograd"));
  EXPECT_EQ(choose_and_check(conv(64, 64, 28, 3, 2), neon, 4, 4), "indirect/neon");
  EXPECT_EQ(choose_and_check(conv(3, 16, 28, 3, 2), neon, 1, 4), "direct/neon");  // a plain image
  EXPECT_EQ(choose_and_check(conv(32, 32, 17, 3, 2, 32), neon, 4, 4), "depthwise3x3/neon");
  EXPECT_EQ(choose_and_check(conv(64, 64, 14, 1, 1), neon, 4, 1), "pointwise/neon");
  EXPECT_EQ(chosen(conv(2048, 2048, 14, 1, 1), neon, 4, 4), "pointwise/neon");
  // 8-channel blocks are not NEON's: only the indirect kernel reads them.
  EXPECT_EQ(choose_and_check(conv(16, 16, 12, 3, 1), neon, 8, 4, kConvDirect), "");
  // Another architecture's ISA runs nothing here.
  EXPECT_EQ(chosen(conv(64, 64, 28, 3, 1), Isa::Avx2, 8, 8), "");
}

TEST(ConvSelectSettings, ParsesTheAlgorithmListAndNamesBadEntries) {
  EXPECT_EQ(parse_conv_algorithms("direct,indirect"), unsigned(kConvDirect | kConvIndirect));
  EXPECT_EQ(parse_conv_algorithms("winograd"), unsigned(kConvWinograd));
  EXPECT_EQ(parse_conv_algorithms(""), unsigned(kConvAll));
  try {
    parse_conv_algorithms("direct,fft");
    ADD_FAILURE() << "an unknown algorithm was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'fft'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ninegrid
