// The fast convolution kernels (the templates of kernels/x86/, driven through ops/conv_fast.h) against
// their reference twin conv2d_blocked_ref, over randomised shapes, blocks, activations and residuals, once
// per instruction set of this architecture that the CPU has: the AVX2 and the AVX-512 kernels on x86-64,
// the NEON kernels on AArch64, each called directly (the ISA is passed explicitly, NINEGRID_ISA is not
// consulted). Also the reorder kernels against reorder_blocks_ref.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "conv_test_util.h"
#include "kernels/ref/conv2d_blocked_ref.h"
#include "kernels/ref/reorder_ref.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "ninegrid/tensor.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

using namespace conv_test;

// The direct family's driver with the rules' plan for an algorithm (ops/conv_select.h), as these tests
// name it: the ISA a cap, the kernel by shape unless forced.
bool fast_supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                   ConvAlgorithm algorithm = ConvAlgorithm::Auto) {
  return fast_conv_plan(p, in_block, out_block, isa, algorithm).kernel != ConvKernel::Ref;
}
FastConv2d fast_conv(const Conv2dParams& p, const float* w, const float* b, const Activation& act, Isa isa,
                     int64_t in_block, int64_t out_block, ConvAlgorithm algorithm = ConvAlgorithm::Auto) {
  return FastConv2d(p, w, b, act, fast_conv_plan(p, in_block, out_block, isa, algorithm));
}

// The input blocks the ISA's direct and pointwise kernels read: plain NCHW and NCHW8c/NCHW16c on x86-64,
// plain NCHW and NCHW4c with NEON.
std::vector<int64_t> in_blocks_of(Isa isa) {
  if (is_arm_isa(isa)) return {1, 4};
  return {1, 8, 16};
}

int64_t random_block(std::mt19937& rng, Isa isa, int64_t channels) {
  const std::vector<int64_t> blocks = in_blocks_of(isa);
  for (;;) {
    const int64_t b = blocks[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(blocks.size()) - 1))];
    if (channels % b == 0) return b;
  }
}

// Blocks "in->out" of the coverage counts below.
std::string blocks_name(int64_t in_block, int64_t out_block) {
  return std::to_string(in_block) + "->" + std::to_string(out_block);
}

// The plane of a random case: tiny, small or large (the large only when the conv stays cheap enough for
// the double-precision reference).
void random_plane(std::mt19937& rng, Conv2dParams& p) {
  const int64_t kind = uniform(rng, 0, 9);
  if (kind == 0) {
    p.in_h = p.in_w = 1;
  } else if (kind == 1) {
    p.in_h = 2, p.in_w = 3;
  } else if (kind == 2) {
    p.in_h = 57, p.in_w = 61;
  } else {
    p.in_h = uniform(rng, 1, 24);
    p.in_w = uniform(rng, 1, 40);
  }
}

void random_window(std::mt19937& rng, Conv2dParams& p) {
  p.kernel_h = pick(rng, {1, 3, 3, 5, 7});
  p.kernel_w = uniform(rng, 0, 2) == 0 ? pick(rng, {1, 3, 5, 7}) : p.kernel_h;
  p.stride_h = pick(rng, {1, 1, 2});
  p.stride_w = uniform(rng, 0, 3) == 0 ? pick(rng, {1, 2, 3}) : p.stride_h;
  p.dilation_h = pick(rng, {1, 1, 1, 2});
  p.dilation_w = pick(rng, {1, 1, 1, 2});
  p.pad_top = uniform(rng, 0, 3);
  p.pad_left = uniform(rng, 0, 3);
  p.pad_bottom = uniform(rng, 0, 3);
  p.pad_right = uniform(rng, 0, 3);
}

// One random case of the given algorithm for the kernels of `isa` (nullopt-like false when the draw is
// unusable: the kernel does not fit, or the reference would take too long).
bool random_case(std::mt19937& rng, Isa isa, ConvAlgorithm algorithm, Conv2dParams& p, int64_t& in_block,
                 int64_t& out_block) {
  const int lanes = lanes_of(isa);
  p = Conv2dParams{};
  p.batch = pick(rng, {1, 1, 1, 2});
  random_plane(rng, p);
  if (algorithm == ConvAlgorithm::FirstLayer) {
    // A plain image: few channels in, rows wide enough for whole 3-vector tiles inside and at the borders.
    p.in_channels = pick(rng, {1, 2, 3, 3, 4, 5});
    p.out_channels = pick(rng, {1, 3, 5, 8, 8, 16, 16, 17, 24, 32});
    p.in_h = uniform(rng, 1, 12);
    p.in_w = pick(rng, {1, 2, 7, 16, 17, 33, 50, 100, 130, 161});
    random_window(rng, p);
    p.stride_w = pick(rng, {1, 2});
    in_block = 1;
  } else if (algorithm == ConvAlgorithm::Depthwise) {
    // Whole vectors in the kernels' own block mostly; otherwise any channel count in any block, which the
    // kernel restages (zero-padding the last vector).
    if (uniform(rng, 0, 2) != 0) {
      p.groups = p.in_channels = p.out_channels = lanes * pick(rng, {1, 1, 2, 3, 4});
      in_block = lanes;
    } else {
      p.groups = p.in_channels = p.out_channels = pick(rng, {1, 3, 8, 16, 17, 24, 28, 48});
      in_block = random_block(rng, isa, p.in_channels);
    }
    random_window(rng, p);
  } else {
    if (uniform(rng, 0, 3) == 0) {  // grouped: whole vectors of output channels per group
      p.groups = pick(rng, {2, 3, 4});
      p.in_channels = p.groups * pick(rng, {1, 3, 8, 16});
      p.out_channels = p.groups * lanes * pick(rng, {1, 1, 2});
    } else {
      p.in_channels = pick(rng, {1, 3, 5, 8, 16, 17, 24, 32, 48, 64});
      p.out_channels = pick(rng, {1, 3, 5, 8, 16, 17, 24, 32, 48, 64});
    }
    if (algorithm == ConvAlgorithm::Pointwise) {
      p.kernel_h = p.kernel_w = 1;
      if (uniform(rng, 0, 2) == 0) {  // strided (ResNet's downsampling); a bottom/right pad it never reaches
        p.stride_h = pick(rng, {1, 2, 2, 3});
        p.stride_w = pick(rng, {2, 2, 3});
        p.pad_bottom = pick(rng, {0, 0, 1});
        p.pad_right = pick(rng, {0, 0, 1});
      }
    } else {
      random_window(rng, p);
    }
    in_block = random_block(rng, isa, p.in_channels);
  }
  if (!finish_shape(p)) return false;
  // Output: the ISA's block when the channels allow it, else (or sometimes anyway) plain NCHW.
  out_block = p.out_channels % lanes == 0 && uniform(rng, 0, 2) != 0 ? lanes : 1;
  // The AVX-512 kernels also write NCHW8c (two 8-channel blocks per vector; 8 | channels, not 16).
  if (lanes == 16 && out_block == 1 && p.out_channels % 8 == 0 && uniform(rng, 0, 1) == 0) out_block = 8;
  if (p.macs() > 6'000'000) return false;
  return fast_supports(p, in_block, out_block, isa, algorithm);
}

struct CaseStats {
  int runs = 0;
  std::map<std::string, int> by_kind;  // algorithm/isa/in->out blocks, to prove coverage
};

// Runs FastConv2d(p) with the given algorithm and ISA on random data and compares every output with the
// blocked reference.
void check_case(std::mt19937& rng, const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                ConvAlgorithm algorithm, int trial, CaseStats& stats, ThreadPool* pool = nullptr) {
  const size_t in_size = static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w);
  const size_t out_size = static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  const auto x = random_vector(rng, in_size);
  const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * p.kernel_h *
                                                        p.kernel_w));
  const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
  const auto residual = random_vector(rng, out_size);
  const auto slopes = random_vector(rng, static_cast<size_t>(p.out_channels));
  const auto acts = all_activations(slopes.data());
  Epilogue e;
  e.activation = acts[static_cast<size_t>(trial) % acts.size()];
  e.residual = trial % 2 == 0 ? residual.data() : nullptr;
  const float* b = trial % 3 != 2 ? bias.data() : nullptr;

  std::vector<float> want(out_size), got(out_size, -777.f);
  conv2d_blocked_ref(p, e, in_block, out_block, x.data(), w.data(), b, want.data());
  const FastConv2d conv = fast_conv(p, w.data(), b, e.activation, isa, in_block, out_block, algorithm);
  conv.run(x.data(), got.data(), e.residual, pool);

  const auto mag = magnitude_bound(p, in_block, out_block, x, w, b, e.residual);
  const std::string what = std::string(conv.algorithm()) + "/" + conv.isa() + ", " + describe(p) + ", blocks " +
                           std::to_string(in_block) + "->" + std::to_string(out_block) + ", " +
                           activation_name(e.activation.kind) + (e.residual ? " + residual" : "") +
                           (b ? "" : ", no bias");
  expect_within_bound(got, want, mag, what);
  stats.runs++;
  stats.by_kind[std::string(conv.algorithm()) + "/" + conv.isa() + " " + std::to_string(in_block) + "->" +
                std::to_string(out_block)]++;
}

void random_suite(Isa isa, ConvAlgorithm algorithm, int cases, uint32_t seed, CaseStats& stats) {
  std::mt19937 rng(seed);
  int trial = 0;
  for (int attempts = 0; stats.runs < cases && attempts < 100 * cases; ++attempts) {
    Conv2dParams p;
    int64_t in_block = 1, out_block = 1;
    if (!random_case(rng, isa, algorithm, p, in_block, out_block)) continue;
    check_case(rng, p, in_block, out_block, isa, algorithm, trial++, stats);
    if (::testing::Test::HasFatalFailure()) return;
  }
  ASSERT_EQ(stats.runs, cases) << "too few usable random shapes";
}

std::string coverage(const CaseStats& s) {
  std::string out;
  for (const auto& [kind, n] : s.by_kind) out += kind + ": " + std::to_string(n) + "\n";
  return out;
}

class ConvX86 : public ::testing::TestWithParam<Isa> {};

TEST_P(ConvX86, DirectMatchesBlockedReference) {
  SKIP_WITHOUT(GetParam());
  CaseStats stats;
  random_suite(GetParam(), ConvAlgorithm::Direct, 300, 11, stats);
  // Every input block and both output layouts were exercised.
  const int64_t lanes = lanes_of(GetParam());
  const std::string prefix = std::string("direct/") + isa_name(GetParam()) + " ";
  const std::vector<int64_t> in_blocks = in_blocks_of(GetParam());
  std::vector<std::string> kinds = {"1->1", blocks_name(in_blocks.back(), 1)};
  for (int64_t b : in_blocks) kinds.push_back(blocks_name(b, lanes));
  if (GetParam() == Isa::Avx512) kinds.push_back("16->8");  // NCHW8c written by 16-lane vectors
  for (const std::string& blocks : kinds) EXPECT_GT(stats.by_kind[prefix + blocks], 0) << blocks << "\n" << coverage(stats);
}

TEST_P(ConvX86, PointwiseMatchesBlockedReference) {
  SKIP_WITHOUT(GetParam());
  CaseStats stats;
  random_suite(GetParam(), ConvAlgorithm::Pointwise, 200, 12, stats);
  const int64_t lanes = lanes_of(GetParam());
  const std::string prefix = std::string("pointwise/") + isa_name(GetParam()) + " ";
  std::vector<std::string> kinds = {"1->1"};
  for (int64_t b : in_blocks_of(GetParam())) kinds.push_back(blocks_name(b, lanes));
  if (GetParam() == Isa::Avx512) kinds.push_back("16->8");
  for (const std::string& blocks : kinds) EXPECT_GT(stats.by_kind[prefix + blocks], 0) << blocks << "\n" << coverage(stats);
  // Strided 1x1 convs ran too, from the blocked and the plain input.
  const std::string strided = std::string("pointwise-strided/") + isa_name(GetParam()) + " ";
  EXPECT_GT(stats.by_kind[strided + "1->1"] + stats.by_kind[strided + blocks_name(1, lanes)], 0) << coverage(stats);
  int blocked_strided = 0;
  for (int64_t b : in_blocks_of(GetParam())) blocked_strided += b > 1 ? stats.by_kind[strided + blocks_name(b, lanes)] : 0;
  EXPECT_GT(blocked_strided, 0) << coverage(stats);
}

TEST_P(ConvX86, DepthwiseMatchesBlockedReference) {
  SKIP_WITHOUT(GetParam());
  CaseStats stats;
  random_suite(GetParam(), ConvAlgorithm::Depthwise, 400, 13, stats);
  const std::string lanes = std::to_string(lanes_of(GetParam()));
  const std::string suffix = std::string("/") + isa_name(GetParam()) + " " + lanes + "->";
  for (const std::string kind : {"depthwise3x3", "depthwise5x5", "depthwise"})
    for (const std::string& out : std::vector<std::string>{lanes, "1"})
      EXPECT_GT(stats.by_kind[kind + suffix + out], 0) << kind << suffix << out << "\n" << coverage(stats);
  if (GetParam() == Isa::Avx512) {
    EXPECT_GT(stats.by_kind["depthwise3x3" + suffix + "8"], 0) << coverage(stats);
  }
}

// The depthwise kernels' small planes, every output width from 1 to 17 and the 20- and 28-wide ones:
// the padded plane copy (planes up to 32 KB), the tile widths for each rest (8, 7, 7 + 7, 4, 2, 1), and
// the window copies of the larger planes' border tiles.
TEST_P(ConvX86, DepthwiseSmallPlanesEveryWidth) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int64_t lanes = lanes_of(isa);
  std::mt19937 rng(29);
  CaseStats stats;
  int trial = 0;
  std::vector<int64_t> widths;
  for (int64_t w = 1; w <= 17; ++w) widths.push_back(w);
  for (int64_t w : {20, 28, 40}) widths.push_back(w);
  for (int64_t kernel : {3, 5})
    for (int64_t stride : {1, 2})
      for (int64_t pad : {kernel / 2, int64_t{0}})  // unpadded: centre runs from column 0 and row 0
        for (int64_t width : widths) {
          Conv2dParams p;
          p.groups = p.in_channels = p.out_channels = 2 * lanes;
          p.in_h = width + trial % 2, p.in_w = width * stride + (pad == 0 ? kernel - stride : 0);
          p.kernel_h = p.kernel_w = kernel;
          p.stride_h = p.stride_w = stride;
          p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
          if (pad == 0) p.in_h += kernel - 1;
          ASSERT_TRUE(finish_shape(p));
          check_case(rng, p, lanes, lanes, isa, ConvAlgorithm::Depthwise, trial++ % 4, stats);
        }
  EXPECT_EQ(stats.runs, 8 * static_cast<int>(widths.size()));
}

// The clamp activations of the depthwise kernels keep the reference's edge cases on every tile (the
// centre runs' FMAX/FMIN on NEON, the border tiles' store): NaN stays NaN, infinities and the largest
// floats pass None, Relu keeps +inf, Relu6 and Clip saturate both ways. The special values come in
// through the bias (the weights are zero and the input finite, so each output is its channel's bias
// clamped), channel c taking value c % 5; 3x3 and 5x5, strides 1 and 2, on planes with centre tiles.
TEST_P(ConvX86, DepthwiseClampsKeepNanAndInfinities) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int64_t lanes = lanes_of(isa);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  constexpr int kValues = 5;
  const float values[kValues] = {nan, inf, -inf, 3e38f, -3e38f};
  struct Case {
    Activation activation;
    float want[kValues];
  };
  const Case cases[] = {{Activation::none(), {nan, inf, -inf, 3e38f, -3e38f}},
                        {Activation::relu(), {nan, inf, 0.f, 3e38f, 0.f}},
                        {Activation::relu6(), {nan, 6.f, 0.f, 6.f, 0.f}},
                        {Activation::clip(-0.5f, 0.25f), {nan, 0.25f, -0.5f, 0.25f, -0.5f}}};
  std::mt19937 rng(31);
  for (int64_t kernel : {3, 5})
    for (int64_t stride : {1, 2}) {
      Conv2dParams p;
      p.groups = p.in_channels = p.out_channels = 2 * lanes;
      p.in_h = 9 * stride, p.in_w = 21 * stride;
      p.kernel_h = p.kernel_w = kernel;
      p.stride_h = p.stride_w = stride;
      p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = kernel / 2;
      ASSERT_TRUE(finish_shape(p));
      const auto x = random_vector(rng, static_cast<size_t>(p.in_channels * p.in_h * p.in_w));
      const std::vector<float> w(static_cast<size_t>(p.out_channels * kernel * kernel), 0.f);
      std::vector<float> bias(static_cast<size_t>(p.out_channels));
      for (size_t c = 0; c < bias.size(); ++c) bias[c] = values[c % kValues];
      const int64_t plane = p.out_h * p.out_w;
      for (const Case& c : cases) {
        std::vector<float> y(static_cast<size_t>(p.out_channels * plane), -1.f);
        const FastConv2d conv =
            fast_conv(p, w.data(), bias.data(), c.activation, isa, lanes, lanes, ConvAlgorithm::Depthwise);
        conv.run(x.data(), y.data(), nullptr, nullptr);
        for (int64_t ch = 0; ch < p.out_channels; ++ch)
          for (int64_t i = 0; i < plane; ++i) {
            // NCHW[lanes]c: channel ch of pixel i.
            const float got = y[static_cast<size_t>(((ch / lanes) * plane + i) * lanes + ch % lanes)];
            const float want = c.want[ch % kValues];
            if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << conv.algorithm() << " channel " << ch << " pixel " << i;
            else ASSERT_EQ(got, want) << conv.algorithm() << " " << activation_name(c.activation.kind) << " channel " << ch
                                      << " pixel " << i << ", " << describe(p);
          }
      }
    }
}

// NEON has no first-layer kernel (its octet transposes need 8 lanes or more); the direct kernel reads its
// plain images (the 1->4 cases of DirectMatchesBlockedReference and TypicalLayers).
#define SKIP_WITHOUT_FIRST_LAYER(isa) \
  if (is_arm_isa(isa)) GTEST_SKIP() << "no first-layer kernel for " << isa_name(isa)

TEST_P(ConvX86, FirstLayerMatchesBlockedReference) {
  SKIP_WITHOUT(GetParam());
  SKIP_WITHOUT_FIRST_LAYER(GetParam());
  CaseStats stats;
  random_suite(GetParam(), ConvAlgorithm::FirstLayer, 300, 18, stats);
  const std::string prefix = std::string("first-layer/") + isa_name(GetParam()) + " ";
  std::vector<std::string> kinds = {"1->1", "1->8"};
  if (GetParam() == Isa::Avx512) kinds.push_back("1->16");
  for (const std::string& blocks : kinds) EXPECT_GT(stats.by_kind[prefix + blocks], 0) << blocks << "\n" << coverage(stats);
}

// The first layers of the benchmark models, each with its own input width so that the row ends leave
// every remainder: RetinaFace (3->8 3x3/s2), PP-OCR (3->16 3x3/s2), BlazeFace (3->24 5x5/s2, pads 1 and 2).
TEST_P(ConvX86, FirstLayerModelShapes) {
  SKIP_WITHOUT(GetParam());
  SKIP_WITHOUT_FIRST_LAYER(GetParam());
  const Isa isa = GetParam();
  std::mt19937 rng(19);
  CaseStats stats;
  int trial = 0;
  struct Shape { int64_t out_channels, kernel, pad_begin, pad_end; };
  for (const Shape s : {Shape{8, 3, 1, 1}, Shape{16, 3, 1, 1}, Shape{24, 5, 1, 2}}) {
    for (int64_t width : {66, 97, 130, 161}) {
      Conv2dParams p;
      p.in_channels = 3, p.out_channels = s.out_channels, p.in_h = 9, p.in_w = width;
      p.kernel_h = p.kernel_w = s.kernel, p.stride_h = p.stride_w = 2;
      p.pad_top = p.pad_left = s.pad_begin, p.pad_bottom = p.pad_right = s.pad_end;
      ASSERT_TRUE(finish_shape(p));
      for (int64_t out_block : {int64_t{1}, int64_t{8}, int64_t{16}}) {
        if (p.out_channels % out_block != 0 || !fast_supports(p, 1, out_block, isa, ConvAlgorithm::FirstLayer))
          continue;
        check_case(rng, p, 1, out_block, isa, ConvAlgorithm::FirstLayer, trial++, stats);
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GE(stats.runs, 24) << coverage(stats);
}

// The common layers, by hand: every centre/border combination of 3x3 stride 1 and 2 and the first layer
// (3 plain channels in, stride 2), on planes that leave tile remainders of every size.
TEST_P(ConvX86, TypicalLayers) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  std::mt19937 rng(14);
  CaseStats stats;
  int trial = 0;
  for (int64_t width : {1, 2, 5, 13, 14, 23, 28, 31}) {
    for (int64_t stride : {1, 2}) {
      Conv2dParams p;
      p.in_channels = 2 * lanes, p.out_channels = 2 * lanes;
      p.in_h = 7, p.in_w = width, p.kernel_h = p.kernel_w = 3, p.stride_h = p.stride_w = stride;
      p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
      ASSERT_TRUE(finish_shape(p));
      check_case(rng, p, lanes, lanes, isa, ConvAlgorithm::Auto, trial++, stats);
      Conv2dParams dw = p;
      dw.groups = dw.in_channels;
      check_case(rng, dw, lanes, lanes, isa, ConvAlgorithm::Auto, trial++, stats);
      Conv2dParams first = p;
      first.in_channels = 3;
      check_case(rng, first, 1, lanes, isa, ConvAlgorithm::Auto, trial++, stats);
      Conv2dParams pw = p;
      pw.kernel_h = pw.kernel_w = 1, pw.stride_h = pw.stride_w = 1;
      pw.pad_top = pw.pad_left = pw.pad_bottom = pw.pad_right = 0;
      ASSERT_TRUE(finish_shape(pw));
      check_case(rng, pw, lanes, lanes, isa, ConvAlgorithm::Auto, trial++, stats);
      if (HasFatalFailure()) return;
    }
  }
  for (const std::string kind : {"direct", "depthwise3x3", "pointwise"})
    EXPECT_GT(stats.by_kind[kind + "/" + isa_name(isa) + " " + std::to_string(lanes) + "->" + std::to_string(lanes)], 0)
        << coverage(stats);
}

// Splitting over threads computes each output exactly as one thread does (same order of operations).
TEST_P(ConvX86, ThreadedRunEqualsSingleThread) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  ThreadPool pool(3);
  std::mt19937 rng(15);
  for (ConvAlgorithm algorithm : {ConvAlgorithm::Direct, ConvAlgorithm::Pointwise, ConvAlgorithm::Depthwise,
                                  ConvAlgorithm::FirstLayer}) {
    if (algorithm == ConvAlgorithm::FirstLayer && is_arm_isa(isa)) continue;  // (no such kernel)
    Conv2dParams p;
    p.batch = 2;
    p.in_channels = p.out_channels = 5 * lanes;
    if (algorithm == ConvAlgorithm::Depthwise) p.groups = p.in_channels;
    p.in_h = 19, p.in_w = 23;
    if (algorithm != ConvAlgorithm::Pointwise) {
      p.kernel_h = p.kernel_w = 3;
      p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    }
    ASSERT_TRUE(finish_shape(p));
    const auto x = random_vector(rng, static_cast<size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
    const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels_per_group() * 9));
    const auto bias = random_vector(rng, static_cast<size_t>(p.out_channels));
    const int64_t in_block = algorithm == ConvAlgorithm::FirstLayer ? 1 : lanes;  // an image: plain NCHW
    const FastConv2d conv = fast_conv(p, w.data(), bias.data(), Activation::relu(), isa, in_block, lanes, algorithm);
    std::vector<float> one(static_cast<size_t>(p.batch * p.out_channels * p.out_h * p.out_w)), many(one.size());
    conv.run(x.data(), one.data(), nullptr, nullptr);
    conv.run(x.data(), many.data(), nullptr, &pool);
    EXPECT_EQ(one, many) << conv.algorithm();
  }
}

// The residual may be the output buffer itself (a fused Add whose other input dies at the conv).
TEST_P(ConvX86, ResidualMayBeTheOutput) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  std::mt19937 rng(16);
  for (int64_t out_block : {static_cast<int64_t>(lanes), int64_t{1}}) {
    Conv2dParams p;
    p.in_channels = lanes, p.out_channels = 2 * lanes, p.in_h = 6, p.in_w = 17;
    p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    ASSERT_TRUE(finish_shape(p));
    const auto x = random_vector(rng, static_cast<size_t>(p.in_channels * p.in_h * p.in_w));
    const auto w = random_vector(rng, static_cast<size_t>(p.out_channels * p.in_channels * 9));
    const auto residual = random_vector(rng, static_cast<size_t>(p.out_channels * p.out_h * p.out_w));
    Epilogue e;
    e.activation = Activation::relu();
    e.residual = residual.data();
    std::vector<float> want(residual.size());
    conv2d_blocked_ref(p, e, lanes, out_block, x.data(), w.data(), nullptr, want.data());
    std::vector<float> y = residual;
    fast_conv(p, w.data(), nullptr, e.activation, isa, lanes, out_block).run(x.data(), y.data(), y.data(), nullptr);
    expect_within_bound(y, want, magnitude_bound(p, lanes, out_block, x, w, nullptr, residual.data()),
                        "in-place residual, out block " + std::to_string(out_block));
  }
}

// Hand-checkable activations at the store: relu6 and sigmoid of known sums (1x1 conv of ones).
TEST_P(ConvX86, ActivationValuesAtTheStore) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  Conv2dParams p;
  p.in_channels = 1, p.out_channels = lanes, p.in_h = 1, p.in_w = 5, p.out_h = 1, p.out_w = 5;
  // x = -20, -2, 0, 2, 20 along the row; weight 1 for every output channel; no bias.
  const std::vector<float> x = {-20.f, -2.f, 0.f, 2.f, 20.f}, w(static_cast<size_t>(lanes), 1.f);
  std::vector<float> y(static_cast<size_t>(lanes) * 5);
  fast_conv(p, w.data(), nullptr, Activation::relu6(), isa, 1, 1).run(x.data(), y.data(), nullptr, nullptr);
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 5), (std::vector<float>{0.f, 0.f, 0.f, 2.f, 6.f}));
  fast_conv(p, w.data(), nullptr, Activation::sigmoid(), isa, 1, 1).run(x.data(), y.data(), nullptr, nullptr);
  // 1 / (1 + e^20) = 2.0611536e-9, 1 / (1 + e^2) = 0.11920292, 1 / (1 + e^-2) = 0.88079708.
  const float want[5] = {2.0611536e-9f, 0.11920292f, 0.5f, 0.88079708f, 1.f};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[static_cast<size_t>(i)], want[i], 1e-6f * want[i]) << i;
}

// The fused Sigmoid follows the reference at the edges of float: NaN stays NaN, +-inf and sums whose
// exponential overflows saturate to 1 and 0.
TEST_P(ConvX86, SigmoidAtTheStoreKeepsNanAndSaturates) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  Conv2dParams p;
  p.in_channels = 1, p.out_channels = lanes, p.in_h = 1, p.in_w = 5, p.out_h = 1, p.out_w = 5;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 100.f, -100.f};
  const std::vector<float> w(static_cast<size_t>(lanes), 1.f);
  std::vector<float> y(static_cast<size_t>(lanes) * 5);
  fast_conv(p, w.data(), nullptr, Activation::sigmoid(), isa, 1, 1).run(x.data(), y.data(), nullptr, nullptr);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 1.f);
  EXPECT_EQ(y[2], 0.f);
  EXPECT_EQ(y[3], 1.f);
  EXPECT_EQ(y[4], 0.f);  // e^100 overflows float: 1 / (1 + inf), as in the reference
}

// The clamp activations at the store of a blocked pointwise conv (its fast tile folds None, Relu and
// Clip into one min/max pair) keep the reference's edge cases: NaN stays NaN, infinities and the
// largest floats pass None, Relu keeps +inf, Relu6 saturates both ways.
// 16-lane pointwise convs writing NCHW8c with 8 mod 16 output channels run their last block as 8-lane
// FMAs (pointwise_tile_dense_half), alone or paired with the block before it; every clamp activation,
// with and without residual and bias, input blocks 8 and 16, planes that need every tile width, one
// thread and two (whose ranges split the blocks so that the half block may come alone).
TEST_P(ConvX86, PointwiseHalfBlockOutputs) {
  SKIP_WITHOUT(GetParam());
  if (GetParam() != Isa::Avx512) GTEST_SKIP() << "only the 16-lane kernels have half blocks";
  std::mt19937 rng(23);
  ThreadPool two(2);
  CaseStats stats;
  int cases = 0;
  for (int64_t out_channels : {24, 40, 56, 72})
    for (int64_t in_channels : {16, 24, 48})
      for (int64_t plane : {1, 5, 13, 50, 97}) {
        Conv2dParams p;
        p.batch = plane == 13 ? 2 : 1;
        p.in_channels = in_channels, p.out_channels = out_channels;
        p.in_h = plane % 2 == 1 && plane > 1 ? 3 : 1, p.in_w = plane;
        ASSERT_TRUE(finish_shape(p));
        const int64_t in_block = in_channels % 16 == 0 && cases % 2 == 0 ? 16 : 8;
        for (int trial = 0; trial < 4; ++trial)  // None + residual, Relu, Relu6 + residual without bias, Clip
          check_case(rng, p, in_block, 8, Isa::Avx512, ConvAlgorithm::Pointwise, trial, stats,
                     cases % 3 == 0 ? &two : nullptr);
        ++cases;
      }
  EXPECT_GT(stats.by_kind["pointwise/avx512 16->8"], 0) << coverage(stats);
  EXPECT_GT(stats.by_kind["pointwise/avx512 8->8"], 0) << coverage(stats);
}

TEST_P(ConvX86, BlockedPointwiseClampsKeepNanAndInfinities) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  constexpr int kPixels = 5;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float values[kPixels] = {nan, inf, -inf, 3e38f, -3e38f};
  Conv2dParams p;
  p.in_channels = lanes, p.out_channels = lanes, p.in_h = 1, p.in_w = kPixels, p.out_h = 1, p.out_w = kPixels;
  // Blocked input: channel 0 of each pixel holds the value, the others zero; every output channel takes
  // channel 0 with weight 1 (0 * inf would be NaN, so the other weights read only zeros).
  std::vector<float> x(static_cast<size_t>(lanes * kPixels), 0.f);
  for (int i = 0; i < kPixels; ++i) x[static_cast<size_t>(i * lanes)] = values[i];
  std::vector<float> w(static_cast<size_t>(lanes * lanes), 0.f);
  for (int o = 0; o < lanes; ++o) w[static_cast<size_t>(o * lanes)] = 1.f;
  struct Case {
    Activation activation;
    float want[kPixels];
  };
  const Case cases[] = {{Activation::none(), {nan, inf, -inf, 3e38f, -3e38f}},
                        {Activation::relu(), {nan, inf, 0.f, 3e38f, 0.f}},
                        {Activation::relu6(), {nan, 6.f, 0.f, 6.f, 0.f}}};
  for (const Case& c : cases) {
    std::vector<float> y(x.size(), -1.f);
    fast_conv(p, w.data(), nullptr, c.activation, isa, lanes, lanes).run(x.data(), y.data(), nullptr, nullptr);
    for (int i = 0; i < kPixels; ++i)
      for (int o = 0; o < lanes; ++o) {
        const float got = y[static_cast<size_t>(i * lanes + o)];
        if (std::isnan(c.want[i])) EXPECT_TRUE(std::isnan(got)) << "pixel " << i << " channel " << o;
        else EXPECT_EQ(got, c.want[i]) << "activation " << int(c.activation.kind) << " pixel " << i << " channel " << o;
      }
  }
}

// The ISA's NCHW <-> NCHW[lanes]c kernels.
struct Reorders {
  void (*to_blocked)(const float*, float*, int64_t, int64_t, int64_t, int64_t);
  void (*to_nchw)(const float*, float*, int64_t, int64_t, int64_t, int64_t);
};
Reorders reorders_of(Isa isa) {
#if defined(__aarch64__)
  return {neon::reorder_nchw_to_blocked, neon::reorder_blocked_to_nchw};
#else
  if (isa == Isa::Avx512) return {avx512::reorder_nchw_to_blocked, avx512::reorder_blocked_to_nchw};
  return {avx2::reorder_nchw_to_blocked, avx2::reorder_blocked_to_nchw};
#endif
}

TEST_P(ConvX86, ReordersMatchReference) {
  SKIP_WITHOUT(GetParam());
  const Isa isa = GetParam();
  const int lanes = lanes_of(isa);
  std::mt19937 rng(17);
  for (int64_t plane : {1, 7, 15, 16, 17, 40, 57 * 61}) {
    const int64_t channels = 3 * lanes;
    const auto nchw = random_vector(rng, static_cast<size_t>(channels * plane));
    std::vector<float> want(nchw.size()), got(nchw.size(), -1.f), back(nchw.size(), -1.f);
    reorder_blocks_ref(nchw.data(), want.data(), 1, channels, plane, 1, lanes);
    const Reorders r = reorders_of(isa);
    const int64_t split = isa == Isa::Avx512 ? 2 : 1;  // in two calls
    r.to_blocked(nchw.data(), got.data(), channels, plane, 0, split);
    r.to_blocked(nchw.data(), got.data(), channels, plane, split, 3);
    r.to_nchw(got.data(), back.data(), channels, plane, 0, 3);
    EXPECT_EQ(got, want) << "plane " << plane;
    EXPECT_EQ(back, nchw) << "plane " << plane;

    // A channel count that leaves the last block partial: its missing lanes are written as zeros.
    const int64_t partial = 2 * lanes + 3;
    std::vector<float> padded(static_cast<size_t>(3 * lanes * plane), -1.f);
    r.to_blocked(nchw.data(), padded.data(), partial, plane, 0, 3);
    for (int64_t c = 0; c < 3 * lanes; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        const float expected = c < partial ? nchw[static_cast<size_t>(c * plane + p)] : 0.f;
        ASSERT_EQ(padded[static_cast<size_t>(((c / lanes) * plane + p) * lanes + c % lanes)], expected)
            << "channel " << c << " of " << partial << ", pixel " << p << " of " << plane;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, ConvX86, ::testing::ValuesIn(vector_isas()),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

TEST(FastConv2d, ChoosesKernelsAndFallsBack) {
  Conv2dParams p;
  p.in_channels = p.out_channels = 32, p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  EXPECT_FALSE(fast_supports(p, 16, 16, Isa::Ref));
  EXPECT_FALSE(fast_supports(p, 16, 16, Isa::Avx2));  // a 16-channel output block needs AVX-512
  EXPECT_FALSE(fast_supports(p, 12, 16, Isa::Avx512));
  EXPECT_FALSE(fast_supports(p, 16, 32, Isa::Avx512));
  if (!cpu_has(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks avx2";
  EXPECT_TRUE(fast_supports(p, 16, 8, Isa::Avx2));
  EXPECT_TRUE(fast_supports(p, 1, 1, Isa::Avx2));

  const std::vector<float> w(32 * 32 * 25, 0.5f);
  {
    FastConv2d conv = fast_conv(p, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 8);
    EXPECT_STREQ(conv.algorithm(), "direct");
    EXPECT_STREQ(conv.isa(), "avx2");
  }
  Conv2dParams dw = p;
  dw.groups = 32;
  EXPECT_TRUE(fast_supports(dw, 1, 8, Isa::Avx2));  // plain input: restaged into 8-channel blocks
  {
    FastConv2d conv = fast_conv(dw, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 1);
    EXPECT_STREQ(conv.algorithm(), "depthwise3x3");
  }
  Conv2dParams grouped = p;
  grouped.groups = 8;  // 4 output channels per group: not a whole vector
  EXPECT_FALSE(fast_supports(grouped, 8, 8, Isa::Avx2));
  Conv2dParams pw = p;
  pw.kernel_h = pw.kernel_w = 1, pw.pad_top = pw.pad_left = pw.pad_bottom = pw.pad_right = 0;
  {
    FastConv2d conv = fast_conv(pw, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 8);
    EXPECT_STREQ(conv.algorithm(), "pointwise");
  }
  Conv2dParams dw5 = dw;
  dw5.kernel_h = dw5.kernel_w = 5, dw5.stride_h = dw5.stride_w = 2;
  ASSERT_TRUE(finish_shape(dw5));
  EXPECT_STREQ(fast_conv(dw5, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 8).algorithm(), "depthwise5x5");
  Conv2dParams dw_dilated = dw;
  dw_dilated.dilation_h = 2;
  ASSERT_TRUE(finish_shape(dw_dilated));
  EXPECT_STREQ(fast_conv(dw_dilated, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 8).algorithm(),
               "depthwise");
  EXPECT_THROW(fast_conv(grouped, w.data(), nullptr, Activation::none(), Isa::Avx2, 8, 8), Error);

  if (!cpu_has(Isa::Avx512)) return;
  // AVX-512 machine: 16-channel blocks use zmm kernels; so do 8-channel blocks from 16 output channels on
  // (each vector stored as two blocks), while 8 channels alone stay with the AVX2 kernels.
  EXPECT_STREQ(fast_conv(p, w.data(), nullptr, Activation::none(), Isa::Avx512, 16, 16).isa(), "avx512");
  EXPECT_STREQ(fast_conv(p, w.data(), nullptr, Activation::none(), Isa::Avx512, 16, 8).isa(), "avx512");
  Conv2dParams eight = pw;
  eight.out_channels = 8;
  EXPECT_STREQ(fast_conv(eight, w.data(), nullptr, Activation::none(), Isa::Avx512, 16, 8).isa(), "avx2");
  Conv2dParams head = pw;  // a detection head: 4 output channels, plain NCHW out
  head.out_channels = 4;
  EXPECT_STREQ(fast_conv(head, w.data(), nullptr, Activation::none(), Isa::Avx512, 16, 1).isa(), "avx2");
}

// On AArch64: 4-channel blocks, input blocks 1 and 4 (depthwise: any, restaged), no first-layer kernel.
TEST(FastConv2d, ChoosesNeonKernels) {
  if (!cpu_has(Isa::Neon)) GTEST_SKIP() << "this CPU lacks neon";
  Conv2dParams p;
  p.in_channels = p.out_channels = 32, p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  EXPECT_TRUE(fast_supports(p, 4, 4, Isa::Neon));
  EXPECT_TRUE(fast_supports(p, 1, 4, Isa::Neon));
  EXPECT_TRUE(fast_supports(p, 4, 1, Isa::Neon));
  EXPECT_FALSE(fast_supports(p, 8, 4, Isa::Neon));   // the x86 kernels' blocks
  EXPECT_FALSE(fast_supports(p, 4, 8, Isa::Neon));
  EXPECT_FALSE(fast_supports(p, 4, 4, Isa::Ref));
  EXPECT_FALSE(fast_supports(p, 4, 4, Isa::Avx2));  // another architecture's ISA
  Conv2dParams image = p;
  image.in_channels = 3, image.out_channels = 8;
  EXPECT_FALSE(fast_supports(image, 1, 4, Isa::Neon, ConvAlgorithm::FirstLayer));
  const std::vector<float> w(32 * 32 * 9, 0.5f);
  {
    FastConv2d conv = fast_conv(image, w.data(), nullptr, Activation::none(), Isa::Neon, 1, 4);
    EXPECT_STREQ(conv.algorithm(), "direct");  // a plain image: the direct kernel
    EXPECT_STREQ(conv.isa(), "neon");
  }
  Conv2dParams dw = p;
  dw.groups = 32;
  EXPECT_TRUE(fast_supports(dw, 8, 4, Isa::Neon));  // restaged into 4-channel blocks
  EXPECT_STREQ(fast_conv(dw, w.data(), nullptr, Activation::none(), Isa::Neon, 1, 4).algorithm(), "depthwise3x3");
  Conv2dParams grouped = p;
  grouped.groups = 16;  // 2 output channels per group: not a whole vector
  EXPECT_FALSE(fast_supports(grouped, 4, 4, Isa::Neon));
  grouped.groups = 8;  // 4 per group: whole vectors
  EXPECT_TRUE(fast_supports(grouped, 4, 4, Isa::Neon));
}

}  // namespace
}  // namespace ninegrid
