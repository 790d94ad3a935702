// Indirect convolution: the indirection buffer against hand-worked entries; the scalar twin
// (kernels/ref/conv2d_indirect_ref.h) and the x86 kernels (ops/conv_indirect.h, AVX2 and AVX-512) against
// the plain direct reference conv2d_ref on random shapes: kernels 1..7 (non-square too), strides 1..3,
// dilations 1..3, pads 0..3, groups, channels that are not multiples of the block, every block
// combination and activation, with and without residual.
//
// Tolerance (conv_rounding_test_util.h): both sides sum the same n = ic_per_group * taps products in a
// different order, so each errs with a standard deviation of about u sqrt(n + 2) sqrt(sum (x w)^2); the
// test allows 7 of each side's deviation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "conv_rounding_test_util.h"
#include "conv_test_util.h"
#include "kernels/indirection.h"
#include "kernels/ref/conv2d_indirect_ref.h"
#include "ninegrid/tensor.h"
#include "ops/conv_indirect.h"
#include "ops/conv_select.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

using namespace conv_test;
using namespace conv_rounding;

std::vector<double> tolerance(const Case& c, const std::vector<float>& want) {
  const std::vector<double> rss = direct_terms_rss(c);
  const double n = double(c.p.in_channels_per_group() * c.p.kernel_h * c.p.kernel_w + 2);
  std::vector<double> sigma(rss.size());
  for (size_t i = 0; i < rss.size(); ++i) sigma[i] = 2 * kUnit * std::sqrt(n) * rss[i];
  return tolerance_from_sigma(c, sigma, want);
}

// A random conv of any shape; `groups` from the list when it divides both channel counts.
Conv2dParams random_params(std::mt19937& rng, std::initializer_list<int64_t> in_channels,
                           std::initializer_list<int64_t> out_channels_per_group,
                           std::initializer_list<int64_t> groups) {
  for (;;) {
    Conv2dParams p;
    p.batch = pick(rng, {1, 1, 2});
    p.groups = pick(rng, groups);
    p.in_channels = pick(rng, in_channels) * p.groups;
    p.out_channels = pick(rng, out_channels_per_group) * p.groups;
    p.kernel_h = uniform(rng, 1, 7);
    p.kernel_w = uniform(rng, 0, 2) == 0 ? p.kernel_h : uniform(rng, 1, 7);
    p.stride_h = uniform(rng, 1, 3), p.stride_w = uniform(rng, 1, 3);
    p.dilation_h = uniform(rng, 1, 3), p.dilation_w = uniform(rng, 1, 3);
    p.in_h = uniform(rng, 1, 24), p.in_w = uniform(rng, 1, 30);
    p.pad_top = uniform(rng, 0, 3), p.pad_bottom = uniform(rng, 0, 3);
    p.pad_left = uniform(rng, 0, 3), p.pad_right = uniform(rng, 0, 3);
    if (finish_shape(p)) return p;
  }
}

std::vector<float> run_x86(const Case& c, Isa isa, int64_t in_block, int64_t out_block, ThreadPool* pool = nullptr,
                           bool in_place_residual = false, ConvSplit split = ConvSplit::Auto) {
  const Conv2dParams& p = c.p;
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const std::vector<float> xb = to_block(c.x, p.batch, p.in_channels, in_plane, in_block);
  std::vector<float> yb(static_cast<size_t>(p.batch * p.out_channels * out_plane)), rb;
  if (c.with_residual) {
    rb = to_block(c.residual, p.batch, p.out_channels, out_plane, out_block);
    if (in_place_residual) yb = rb;
  }
  ConvPlan plan = indirect_plan(p, in_block, out_block, isa);
  plan.split = split;
  const IndirectConv2d conv(p, c.w.data(), c.bias.data(), c.act, plan);
  const float* residual = c.with_residual ? (in_place_residual ? yb.data() : rb.data()) : nullptr;
  conv.run(xb.data(), yb.data(), residual, pool);
  return from_block(yb, p.batch, p.out_channels, out_plane, out_block);
}

// ---- The indirection buffer ----

// A 3x3 input, 2x2 kernel, stride 2, pad 1 on every side: a 2x2 output. Output (0, 0) reads input rows
// -1, 0 and columns -1, 0: only tap (1, 1) is inside, at pixel 0. Output (1, 1) reads rows 1, 2 and
// columns 1, 2: pixels 4, 5, 7, 8.
TEST(IndirectionBuffer, HandWorkedEntries) {
  Conv2dParams p;
  p.in_h = p.in_w = 3;
  p.kernel_h = p.kernel_w = 2;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  ASSERT_TRUE(finish_shape(p));
  ASSERT_EQ(p.out_h, 2);
  const IndirectionBuffer b = build_indirection(p, 3);
  EXPECT_EQ(b.taps, 4);
  EXPECT_EQ(b.tiles, 2);  // 4 pixels in tiles of 3
  constexpr int32_t Z = IndirectionBuffer::kZero;
  // [tile][tap][pixel]: tile 0 = output pixels 0, 1, 2 = (0,0), (0,1), (1,0); tile 1 = (1,1) and two past the end.
  const std::vector<int32_t> want = {
      Z, Z, Z,  Z, Z, 3,  Z, 1, Z,  0, 2, 6,   // tile 0, taps (0,0) (0,1) (1,0) (1,1)
      4, Z, Z,  5, Z, Z,  7, Z, Z,  8, Z, Z};  // tile 1
  EXPECT_EQ(b.entries, want);
}

// Dilation 2: a 1x3 kernel over a 1x5 row reads columns ow - 1, ow + 1, ow + 3 with pad 1.
TEST(IndirectionBuffer, Dilation) {
  Conv2dParams p;
  p.in_h = 1, p.in_w = 5;
  p.kernel_h = 1, p.kernel_w = 3;
  p.dilation_w = 2;
  p.pad_left = p.pad_right = 1;
  ASSERT_TRUE(finish_shape(p));
  ASSERT_EQ(p.out_w, 3);
  const IndirectionBuffer b = build_indirection(p, 4);
  constexpr int32_t Z = IndirectionBuffer::kZero;
  const std::vector<int32_t> want = {Z, 0, 1, Z,  1, 2, 3, Z,  3, 4, Z, Z};
  EXPECT_EQ(b.entries, want);
}

// ---- The scalar twin ----

TEST(IndirectRef, MatchesDirectReference) {
  std::mt19937 rng(101);
  double worst = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Conv2dParams p = random_params(rng, {1, 3, 8, 17}, {1, 5, 8, 16}, {1, 1, 2, 3});
    const Case c = make_case(rng, p, trial, trial % 2 == 0);
    const int64_t in_block = random_block(rng, p.in_channels), out_block = random_block(rng, p.out_channels);
    const IndirectionBuffer b = build_indirection(p, pick(rng, {1, 4, 12}));
    const std::vector<float> want = expected(c);
    std::vector<float> yb(want.size());
    std::vector<float> rb;
    Epilogue e;
    e.activation = c.act;
    if (c.with_residual) {
      rb = to_block(c.residual, p.batch, p.out_channels, p.out_h * p.out_w, out_block);
      e.residual = rb.data();
    }
    const std::vector<float> xb = to_block(c.x, p.batch, p.in_channels, p.in_h * p.in_w, in_block);
    conv2d_indirect_ref(p, e, b, in_block, out_block, xb.data(), c.w.data(), c.bias.data(), yb.data());
    const std::vector<float> got = from_block(yb, p.batch, p.out_channels, p.out_h * p.out_w, out_block);
    worst = std::max(worst, check_within(got, want, tolerance(c, want), describe(p)));
  }
  std::printf("conv2d_indirect_ref: largest error / tolerance %.3g\n", worst);
}

// ---- The vector kernels (AVX2 and AVX-512 on x86-64, NEON on AArch64) ----

class IndirectX86 : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_has(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
  }
  int64_t lanes() const { return lanes_of(GetParam()); }
};

TEST_P(IndirectX86, MatchesDirectReference) {
  std::mt19937 rng(GetParam() == Isa::Avx512 ? 111 : 112);
  double worst = 0;
  for (int trial = 0; trial < 60; ++trial) {
    // One group with any channel counts, or groups of whole vectors of output channels.
    const bool grouped = trial % 3 == 2;
    const Conv2dParams p = grouped ? random_params(rng, {1, 4, 8, 16}, {lanes(), 2 * lanes()}, {2, 3})
                                   : random_params(rng, {1, 3, 5, 8, 16, 17, 32}, {1, 3, 8, 17, 24, 32, 40}, {1});
    const Case c = make_case(rng, p, trial, trial % 2 == 1);
    const int64_t in_block = random_block(rng, p.in_channels, GetParam());
    const int64_t out_block = random_block(rng, p.out_channels, GetParam());
    ASSERT_TRUE(IndirectConv2d::supports(p, in_block, out_block, GetParam())) << describe(p);
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_x86(c, GetParam(), in_block, out_block);
    const std::string what = "blocks " + std::to_string(in_block) + "->" + std::to_string(out_block) + " " +
                             activation_name(c.act.kind) + " " + describe(p);
    worst = std::max(worst, check_within(got, want, tolerance(c, want), what));
  }
  std::printf("%s indirect: largest error / tolerance %.3g\n", isa_name(GetParam()), worst);
}

// Typical layers the general case serves: a 7x7 stride-2 first layer on a plain image, a dilated 3x3, a
// 5x5 stride 2, a grouped 3x3.
TEST_P(IndirectX86, TypicalLayers) {
  std::mt19937 rng(121);
  struct Shape {
    int64_t in_c, out_c, groups, h, w, k, stride, dilation, pad;
  };
  for (const Shape& s : {Shape{3, 64, 1, 56, 56, 7, 2, 1, 3}, Shape{32, 32, 1, 30, 30, 3, 1, 2, 2},
                         Shape{24, 48, 1, 33, 31, 5, 2, 1, 2}, Shape{64, 64, 4, 20, 20, 3, 1, 1, 1}}) {
    Conv2dParams p;
    p.in_channels = s.in_c, p.out_channels = s.out_c, p.groups = s.groups;
    p.in_h = s.h, p.in_w = s.w;
    p.kernel_h = p.kernel_w = s.k;
    p.stride_h = p.stride_w = s.stride;
    p.dilation_h = p.dilation_w = s.dilation;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = s.pad;
    ASSERT_TRUE(finish_shape(p));
    ASSERT_TRUE(IndirectConv2d::supports(p, s.in_c % 16 == 0 ? 16 : 1, lanes(), GetParam())) << describe(p);
    const Case c = make_case(rng, p, 1, true);
    const std::vector<float> want = expected(c);
    const std::vector<float> got = run_x86(c, GetParam(), s.in_c % 16 == 0 ? 16 : 1, lanes());
    check_within(got, want, tolerance(c, want), describe(p));
  }
}

// Every split computes each output as one thread does, so the results are equal bit for bit: by channel
// groups, by bands of tiles (including planes with fewer tiles than threads, whose extra bands are empty),
// and Auto's choice between them.
TEST_P(IndirectX86, ThreadedRunEqualsSingleThread) {
  std::mt19937 rng(131);
  ThreadPool two(2), three(3);
  for (int trial = 0; trial < 8; ++trial) {
    const Conv2dParams p = random_params(rng, {8, 16}, {16, 32}, {1, 2});
    const Case c = make_case(rng, p, trial, true);
    const std::vector<float> single = run_x86(c, GetParam(), 8, 8);
    for (ThreadPool* pool : {&two, &three})
      for (ConvSplit split : {ConvSplit::Auto, ConvSplit::Channels, ConvSplit::Rows, ConvSplit::Serial})
        EXPECT_EQ(single, run_x86(c, GetParam(), 8, 8, pool, false, split))
            << describe(p) << ", " << pool->size() << " threads, split " << conv_split_name(split);
  }
}

TEST_P(IndirectX86, RejectsTheTilesSplit) {
  Conv2dParams p;
  p.in_channels = p.out_channels = 16;
  p.kernel_h = p.kernel_w = 3;
  p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  ConvPlan plan = indirect_plan(p, 16, 16, GetParam());
  plan.split = ConvSplit::Tiles;
  const std::vector<float> w(16 * 16 * 9, 0.f);
  EXPECT_THROW(IndirectConv2d(p, w.data(), nullptr, Activation{}, plan), Error);
}

TEST_P(IndirectX86, ResidualMayBeTheOutput) {
  std::mt19937 rng(141);
  for (int64_t out_block : {1, 8, 16}) {
    const Conv2dParams p = random_params(rng, {8, 16}, {16, 32}, {1});
    const Case c = make_case(rng, p, 2, true);
    const std::vector<float> want = expected(c);
    check_within(run_x86(c, GetParam(), 8, out_block, nullptr, true), want, tolerance(c, want),
                 "in place, out block " + std::to_string(out_block));
  }
}

TEST_P(IndirectX86, RejectsWhatItCannotCompute) {
  Conv2dParams p;
  p.in_channels = p.out_channels = 16;
  p.kernel_h = p.kernel_w = 3;
  p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.pad_top = p.pad_left = 1;
  EXPECT_TRUE(IndirectConv2d::supports(p, 16, 16, GetParam()));
  EXPECT_FALSE(IndirectConv2d::supports(p, 3, 16, GetParam()));   // not a block
  EXPECT_FALSE(IndirectConv2d::supports(p, 16, 16, Isa::Ref));
  Conv2dParams q = p;
  q.groups = 16;  // depthwise: one output channel per group, not a vector
  EXPECT_FALSE(IndirectConv2d::supports(q, 16, 16, GetParam()));
  q = p, q.groups = 2;  // 8 output channels per group: AVX2 vectors only
  EXPECT_TRUE(IndirectConv2d::supports(q, 16, 16, GetParam()));
  q = p, q.stride_h = 0;
  EXPECT_FALSE(IndirectConv2d::supports(q, 16, 16, GetParam()));
  std::vector<float> w(16 * 16 * 9, 0.f);
  EXPECT_THROW(IndirectConv2d(p, w.data(), nullptr, Activation::prelu(nullptr), indirect_plan(p, 16, 16, GetParam())), Error);
  q = p, q.groups = 16;
  EXPECT_THROW(IndirectConv2d(q, w.data(), nullptr, Activation::none(), indirect_plan(q, 16, 16, GetParam())), Error);
}

INSTANTIATE_TEST_SUITE_P(Isa, IndirectX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace ninegrid
