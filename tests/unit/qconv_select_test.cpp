// The int8 conv policy (ops/qconv_select.h): every candidate plan the tuner may time computes the conv bit
// for bit as the integer reference qconv2d_ref does, over random shapes (odd channel counts, strides 1-2,
// padding, dilation, groups, depthwise, first layers, Winograd and wide pointwise shapes, every block),
// with one and two threads; the candidates cover every kernel family, AVX2 form and split the CPU runs; the
// weight class in the key (qconv_w7_rest_tenths) counts what an independent count of the vpmaddubsw
// kernels' weight vectors gives; the rules pick the AVX2 form by it at their bounds; qconv_plan_fits
// refuses plans no kernel computes, and a tuned plan is used only where it fits.
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "ninegrid/tensor.h"  // Error
#include "kernels/ref/qconv2d_ref.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "ops/qconv_fast.h"
#include "ops/qconv_select.h"
#include "qconv_case.h"

namespace ninegrid {
namespace {

using namespace qconv_test;

ExecSettings settings_for(Isa isa, int threads) {
  ExecSettings s;
  s.isa = isa;
  s.threads = threads;
  return s;
}

ConvKey key_of(const Case& c, const ExecSettings& s) {
  return qconv_key(c.p, c.with_residual, c.in_block, c.out_block, s, c.w.data());
}

// The weights' magnitudes: full int8 (most weight vectors need a rest), 6-bit (none does), or 6-bit with a
// few pairs at the extremes (some do).
void fill_weights(Case& c, Rng& rng) {
  const int kind = static_cast<int>(rng(0, 2));
  if (kind == 0) return;  // fill()'s full range
  for (int8_t& v : c.w) v = static_cast<int8_t>(rng(-63, 63));
  if (kind == 2)
    for (size_t i = 0; i + 1 < c.w.size(); i += static_cast<size_t>(rng(8, 64)))
      c.w[i] = static_cast<int8_t>(rng(0, 1) ? 127 : -128);
}

// A random conv of one of the shapes the rules tell apart.
Case random_case(Rng& rng) {
  Case c;
  Conv2dParams& p = c.p;
  for (;;) {
    p = Conv2dParams();
    p.batch = rng(1, 2);
    const int shape = static_cast<int>(rng(0, 5));
    if (shape == 0) {  // depthwise
      p.in_channels = p.out_channels = p.groups = rng.pick<int64_t>({3, 8, 16, 24, 40});
      p = square_conv(p.in_channels, p.out_channels, p.groups, rng(3, 12), rng(3, 16), rng.pick<int64_t>({3, 5}),
                      rng(1, 2), 1, rng(0, 2));
    } else if (shape == 1) {  // a first layer: a plain image of 1-4 channels
      p = square_conv(rng(1, 4), rng.pick<int64_t>({8, 16, 13, 32}), 1, rng(5, 20), rng(5, 24),
                      rng.pick<int64_t>({3, 5, 7}), rng(1, 2), 1, rng(0, 3));
    } else if (shape == 2) {  // 3x3 stride 1 (Winograd's)
      p = square_conv(rng.pick<int64_t>({16, 32, 12}), rng.pick<int64_t>({16, 24, 8}), 1, rng(4, 14), rng(4, 14), 3,
                      1, 1, rng(0, 1));
    } else if (shape == 3) {  // pointwise, some wide enough for the widened form, some strided
      const int64_t stride = rng(0, 2) == 0 ? 2 : 1;
      p = square_conv(rng.pick<int64_t>({8, 16, 24, 7}), rng.pick<int64_t>({64, 72, 20, 8}), 1, rng(2, 12),
                      rng(2, 12), 1, stride, 1, 0);
    } else {  // any direct conv: kernels 1-5, strides 1-2, dilation, padding, groups
      const int64_t groups = rng(0, 3) == 0 ? rng(2, 3) : 1;
      const int64_t out = groups > 1 ? groups * rng.pick<int64_t>({8, 16, 3}) : rng(1, 27);
      p = square_conv(groups * rng(1, 13), out, groups, rng(3, 14), rng(3, 14), rng(1, 5), rng(1, 2),
                      rng(0, 3) == 0 ? 2 : 1, rng(0, 2));
    }
    p.batch = rng(1, 2);
    if (p.out_h < 1 || p.out_w < 1) continue;
    fill(c, rng);
    fill_weights(c, rng);
    c.in_block = shape == 1 ? 1 : block_for(rng, {1, 4, 8, 16}, p.in_channels);
    c.out_block = block_for(rng, {16, 8, 4, 1}, p.out_channels);
    return c;
  }
}

// Runs c with the plan (threads 1 or 2) and returns the bytes that differ from the reference's.
int64_t plan_mismatches(const Case& c, const ConvPlan& plan, int threads, std::string* algorithm) {
  FastQConv2d conv(c.p, c.w.data(), c.q, c.x_zero_point, plan);
  *algorithm = conv.algorithm();
  return reference_mismatches(c, conv, threads);
}

TEST(QConvSelect, EveryCandidatePlanMatchesTheReferenceBitForBit) {
  const Isa isa = hardware_isa();
  if (isa == Isa::Ref) GTEST_SKIP() << "no int8 vector kernels on this CPU";
  Rng rng(20261201);
  std::set<std::string> covered;  // "kernel/isa form split" seen
  int plans = 0;
  // The algorithm settings the rules read (Options::conv_algorithms): all, without the indirect kernel,
  // "indirect" without "direct", without Winograd, and neither direct nor indirect named.
  const unsigned algorithm_sets[] = {kConvAll, kConvAll & ~kConvIndirect, kConvAll & ~kConvDirect,
                                     kConvAll & ~kConvWinograd, kConvWinograd | kConvStrassen};
  for (int i = 0; i < 160; ++i) {
    const Case c = random_case(rng);
    const int threads = i % 2 ? 2 : 1;
    ExecSettings s = settings_for(isa, threads);
    s.conv_algorithms = i % 3 ? kConvAll : algorithm_sets[(i / 3) % 5];
    const ConvKey key = key_of(c, s);
    const std::vector<ConvPlan> candidates = qconv_plan_candidates(key, s);
    const ConvPlan rules = rule_qconv_plan(key, s);
    if (rules.kernel != ConvKernel::Ref) {
      EXPECT_TRUE(qconv_plan_fits(rules, key, s)) << "the rules' plan " << describe_plan(rules) << " on "
                                                  << c.describe() << ", algorithms " << s.conv_algorithms;
      EXPECT_NE(std::find(candidates.begin(), candidates.end(), rules), candidates.end())
          << "the rules' plan " << describe_plan(rules) << " is not a candidate: " << c.describe();
    }
    for (const ConvPlan& plan : candidates) {
      ASSERT_TRUE(qconv_plan_fits(plan, key, s)) << describe_plan(plan);
      if (threads == 1) {
        EXPECT_EQ(plan.split, ConvSplit::Auto) << "one thread has nothing to split";
      }
      std::string algorithm;
      EXPECT_EQ(plan_mismatches(c, plan, threads, &algorithm), 0)
          << describe_plan(plan) << " (" << algorithm << ") on " << c.describe() << ", " << threads << " threads";
      // The key's weight class and the packer agree: the byte kernels split weight vectors (the w7r kernels)
      // exactly when the class says some need a rest.
      if (plan.int8_form == QConvForm::Bytes) {
        EXPECT_EQ(algorithm.find("-w7r-") != std::string::npos, key.w7_rest_tenths > 0)
            << algorithm << " with rest class " << key.w7_rest_tenths << ": " << c.describe();
      }
      covered.insert(std::string(conv_kernel_name(plan.kernel)) + "/" + isa_name(plan.isa) + " " +
                     qconv_form_name(plan.int8_form) + " " + conv_split_name(plan.split));
      ++plans;
    }
  }
  // Every family, form and split the CPU runs was among the candidates somewhere.
  std::vector<std::string> wanted;
#if defined(__aarch64__)
  const char* best = isa == Isa::Dotprod ? "dotprod" : "neon";
  for (const char* k : {"direct", "pointwise", "depthwise"})
    for (const char* split : {"auto", "serial", "rows"}) wanted.push_back(std::string(k) + "/" + best + " none " + split);
#else
  // (Byte kernels are candidates only where the key holds the weights' rest class: without VNNI.)
  const bool vnni = isa == Isa::Avx512 && cpu_features().avx512vnni;
  for (const char* k : {"direct", "pointwise"})
    for (const char* form : {"bytes", "words"})
      if (!vnni || std::string(form) == "words") wanted.push_back(std::string(k) + "/avx2 " + form + " auto");
  wanted.push_back("pointwise/avx2 wide auto");
  wanted.push_back(vnni ? "direct/avx2 words rows" : "direct/avx2 bytes rows");
  wanted.push_back("pointwise/avx2 words serial");
  for (const char* k : {"depthwise/avx2 none", "first-layer/avx2 none", "winograd/avx2 none", "indirect/avx2 none"})
    for (const char* split : {"auto", "serial"}) wanted.push_back(std::string(k) + " " + split);
  if (vnni)
    for (const char* k : {"direct", "pointwise", "depthwise", "indirect", "first-layer"})
      wanted.push_back(std::string(k) + "/avx512 none auto");
#endif
  for (const std::string& w : wanted) EXPECT_EQ(covered.count(w), 1u) << "no candidate " << w;
  // (AArch64 has fewer families and no forms: fewer plans per conv.)
#if defined(__aarch64__)
  EXPECT_GT(plans, 200);
#else
  EXPECT_GT(plans, 400);
#endif
}

TEST(QConvSelect, RestTenthsCountTheVectorsWithAPairPastTheBound) {
  Rng rng(7);
  for (int i = 0; i < 200; ++i) {
    Case c = random_case(rng);
    // (Grouped convs the direct kernels take have whole 8-lane blocks per group, which the count assumes.)
    if (conv_is_depthwise(c.p) || (c.p.groups > 1 && c.p.out_channels_per_group() % 8 != 0)) continue;
    const W7Vectors v = w7_vectors(c);
    const int64_t want = v.beyond == 0 ? 0 : (10 * v.beyond + v.all - 1) / v.all;
    EXPECT_EQ(qconv_w7_rest_tenths(c.p, c.w.data()), want) << c.describe() << ": " << v.beyond << " of " << v.all;
  }
  // Every pair of weights, at every position of a 64-channel filter (16 vectors, 32 pairs): the vectors'
  // lanes and the scalar tail. A pair passes the bound when its weights have one sign and sum past 128.
  {
    Case c;
    c.p = square_conv(64, 1, 1, 2, 2, 1, 1, 1, 0);
    c.w.assign(64, 0);
    int64_t past = 0;
    for (int a = -128; a <= 127; ++a)
      for (int b = -128; b <= 127; ++b) {
        const size_t k = static_cast<size_t>((a * 7 + b * 3 + 4096) % 32);
        c.w[2 * k] = static_cast<int8_t>(a), c.w[2 * k + 1] = static_cast<int8_t>(b);
        const bool beyond = (a > 0 && b > 0 && a + b > 128) || (a < 0 && b < 0 && a + b < -128);
        const int got = qconv_w7_rest_tenths(c.p, c.w.data());
        ASSERT_EQ(got, beyond ? 1 : 0) << a << " + " << b << " at pair " << k;  // 1 of 16 vectors
        past += beyond;
        c.w[2 * k] = c.w[2 * k + 1] = 0;
      }
    // Magnitudes m + n > 128: sum over m of (m - 1) for m <= 127 positive, of m for m <= 128 negative.
    EXPECT_EQ(past, 126 * 127 / 2 + 128 * 129 / 2);
  }
  // By hand: 16 -> 16, 1x1: 2 blocks x 4 steps = 8 vectors.
  Case c;
  c.p = square_conv(16, 16, 1, 4, 4, 1, 1, 1, 0);
  c.w.assign(16 * 16, 0);
  EXPECT_EQ(qconv_w7_rest_tenths(c.p, c.w.data()), 0);
  auto set_pair = [&](int oc, int ic, int a, int b) {
    c.w[static_cast<size_t>(oc * 16 + ic)] = static_cast<int8_t>(a);
    c.w[static_cast<size_t>(oc * 16 + ic + 1)] = static_cast<int8_t>(b);
  };
  set_pair(0, 0, 64, 64);     // 128: at the bound, fits
  set_pair(1, 2, 127, -128);  // opposite signs: fits
  set_pair(2, 1, 127, 127);   // channels 1 and 2 are not a pair
  EXPECT_EQ(qconv_w7_rest_tenths(c.p, c.w.data()), 0);
  set_pair(3, 4, 65, 64);  // block 0, step 1: one vector of 8 -> 1.25 tenths, rounded up
  EXPECT_EQ(qconv_w7_rest_tenths(c.p, c.w.data()), 2);
  set_pair(9, 6, -128, -1);  // block 1, step 1
  set_pair(15, 14, -100, -100);  // block 1, step 3
  EXPECT_EQ(qconv_w7_rest_tenths(c.p, c.w.data()), 4);  // 3 of 8
}

TEST(QConvSelect, TheRulesPickTheAvx2FormByTheRestClass) {
  if (runnable_isa(Isa::Avx2) != Isa::Avx2) GTEST_SKIP() << "AVX2 does not run here";
  const ExecSettings s = settings_for(Isa::Avx2, 1);
  auto form = [&](const Conv2dParams& p, int64_t out_block, int tenths) {
    ConvKey k;
    k.p = p;
    k.in_block = 8, k.out_block = out_block;
    k.isa = Isa::Avx2, k.threads = 1, k.int8 = true, k.w7_rest_tenths = tenths;
    return rule_qconv_plan(k, s).int8_form;
  };
  // A 3x3 stride-2 conv (not Winograd's): bytes up to half the vectors with a rest.
  const Conv2dParams direct = square_conv(32, 32, 1, 14, 14, 3, 2, 1, 1);
  // A pointwise conv too narrow to widen: up to 3/10; one wide enough (64 outputs, blocks of 8): up to 1/5.
  const Conv2dParams narrow = square_conv(32, 32, 1, 14, 14, 1, 1, 1, 0);
  const Conv2dParams wide = square_conv(32, 64, 1, 14, 14, 1, 1, 1, 0);
  for (int t = 0; t <= 10; ++t) {
    EXPECT_EQ(form(direct, 8, t), t <= 5 ? QConvForm::Bytes : QConvForm::Words) << t;
    EXPECT_EQ(form(narrow, 8, t), t <= 3 ? QConvForm::Bytes : QConvForm::Words) << t;
    EXPECT_EQ(form(wide, 8, t), t <= 2 ? QConvForm::Bytes : QConvForm::Wide) << t;
    EXPECT_EQ(form(wide, 4, t), t <= 3 ? QConvForm::Bytes : QConvForm::Words) << "blocks of 4 are not widened";
  }
}

TEST(QConvSelect, PlansNoKernelComputesAreRefused) {
  const Isa isa = hardware_isa();
  if (isa == Isa::Ref) GTEST_SKIP() << "no int8 vector kernels on this CPU";
  const ExecSettings s = settings_for(isa, 2);
  Rng rng(3);
  Case c;
  c.p = square_conv(16, 32, 1, 10, 10, 3, 2, 1, 1);  // 3x3 stride 2
  fill(c, rng);
  drop_residual(c);
  c.in_block = 8, c.out_block = 8;
  const ConvKey key = key_of(c, s);
  const ConvPlan rules = rule_qconv_plan(key, s);
  ASSERT_EQ(rules.kernel, ConvKernel::Direct);
  ASSERT_TRUE(qconv_plan_fits(rules, key, s));
  std::vector<std::pair<std::string, ConvPlan>> bad;
  auto with = [&](const char* what, auto change) {
    ConvPlan p = rules;
    change(p);
    bad.push_back({what, p});
  };
  with("pointwise kernel on a 3x3 conv", [](ConvPlan& p) { p.kernel = ConvKernel::Pointwise; });
  with("depthwise kernel on a dense conv", [](ConvPlan& p) { p.kernel = ConvKernel::Depthwise; });
  with("other blocks than the conv's", [](ConvPlan& p) { p.out_block = 16; });
  with("a register tile (float plans only)", [](ConvPlan& p) { p.oc_tile = 1; });
  with("a channel split (float plans only)", [](ConvPlan& p) { p.split = ConvSplit::Channels; });
  with("the reference", [](ConvPlan& p) { p = ConvPlan(); });
#if defined(__x86_64__)
  with("Winograd on stride 2", [](ConvPlan& p) { p.kernel = ConvKernel::Winograd, p.int8_form = QConvForm::None, p.winograd_tile = 2; });
  with("the wide form on a 3x3 conv", [](ConvPlan& p) { p.isa = Isa::Avx2, p.int8_form = QConvForm::Wide; });
  with("no form on AVX2's direct kernel", [](ConvPlan& p) { p.isa = Isa::Avx2, p.int8_form = QConvForm::None; });
  with("the first-layer kernel on a blocked input", [](ConvPlan& p) { p.kernel = ConvKernel::FirstLayer, p.int8_form = QConvForm::None; });
  if (!cpu_features().avx512vnni) with("VNNI without VNNI", [](ConvPlan& p) { p.isa = Isa::Avx512, p.int8_form = QConvForm::None; });
  {
    // Bytes where the key holds no rest class (the CPU has VNNI: the class was not computed).
    ConvKey no_class = key;
    no_class.w7_rest_tenths = -1;
    ConvPlan p = rules;
    p.isa = Isa::Avx2, p.int8_form = QConvForm::Bytes;
    EXPECT_FALSE(qconv_plan_fits(p, no_class, s));
  }
  {
    ExecSettings no_winograd = s;
    no_winograd.conv_algorithms &= ~kConvWinograd;
    Case w;
    w.p = square_conv(16, 16, 1, 12, 12, 3, 1, 1, 1);
    fill(w, rng);
    w.in_block = w.out_block = 8;
    const ConvKey wk = key_of(w, s);
    ConvPlan p = rule_qconv_plan(wk, settings_for(Isa::Avx2, 2));
    p.kernel = ConvKernel::Winograd, p.isa = Isa::Avx2, p.int8_form = QConvForm::None, p.winograd_tile = 2;
    p.split = ConvSplit::Auto;
    EXPECT_TRUE(qconv_plan_fits(p, wk, s));
    EXPECT_FALSE(qconv_plan_fits(p, wk, no_winograd)) << "Winograd when the settings leave it out";
    p.split = ConvSplit::Rows;
    EXPECT_FALSE(qconv_plan_fits(p, wk, s)) << "rows split on Winograd";
  }
#endif
  for (const auto& [what, plan] : bad) {
    EXPECT_FALSE(qconv_plan_fits(plan, key, s)) << what << ": " << describe_plan(plan);
    // Every one but the blocks (another layout, which the kernels compute) is refused by the kernel too.
    if (std::string(what) != "other blocks than the conv's") {
      EXPECT_FALSE(qconv_plan_computes(plan, c.p, c.with_residual)) << what;
      EXPECT_THROW(FastQConv2d(c.p, c.w.data(), c.q, c.x_zero_point, plan), Error) << what;
    }
  }
  {
    ConvPlan no_isa = rules;
    no_isa.isa = Isa::Ref;
    EXPECT_FALSE(qconv_plan_computes(no_isa, c.p, false)) << "a plan without an ISA";
  }
  // A float conv's key takes no int8 plan, and a float plan no int8 form.
  ConvKey float_key = key;
  float_key.int8 = false;
  EXPECT_FALSE(qconv_plan_fits(rules, float_key, s));
  const ConvPlan float_rules = rule_conv_plan(c.p, 8, 8, s);
  ASSERT_NE(float_rules.kernel, ConvKernel::Ref);
  ASSERT_TRUE(conv_plan_fits(float_rules, c.p, s));
  ConvPlan with_form = float_rules;
  with_form.int8_form = QConvForm::Bytes;
  EXPECT_FALSE(conv_plan_fits(with_form, c.p, s));
  // A first-layer plan with a fused residual: that kernel (x86-64 only) takes none.
#if defined(__x86_64__)
  Case f;
  f.p = square_conv(3, 16, 1, 12, 12, 3, 2, 1, 1);
  fill(f, rng);
  f.in_block = 1, f.out_block = 8;
  ConvKey fk = key_of(f, s);
  fk.residual = false;
  const ConvPlan first = rule_qconv_plan(fk, s);
  ASSERT_EQ(first.kernel, ConvKernel::FirstLayer);
  fk.residual = true;
  EXPECT_FALSE(qconv_plan_fits(first, fk, s));
  EXPECT_NE(rule_qconv_plan(fk, s).kernel, ConvKernel::FirstLayer);
#endif
}

TEST(QConvSelect, ATunedPlanIsUsedOnlyWhereItFits) {
  const Isa isa = hardware_isa();
  if (isa == Isa::Ref) GTEST_SKIP() << "no int8 vector kernels on this CPU";
  ExecSettings s = settings_for(isa, 2);
  Rng rng(11);
  Case c;
  c.p = square_conv(16, 32, 1, 10, 10, 3, 2, 1, 1);
  fill(c, rng);
  c.in_block = c.out_block = 8;
  const ConvKey key = key_of(c, s);
  const ConvPlan rules = rule_qconv_plan(key, s);
  ConvPlan other = rules;
  other.split = ConvSplit::Serial;
  ASSERT_TRUE(qconv_plan_fits(other, key, s));
  auto plans = std::make_shared<std::map<std::string, ConvPlan>>();
  (*plans)[format_conv_key(key)] = other;
  s.tuned_plans = plans;
  bool tuned = false;
  EXPECT_EQ(choose_qconv_plan(key, s, &tuned), other);
  EXPECT_TRUE(tuned);
  // The same entry under a key with another rest class (other weights) is not this conv's.
  ConvKey other_weights = key;
  other_weights.w7_rest_tenths = key.w7_rest_tenths == 3 ? 4 : 3;
  if (key.w7_rest_tenths >= 0) {
    EXPECT_EQ(choose_qconv_plan(other_weights, s, &tuned), rule_qconv_plan(other_weights, s));
    EXPECT_FALSE(tuned);
  }
  // An entry that does not fit is ignored.
  ConvPlan unfit = rules;
  unfit.kernel = ConvKernel::Pointwise;
  (*plans)[format_conv_key(key)] = unfit;
  EXPECT_EQ(choose_qconv_plan(key, s, &tuned), rules);
  EXPECT_FALSE(tuned);
}

}  // namespace
}  // namespace ninegrid
#endif
