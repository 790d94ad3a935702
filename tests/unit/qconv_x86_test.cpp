// The x86 int8 direct and pointwise kernels (kernels/x86/qconv_arith_impl.h on conv_direct_impl.h's tiles)
// and the indirect kernel (qconv_indirect_impl.h on conv_indirect_impl.h's tiles: groups of any width,
// padded to 8-lane vectors; a plain image of up to 4 channels as packed rows), through ops/qconv_fast.h (which packs the weights, folds the zero point, stages unreadable inputs and splits
// the work), against the integer reference qconv2d_ref bit for bit: random shapes with odd channel counts,
// strides 1-3, padding, dilation, groups, input blocks 1/4/8/16, output blocks P/8/4/1, zero points 0, 255
// and between, saturating multipliers, fused residuals (added before the rounding, or a quantised addition
// after it: a fused ng.QAdd, either operand), one and two threads, for the VNNI and the AVX2
// kernels, and on AArch64 for the dotprod and neon kernels (kernels/arm/qconv_kernels_arm.h, the same
// templates), each skipped where the CPU lacks it (under qemu: QEMU_CPU=max has dotprod, cortex-a72 not).
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/conv_params.h"
#include "kernels/quantized.h"
#include "kernels/ref/qconv2d_ref.h"
#include "ops/conv_fast.h"
#include "ops/exec_settings.h"
#include "ops/qconv_fast.h"
#include "ops/qconv_select.h"
#include "qconv_case.h"

namespace ninegrid {
namespace {

using namespace qconv_test;

struct Int8Isa {
  const char* name;
  Isa isa;
  int lanes;
  bool runs;
  const char* prefix;  // of FastQConv2d::algorithm()
};

std::vector<Int8Isa> int8_isas() {
  const CpuFeatures& f = cpu_features();
#if defined(__aarch64__)
  return {{"dotprod", Isa::Dotprod, 4, f.asimddp, "int8-dotprod-"}, {"neon", Isa::Neon, 4, f.asimd, "int8-neon-"}};
#else
  return {{"vnni", Isa::Avx512, 16, f.avx512f && f.avx512bw && f.avx512vnni, "int8-vnni-"},
          {"avx2", Isa::Avx2, 8, f.avx2 && f.fma, "int8-avx2-"}};
#endif
}

// The AVX2 entry of int8_isas() when this CPU runs it (the vpmaddubsw kernels' tests ask for it alone).
std::optional<Int8Isa> runnable_avx2() {
  for (const Int8Isa& isa : int8_isas())
    if (std::string(isa.name) == "avx2" && isa.runs) return isa;
  return std::nullopt;
}

// Depthwise channel counts and blocks: those the layout planner gives int8 tensors, and others the op stages
// (AArch64's kernels read NCHW4c).
#if defined(__aarch64__)
const std::vector<int64_t> kDepthwiseChannels = {3, 8, 12, 16, 20, 32, 40};
const std::vector<int64_t> kDepthwiseBlocks = {1, 4, 4, 8, 16};
#else
const std::vector<int64_t> kDepthwiseChannels = {3, 8, 16, 24, 32, 40};
const std::vector<int64_t> kDepthwiseBlocks = {1, 8, 16};
#endif

// A random shape for the AVX2 vpmaddubsw tests: groups whose output channels fill 8-lane vectors (else any
// count up to 27), icpg from `icpgs`, pointwise a third of the time (1x1, stride 1, unpadded), otherwise
// kernels 1-5, strides 1-3, dilation 2 a third of the time, pads 0-2; every input block and the 8-lane
// output blocks. False when the output would be empty.
bool random_w7_shape(Rng& rng, const std::vector<int64_t>& icpgs, Case* c) {
  Conv2dParams& p = c->p;
  p.batch = rng(1, 2);
  p.groups = rng(0, 4) == 0 ? rng(2, 3) : 1;
  p.out_channels = p.groups > 1 ? p.groups * 8 * rng(1, 2) : rng(1, 27);
  p.in_channels = rng.pick(icpgs) * p.groups;
  const bool pointwise = rng(0, 2) == 0;
  p.kernel_h = pointwise ? 1 : rng(1, 5), p.kernel_w = pointwise ? 1 : rng(1, 5);
  p.stride_h = pointwise ? 1 : rng(1, 3), p.stride_w = pointwise ? 1 : rng(1, 3);
  p.dilation_h = !pointwise && rng(0, 3) == 0 ? 2 : 1, p.dilation_w = !pointwise && rng(0, 3) == 0 ? 2 : 1;
  const int64_t pad = pointwise ? 0 : 2;
  p.pad_top = rng(0, pad), p.pad_left = rng(0, pad), p.pad_bottom = rng(0, pad), p.pad_right = rng(0, pad);
  p.in_h = rng(1, 14), p.in_w = rng(1, 24);
  p.out_h = out_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
  p.out_w = out_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, p.pad_right);
  if (p.out_h < 1 || p.out_w < 1) return false;
  c->in_block = block_for(rng, {1, 4, 8, 16}, p.in_channels);
  c->out_block = block_for(rng, {8, 4, 1}, p.out_channels);
  return true;
}

// The kernel name's last part for a direct conv on the AVX2 vpmaddubsw kernels: a 1x1, stride 1, unpadded
// conv whose output is its input's size runs the pointwise kernel.
const char* direct_or_pointwise(const Conv2dParams& p) {
  const bool is_1x1 = p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                      p.pad_top == 0 && p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
  return is_1x1 ? "pointwise" : "direct";
}

// Weights for the AVX2 kernels with rest vectors (int8-avx2-w7r-*), after fill(): 7-bit-sized, with pairs
// (2j, 2j + 1) beyond vpmaddubsw's bound at the extremes (127 + 127, -128 + -128, 127 + 2, -128 + -1, 65 + 64
// just past the edge) placed at random, about one weight vector in eight and at least one; inputs of 255 a
// third of the time, so a pair left whole would saturate. Needs two input channels per group.
void fill_few_pairs_beyond_w7(Case& c, Rng& rng) {
  const Conv2dParams& p = c.p;
  const int64_t icpg = p.in_channels_per_group(), taps = p.kernel_h * p.kernel_w;
  for (int8_t& v : c.w) v = static_cast<int8_t>(rng(-64, 64));
  const int64_t extremes = 1 + static_cast<int64_t>(c.w.size()) / 256;
  for (int64_t k = 0; k < extremes; ++k) {
    const int64_t oc = rng(0, p.out_channels - 1), ic = 2 * rng(0, icpg / 2 - 1), t = rng(0, taps - 1);
    static const int64_t kPairs[][2] = {{127, 127}, {-128, -128}, {127, 2}, {-128, -1}, {65, 64}, {-64, -65}};
    const int64_t* pair = kPairs[rng(0, 5)];
    c.w[static_cast<size_t>((oc * icpg + ic) * taps + t)] = static_cast<int8_t>(pair[0]);
    c.w[static_cast<size_t>((oc * icpg + ic + 1) * taps + t)] = static_cast<int8_t>(pair[1]);
  }
  for (uint8_t& v : c.x) v = rng(0, 2) == 0 ? uint8_t{255} : v;
}

// Whether the AVX2 vpmaddwd kernels would run c, a 1x1 conv of the pointwise shapes, on widened inputs
// (int8-avx2-wide-pointwise, and -pointwise-strided on the gathered pixels of a strided conv under Auto):
// one group, NCHW8c output, at least 64 output channels; a stride-1 conv with any input (a staged one is
// widened from its staged copy), a strided one when its input is read unstaged (blocks of 4, 8 or 16,
// whole channel pairs), so that its pixels are gathered.
bool takes_wide_pointwise(const Case& c) {
  const bool pairs_readable = (c.in_block == 4 || c.in_block == 8 || c.in_block == 16) &&
                              c.p.in_channels_per_group() % 2 == 0;
  return c.p.groups == 1 && c.out_block == 8 && c.p.out_channels >= 64 &&
         (conv_is_pointwise(c.p) || (conv_is_strided_pointwise(c.p) && pairs_readable));
}

// Whether AVX2 takes the kernels with rest vectors for c's weights (some pair beyond the bound): for a 1x1
// conv of the pointwise shapes (ops/conv_fast.h's shape classes: the pointwise kernel, strided or not) where
// at most 1/5 of the weight vectors have such a pair if vpmaddwd would run on widened inputs, 3/10 if not;
// at most half for the other convs.
bool takes_rest_vectors(const Case& c) {
  const W7Vectors v = w7_vectors(c);
  const bool one_by_one = conv_is_pointwise(c.p) || conv_is_strided_pointwise(c.p);
  if (!one_by_one) return 2 * v.beyond <= v.all;
  return takes_wide_pointwise(c) ? 5 * v.beyond <= v.all : 10 * v.beyond <= 3 * v.all;
}

// The prefix of the direct and pointwise kernels' names that FastQConv2d gives c under `isa`: AVX2 takes
// the vpmaddubsw kernels where c's weights allow them, those with rest vectors where takes_rest_vectors,
// else the vpmaddwd ones (on widened inputs where takes_wide_pointwise, except for a strided conv under a
// forced Direct, which runs the direct kernel).
std::string direct_prefix(const Int8Isa& isa, const Case& c, QConvKernel kernel = QConvKernel::Auto) {
  if (std::string(isa.name) != "avx2") return isa.prefix;
  if (pairs_fit_w7(c)) return "int8-avx2-w7-";
  if (takes_rest_vectors(c)) return "int8-avx2-w7r-";
  const bool gathered = kernel == QConvKernel::Auto || kernel == QConvKernel::NoIndirect;
  const bool wide = takes_wide_pointwise(c) && (conv_is_pointwise(c.p) || gathered);
  return wide ? "int8-avx2-wide-" : isa.prefix;
}

// Runs c on the fast kernels of `isa` (threads 1 or 2; `kernel`: the family, as FastQConv2d takes it) and on
// the reference; returns the mismatches.
int64_t mismatches(const Case& c, const Int8Isa& isa, int threads, std::string* algorithm,
                   QConvKernel kernel = QConvKernel::Auto) {
  FastQConv2d conv(c.p, c.w.data(), c.q, c.x_zero_point, isa.isa, c.in_block, c.out_block, kernel);
  *algorithm = conv.algorithm();
  return reference_mismatches(c, conv, threads);
}

// Random direct convolutions (any kernel, stride, dilation, padding; groups whose output channels fill
// vectors), every input and output block; the direct kernel forced (Auto gives some to the indirect one).
TEST(QConvX86, DirectMatchesReferenceBitForBit) {
  Rng rng(20261128);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int P = isa.lanes;
    for (int iter = 0; iter < 160; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.groups = rng(0, 4) == 0 ? rng(2, 3) : 1;
      // Grouped: whole vectors of output channels per group; otherwise any count (odd ones too).
      p.out_channels = p.groups > 1 ? p.groups * P * rng(1, 2) : rng(1, 3 * P + 3);
      const int64_t icpg = rng.pick<int64_t>({1, 2, 3, 4, 5, 7, 8, 12, 16, 19, 32, 33});
      p.in_channels = icpg * p.groups;
      p.kernel_h = rng(1, 5), p.kernel_w = rng(1, 5);
      p.stride_h = rng(1, 3), p.stride_w = rng(1, 3);
      p.dilation_h = rng(0, 3) == 0 ? 2 : 1, p.dilation_w = rng(0, 3) == 0 ? 2 : 1;
      p.pad_top = rng(0, 2), p.pad_left = rng(0, 2), p.pad_bottom = rng(0, 2), p.pad_right = rng(0, 2);
      p.in_h = rng(1, 14), p.in_w = rng(1, 20);
      p.out_h = out_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
      p.out_w = out_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, p.pad_right);
      if (p.out_h < 1 || p.out_w < 1) continue;
      c.in_block = block_for(rng, {1, 4, 8, 16}, p.in_channels);
      c.out_block = block_for(rng, {P, 8, 4, 1}, p.out_channels);
      fill(c, rng);
      std::string algorithm;
      const int threads = rng(0, 3) == 0 ? 2 : 1;
      EXPECT_EQ(mismatches(c, isa, threads, &algorithm, QConvKernel::Direct), 0) << isa.name << " " << c.describe();
      const std::string prefix = direct_prefix(isa, c, QConvKernel::Direct);
      EXPECT_TRUE(algorithm == prefix + "direct" || algorithm == prefix + "pointwise") << algorithm;
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The AVX2 vpmaddwd pointwise kernel on widened inputs (int8-avx2-wide-pointwise): 8-bit weights at full range
// (most weight vectors beyond vpmaddubsw's bound, so neither w7 kernel runs), 64 or more output channels in
// NCHW8c, input blocks of 4, 8 and 16 read as they are, and inputs the op stages first (blocks of 1, odd
// channel counts); a third of the cases strided 1x1 convs, whose pixels the op gathers first
// (-pointwise-strided). Planes from one pixel to past several chunks (a chunk holds 96 KB of widened input:
// 48 pixels at 1024 channels, its minimum of 16 at 4096), and as fill() makes them: residuals, zero points
// and weights at the extremes; one and two threads, both batch sizes. The whole name is asserted, so every
// case takes this kernel.
TEST(QConvX86, AvxWidePointwiseMatchesReferenceBitForBit) {
  const std::optional<Int8Isa> avx2 = runnable_avx2();
  if (!avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  Rng rng(11282);
  int tested = 0, strided = 0, staged = 0;
  for (int iter = 0; iter < 60; ++iter) {
    Case c;
    Conv2dParams& p = c.p;
    p.batch = rng(1, 2);
    const bool stage = iter % 4 == 3;
    p.in_channels = stage ? rng.pick<int64_t>({13, 67, 200})
                          : rng.pick<int64_t>({4, 8, 16, 24, 48, 64, 160, 512, 1024, 4096});
    p.out_channels = rng(0, 2) == 0 ? 64 : 8 * rng(8, 25);  // whole NCHW8c blocks
    p.in_h = rng(1, 14), p.in_w = rng(1, 24);
    if (p.in_channels >= 512 && rng(0, 1) == 0) p.in_h = 12, p.in_w = 13;  // 156 pixels: chunks of 48, 96
    if (p.in_channels == 4096) p.out_channels = 64, p.in_h = rng(1, 4), p.in_w = rng(5, 12);  // chunks of 16
    const bool stride = iter % 3 == 1 && !stage;
    if (stride) {
      p.stride_h = rng(1, 2), p.stride_w = 2;
      p.in_h = rng(2, 20), p.in_w = rng(2, 30);
    }
    p.out_h = out_size(p.in_h, 1, p.stride_h, 1, 0, 0), p.out_w = out_size(p.in_w, 1, p.stride_w, 1, 0, 0);
    if (stage) {
      c.in_block = 1;
    } else {
      do {
        c.in_block = rng.pick<int64_t>({16, 8, 4});
      } while (p.in_channels % c.in_block != 0);
    }
    c.out_block = 8;
    fill(c, rng);
    ASSERT_TRUE(takes_wide_pointwise(c)) << c.describe();
    if (takes_rest_vectors(c) || pairs_fit_w7(c)) continue;  // full-range weights: rare
    std::string algorithm;
    const int threads = rng(0, 1) == 0 ? 2 : 1;
    EXPECT_EQ(mismatches(c, *avx2, threads, &algorithm), 0) << c.describe() << " threads " << threads;
    EXPECT_EQ(algorithm, stride ? "int8-avx2-wide-pointwise-strided" : "int8-avx2-wide-pointwise") << c.describe();
    ++tested, strided += stride, staged += stage;
  }
  EXPECT_GE(tested, 50);
  EXPECT_GE(strided, 12);
  EXPECT_GE(staged, 10);
}

// 1x1 stride 1 unpadded convolutions (the pointwise kernel: the plane as one long row, tiles across row
// ends), with planes long enough for every tile width and channel counts from 1 to past the L1 chunking.
TEST(QConvX86, PointwiseMatchesReferenceBitForBit) {
  Rng rng(11280);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int P = isa.lanes;
    for (int iter = 0; iter < 80; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.groups = rng(0, 5) == 0 ? 2 : 1;
      p.out_channels = p.groups > 1 ? 2 * P * rng(1, 2) : rng(1, 4 * P + 1);
      p.in_channels = p.groups * rng.pick<int64_t>({1, 3, 4, 8, 13, 16, 24, 64, 67, 160});
      p.in_h = rng(1, 12), p.in_w = rng(1, 30);
      p.out_h = p.in_h, p.out_w = p.in_w;
      c.in_block = block_for(rng, {1, 4, 8, 16}, p.in_channels);
      c.out_block = block_for(rng, {P, 8, 4, 1}, p.out_channels);
      fill(c, rng);
      std::string algorithm;
      const int threads = rng(0, 3) == 0 ? 2 : 1;
      EXPECT_EQ(mismatches(c, isa, threads, &algorithm, QConvKernel::Direct), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, direct_prefix(isa, c, QConvKernel::Direct) + "pointwise");
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// 1x1 convs with a stride (ResNet's downsampling shortcuts) under Auto: the op gathers the strided pixels into
// an output-sized plane and runs the pointwise kernel there. Readable inputs (whole blocks the kernels
// read, channels per group a multiple of 16, one or two groups, output planes up to the natural size) must
// take that path, by name; any other shape (staged inputs, plain outputs, bottom and right padding past the
// last pixel read) whatever path the op picks. All bit for bit.
TEST(QConvX86, StridedPointwiseMatchesReferenceBitForBit) {
  Rng rng(11301);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int P = isa.lanes;
#if defined(__aarch64__)
    const std::vector<int64_t> readable_blocks = {4};
#else
    const std::vector<int64_t> readable_blocks = {4, 8, 16};
#endif
    for (int iter = 0; iter < 80; ++iter) {
      const bool readable = iter % 2 == 0;
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.kernel_h = p.kernel_w = 1;
      do {
        p.stride_h = rng(1, 3), p.stride_w = rng(1, 3);
      } while (p.stride_h == 1 && p.stride_w == 1);
      p.in_h = rng(1, 15), p.in_w = rng(1, 31);
      if (!readable) p.pad_bottom = rng(0, 2), p.pad_right = rng(0, 2);
      p.out_h = out_size(p.in_h, 1, p.stride_h, 1, 0, p.pad_bottom);
      p.out_w = out_size(p.in_w, 1, p.stride_w, 1, 0, p.pad_right);
      if (readable && rng(0, 3) == 0) {
        // Fewer outputs than the stride allows: the last input rows and columns are never read.
        p.out_h = rng(1, p.out_h), p.out_w = rng(1, p.out_w);
      }
      if (readable) {
        p.groups = rng(0, 3) == 0 ? 2 : 1;
        p.in_channels = p.groups * 16 * rng(1, 3);
        p.out_channels = p.groups * P * rng(1, 2);
        c.in_block = rng.pick(readable_blocks);
        c.out_block = rng(0, 1) ? P : 4;
      } else {
        p.in_channels = rng.pick<int64_t>({3, 5, 8, 12, 16, 33});
        p.out_channels = rng(1, 2 * P + 3);
        c.in_block = block_for(rng, {1, 4, 8, 16}, p.in_channels);
        c.out_block = block_for(rng, {P, 8, 4, 1}, p.out_channels);
      }
      fill(c, rng);
      // Every other readable case with few weight pairs beyond vpmaddubsw's bound: on AVX2 the kernel with
      // rest vectors over the gathered pixels (int8-avx2-w7r-pointwise-strided).
      if (readable && iter % 4 == 0) fill_few_pairs_beyond_w7(c, rng);
      std::string algorithm;
      const int threads = rng(0, 2) == 0 ? 2 : 1;
      EXPECT_EQ(mismatches(c, isa, threads, &algorithm), 0) << isa.name << " " << c.describe() << " " << algorithm;
      if (readable) {
        EXPECT_EQ(algorithm, direct_prefix(isa, c) + "pointwise-strided") << c.describe();
      }
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 kernel runs on this CPU";
}

// The direct and pointwise kernels requantise an output block through the packed store when all its lanes'
// multipliers lie within +-1/4 (and a residual's within +-2^20, no fused addition): multipliers at the bound,
// one lane just past it (the block takes the other store), sums large enough that the packed values saturate,
// plain residuals with multipliers at their bound; outputs in the vector's block. Bit for bit.
TEST(QConvX86, PackedStoreBoundMatchesReference) {
  Rng rng(11281);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int P = isa.lanes;
    for (int iter = 0; iter < 40; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = 1;
      p.out_channels = P * rng(1, 3);
      p.in_channels = rng.pick<int64_t>({4, 16, 32, 64});
      const bool pointwise = rng(0, 1) == 0;
      p.kernel_h = p.kernel_w = pointwise ? 1 : 3;
      p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pointwise ? 0 : 1;
      p.in_h = rng(1, 9), p.in_w = rng(1, 30);
      p.out_h = p.in_h, p.out_w = p.in_w;
      c.in_block = block_for(rng, {4, 8, 16}, p.in_channels);
      c.out_block = P;
      fill(c, rng);
      const float past = std::nextafter(0.25f, 1.f);
      for (float& m : c.multiplier) {
        const int64_t kind = rng(0, 3);
        m = kind == 0 ? 0.25f : kind == 1 ? -0.25f : std::ldexp(static_cast<float>(rng(1, 1 << 10)), -12);
      }
      if (rng(0, 1) == 0) c.multiplier[static_cast<size_t>(rng(0, p.out_channels - 1))] = past;
      if (c.with_residual && !c.q.residual_add)
        c.q.residual_multiplier = rng.pick<float>({1048576.f, -1048576.f, 0.5f, std::nextafter(1048576.f, 2e6f)});
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, 1, &algorithm, QConvKernel::Direct), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, direct_prefix(isa, c, QConvKernel::Direct) + (pointwise ? "pointwise" : "direct"));
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The AVX2 vpmaddubsw kernels (int8-avx2-w7-direct and -pointwise) on weights within their bound: half the
// cases 7-bit weights ([-64, 64], the extremes a third of the time: pairs 64 + 64 and -64 + -64 beside
// inputs of 255 sum to +-32640, the edge of vpmaddubsw's int16), half full-range weights drawn so that only
// the pairs (2j, 2j + 1) fit (b in [-128, 128 - a] after a >= 0, in [-128 - a, 127] after a < 0), which a
// kernel pairing the channels otherwise would saturate on. Random kernels, strides, dilations, padding,
// groups, odd channel counts (staged to whole steps of 4), every input and output block, one and two
// threads, bit for bit. Where the CPU has VNNI the op prefers it; this asks for AVX2.
TEST(QConvX86, AvxW7MatchesReferenceBitForBit) {
  const std::optional<Int8Isa> avx2 = runnable_avx2();
  if (!avx2) GTEST_SKIP() << "no AVX2";
  Rng rng(7077);
  for (int iter = 0; iter < 120; ++iter) {
    Case c;
    const Conv2dParams& p = c.p;
    if (!random_w7_shape(rng, {1, 2, 3, 4, 5, 6, 8, 12, 16, 19, 32, 33, 64}, &c)) continue;
    const int64_t icpg = p.in_channels_per_group();
    fill(c, rng);
    if (iter % 2 == 0) {
      for (int8_t& v : c.w) v = static_cast<int8_t>(rng(0, 2) == 0 ? rng.pick<int64_t>({-64, 64}) : rng(-64, 64));
    } else {
      const int64_t taps = p.kernel_h * p.kernel_w;
      for (int64_t oc = 0; oc < p.out_channels; ++oc)
        for (int64_t ic = 0; ic < icpg; ++ic)
          for (int64_t t = 0; t < taps; ++t) {
            int8_t& v = c.w[static_cast<size_t>((oc * icpg + ic) * taps + t)];
            if (ic % 2 == 0) {
              v = static_cast<int8_t>(rng(0, 3) == 0 ? rng.pick<int64_t>({-128, 127}) : rng(-128, 127));
            } else {
              const int64_t a = c.w[static_cast<size_t>((oc * icpg + ic - 1) * taps + t)];
              v = static_cast<int8_t>(a >= 0 ? rng(-128, std::min<int64_t>(127, 128 - a)) : rng(-128 - a, 127));
            }
          }
    }
    ASSERT_TRUE(pairs_fit_w7(c));
    std::string algorithm;
    EXPECT_EQ(mismatches(c, *avx2, rng(0, 3) == 0 ? 2 : 1, &algorithm, QConvKernel::Direct), 0) << c.describe();
    EXPECT_EQ(algorithm, std::string("int8-avx2-w7-") + direct_or_pointwise(p)) << c.describe();
  }
}

// The vpmaddubsw kernels with rest vectors (int8-avx2-w7r-direct and -pointwise) on 8-bit weights of which
// a few pairs lie beyond vpmaddubsw's bound (fill_few_pairs_beyond_w7). Random kernels, strides, dilations,
// padding, groups, odd channel counts, every input and output block, one and two threads, bit for bit.
TEST(QConvX86, AvxW7RestMatchesReferenceBitForBit) {
  const std::optional<Int8Isa> avx2 = runnable_avx2();
  if (!avx2) GTEST_SKIP() << "no AVX2";
  Rng rng(7078);
  int tested = 0;
  for (int iter = 0; iter < 120; ++iter) {
    Case c;
    if (!random_w7_shape(rng, {2, 3, 4, 5, 6, 8, 12, 16, 19, 32, 33, 64}, &c)) continue;
    fill(c, rng);
    fill_few_pairs_beyond_w7(c, rng);
    const W7Vectors v = w7_vectors(c);
    ASSERT_GT(v.beyond, 0) << c.describe();
    if (!takes_rest_vectors(c)) continue;  // too many for rest vectors (small layers): the vpmaddwd kernels
    std::string algorithm;
    EXPECT_EQ(mismatches(c, *avx2, rng(0, 3) == 0 ? 2 : 1, &algorithm, QConvKernel::Direct), 0) << c.describe();
    EXPECT_EQ(algorithm, std::string("int8-avx2-w7r-") + direct_or_pointwise(c.p)) << c.describe();
    ++tested;
  }
  EXPECT_GE(tested, 60);
}

// The bound's edges, every input 255: weight pairs of 64 + 64 and -64 + -64 (pair sums +-32640) and of
// opposite signs at full range (127 and -128: |sum| <= 255 x 128) run the vpmaddubsw kernel; one pair of
// 65 + 64 or -65 + -64 (255 x 129 = 32895 > 32767) sends the conv to the vpmaddubsw kernel with rest vectors,
// and such a pair in every weight vector to the vpmaddwd kernel. All bit for bit.
TEST(QConvX86, AvxW7BoundEdges) {
  const std::optional<Int8Isa> avx2 = runnable_avx2();
  if (!avx2) GTEST_SKIP() << "no AVX2";
  Rng rng(64);
  Case c;
  Conv2dParams& p = c.p;
  p.in_channels = 16, p.out_channels = 16, p.in_h = p.in_w = p.out_h = p.out_w = 6;
  p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  c.in_block = 8, c.out_block = 8;
  fill(c, rng);
  c.with_residual = false;
  c.q.residual_add = false, c.q.residual_multiplier = 0.f;
  c.x_zero_point = 0;
  std::fill(c.x.begin(), c.x.end(), uint8_t{255});
  c.q.out_zero_point = 128, c.q.qmin = 0, c.q.qmax = 255;
  const int64_t taps = 9;
  auto at = [&](int64_t oc, int64_t ic, int64_t t) -> int8_t& {
    return c.w[static_cast<size_t>((oc * 16 + ic) * taps + t)];
  };
  // Each channel's bias cancels its sum at the inner pixels (all 144 products, inputs of 255 there), and
  // the multiplier is 1/16: a saturated pair there (a sum short by 128) would move the output by 8.
  auto center = [&]() {
    for (int64_t oc = 0; oc < 16; ++oc) {
      int64_t sum = 0;
      for (int64_t i = 0; i < 16 * taps; ++i) sum += c.w[static_cast<size_t>(oc * 16 * taps + i)];
      c.bias[static_cast<size_t>(oc)] = static_cast<int32_t>(-255 * sum);
    }
    c.q.bias = c.bias.data();
    std::fill(c.multiplier.begin(), c.multiplier.end(), 1.f / 16);
  };
  auto expect = [&](const char* name, const char* what) {
    center();
    std::string algorithm;
    EXPECT_EQ(mismatches(c, *avx2, 1, &algorithm, QConvKernel::Direct), 0) << what;
    EXPECT_EQ(algorithm, name) << what;
  };
  // Same-sign pairs at the bound: channels alternate positive and negative; a few taps zero so that the
  // outputs differ by channel.
  for (int64_t oc = 0; oc < 16; ++oc)
    for (int64_t ic = 0; ic < 16; ++ic)
      for (int64_t t = 0; t < taps; ++t) at(oc, ic, t) = (t + oc) % 5 == 0 ? 0 : oc % 2 ? -64 : 64;
  expect("int8-avx2-w7-direct", "pairs of 64 + 64");
  at(3, 4, 2) = -65, at(3, 5, 2) = -64;
  expect("int8-avx2-w7r-direct", "one pair of -65 + -64, split");
  at(3, 4, 2) = -64;
  at(6, 10, 7) = 65, at(6, 11, 7) = 64;
  expect("int8-avx2-w7r-direct", "one pair of 65 + 64, split");
  // A pair beyond the bound in every weight vector (8 output channels x 4 input channels at one tap): rest
  // vectors would double the work, so the vpmaddwd kernel.
  for (int64_t oc = 0; oc < 16; oc += 8)
    for (int64_t ic = 0; ic < 16; ic += 4)
      for (int64_t t = 0; t < taps; ++t) at(oc, ic, t) = 65, at(oc, ic + 1, t) = 64;
  expect("int8-avx2-direct", "a pair of 65 + 64 in every vector");
  // Opposite signs never saturate, whatever their size; a full-range weight beside a zero neither.
  for (int64_t oc = 0; oc < 16; ++oc)
    for (int64_t ic = 0; ic < 16; ++ic)
      for (int64_t t = 0; t < taps; ++t) at(oc, ic, t) = static_cast<int8_t>(ic % 2 ? -128 : 127);
  at(9, 0, 4) = -128, at(9, 1, 4) = 0;
  for (uint8_t& v : c.x) v = static_cast<uint8_t>(rng(0, 1) ? 255 : rng(0, 255));
  expect("int8-avx2-w7-direct", "opposite signs at full range");
}

// The bounds on rest vectors for 1x1 convs (ops/qconv_fast.cpp): with 64 or more output channels in NCHW8c
// (where vpmaddwd runs on widened inputs; a strided one only on a readable input, whose pixels are
// gathered) at most 1/5 of the weight vectors (8 output channels x 4 input channels) may need a rest, else
// 3/10. 40 input channels: 10 vectors per output block; pairs of 65 + 64 in the first `beyond` vectors, the
// other weights within vpmaddubsw's bound.
TEST(QConvX86, AvxRestBoundsForOneByOne) {
  const std::optional<Int8Isa> avx2 = runnable_avx2();
  if (!avx2) GTEST_SKIP() << "no AVX2";
  Rng rng(65);
  auto run = [&](int64_t out_channels, int64_t beyond, const char* name, int64_t stride = 1, int64_t in_block = 8) {
    Case c;
    c.p = square_conv(40, out_channels, 1, 7, 9, 1, stride, 1, 0);
    c.in_block = in_block, c.out_block = 8;
    fill(c, rng);
    for (int8_t& v : c.w) v = static_cast<int8_t>(rng(-60, 60));
    for (int64_t k = 0; k < beyond; ++k) {
      const int64_t oc = 8 * (k / 10), ic = 4 * (k % 10);
      c.w[static_cast<size_t>(oc * 40 + ic)] = 65, c.w[static_cast<size_t>(oc * 40 + ic + 1)] = 64;
    }
    std::string algorithm;
    EXPECT_EQ(mismatches(c, *avx2, 1, &algorithm), 0) << c.describe();
    EXPECT_EQ(algorithm, name) << out_channels << " output channels, " << beyond << " vectors beyond";
  };
  run(64, 16, "int8-avx2-w7r-pointwise");   // 80 vectors, 1/5
  run(64, 17, "int8-avx2-wide-pointwise");  // just past 1/5
  run(32, 10, "int8-avx2-w7r-pointwise");   // 40 vectors, 1/4: below 3/10
  run(32, 12, "int8-avx2-w7r-pointwise");   // 3/10
  run(32, 13, "int8-avx2-pointwise");       // just past 3/10
  // Strided: gathered from a readable input, the wide kernel and 1/5; a staged input is not gathered, so
  // the direct kernel and 3/10.
  run(64, 17, "int8-avx2-wide-pointwise-strided", 2);
  run(64, 16, "int8-avx2-w7r-pointwise-strided", 2);
  run(64, 20, "int8-avx2-w7r-direct", 2, 1);
  run(64, 25, "int8-avx2-direct", 2, 1);
}

// Layers shaped like the models' (blocked in and out in the vector's block, many channels, 3x3 pads and
// strided 1x1s, a quantised RGB first layer): the dense tiles and the common paths, bit for bit.
TEST(QConvX86, ModelShapedLayersMatchReference) {
  Rng rng(5);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int64_t P = isa.lanes;
    struct Shape {
      int64_t in_c, out_c, hw, k, stride, pad, in_block;
    };
    const Shape shapes[] = {{64, 64, 14, 3, 1, 1, P}, {32, 64, 15, 3, 2, 1, P}, {64, 128, 12, 1, 2, 0, P},
                            {3, 32, 23, 3, 2, 1, 1},  {3, 16, 20, 7, 2, 3, 1},  {96, 32, 9, 1, 1, 0, P},
                            {48, 48, 11, 5, 1, 2, 16}, {24, 40, 10, 3, 1, 1, 8}};
    for (const Shape& s : shapes) {
      Case c;
      c.p = square_conv(s.in_c, s.out_c, 1, s.hw, s.hw, s.k, s.stride, 1, s.pad);
      c.in_block = s.in_c % s.in_block == 0 ? s.in_block : 1;
      c.out_block = s.out_c % P == 0 ? P : 1;
      fill(c, rng);
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, 1, &algorithm), 0) << isa.name << " " << c.describe();
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// Depthwise convolutions through FastQConv2d on the int8-dw kernels (qconv2d_depthwise): the op's packing and
// zero-point folding for them, any block in and out, bit for bit.
TEST(QConvX86, DepthwiseThroughTheOpMatchesReference) {
  Rng rng(77);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 40; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.in_channels = p.out_channels = p.groups = rng.pick(kDepthwiseChannels);
      p.kernel_h = p.kernel_w = rng.pick<int64_t>({3, 5});
      p.stride_h = p.stride_w = rng(1, 2);
      p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = rng(0, 2);
      p.in_h = rng(3, 13), p.in_w = rng(3, 17);
      p.out_h = out_size(p.in_h, p.kernel_h, p.stride_h, 1, p.pad_top, p.pad_bottom);
      p.out_w = out_size(p.in_w, p.kernel_w, p.stride_w, 1, p.pad_left, p.pad_right);
      if (p.out_h < 1 || p.out_w < 1) continue;
      c.in_block = block_for(rng, kDepthwiseBlocks, p.in_channels);
      c.out_block = rng(0, 1) ? c.in_block : block_for(rng, kDepthwiseBlocks, p.out_channels);
      fill(c, rng);
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, rng(0, 2) == 0 ? 2 : 1, &algorithm), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, std::string(isa.prefix) + "depthwise");
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

#if defined(__aarch64__)
// What FastQConv2d takes and refuses on AArch64: neon everywhere, dotprod only where HWCAP has it (a request
// for it falls to neon), NCHW4c read as it is and other blocks staged, groups of fewer than 4 output
// channels (not depthwise) left to the reference.
TEST(QConvX86, SupportsAndAlgorithmNamesArm) {
  Conv2dParams p;
  p.in_channels = 32, p.out_channels = 32, p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  EXPECT_FALSE(FastQConv2d::supports(p, 4, 4, Isa::Ref));
  ASSERT_TRUE(cpu_features().asimd);
  EXPECT_TRUE(FastQConv2d::supports(p, 1, 1, Isa::Neon));
  // The int8 Winograd kernel is x86's (AVX2) only.
  EXPECT_FALSE(FastQConv2d::supports(p, 4, 4, Isa::Neon, QConvKernel::Winograd));
  EXPECT_FALSE(FastQConv2d::supports(p, 4, 4, Isa::Dotprod, QConvKernel::Winograd));
  Conv2dParams depthwise = p;
  depthwise.groups = 32;
  EXPECT_TRUE(FastQConv2d::supports(depthwise, 4, 4, Isa::Dotprod));
  Conv2dParams small_groups = p;
  small_groups.groups = 16;  // 2 output channels per group
  EXPECT_FALSE(FastQConv2d::supports(small_groups, 4, 4, Isa::Dotprod));
  std::vector<int8_t> w(static_cast<size_t>(32 * 32 * 9), 1);
  std::vector<float> m(32, 0.01f);
  Requantization q;
  q.multiplier = m.data();
  FastQConv2d neon_conv(p, w.data(), q, 0, Isa::Neon, 1, 1);
  EXPECT_STREQ(neon_conv.algorithm(), "int8-neon-direct");
  EXPECT_TRUE(neon_conv.stages_input());  // plain NCHW input
  FastQConv2d blocked16(p, w.data(), q, 0, Isa::Neon, 16, 16);
  EXPECT_TRUE(blocked16.stages_input());  // the Arm kernels read NCHW4c only
  FastQConv2d best(p, w.data(), q, 0, Isa::Dotprod, 4, 4);
  EXPECT_STREQ(best.algorithm(), cpu_features().asimddp ? "int8-dotprod-direct" : "int8-neon-direct");
  EXPECT_FALSE(best.stages_input());
  FastQConv2d dw(depthwise, w.data(), q, 0, Isa::Dotprod, 4, 4);
  EXPECT_STREQ(dw.algorithm(), cpu_features().asimddp ? "int8-dotprod-depthwise" : "int8-neon-depthwise");
  EXPECT_FALSE(dw.stages_input());
}
#else
// What FastQConv2d takes and refuses: groups of fewer output channels than a vector (not depthwise) go to
// the reference; a VNNI request on a CPU without it falls to AVX2; the reference ISA takes nothing.
TEST(QConvX86, SupportsAndAlgorithmNames) {
  Conv2dParams p;
  p.in_channels = 32, p.out_channels = 32, p.in_h = p.in_w = p.out_h = p.out_w = 8;
  p.kernel_h = p.kernel_w = 3, p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  EXPECT_FALSE(FastQConv2d::supports(p, 1, 1, Isa::Ref));
  if (!cpu_features().avx2) GTEST_SKIP() << "no AVX2";
  EXPECT_TRUE(FastQConv2d::supports(p, 1, 1, Isa::Avx2));
  Conv2dParams depthwise = p;
  depthwise.groups = 32;
  EXPECT_TRUE(FastQConv2d::supports(depthwise, 1, 1, Isa::Avx512));
  EXPECT_FALSE(FastQConv2d::supports(depthwise, 1, 1, Isa::Avx512, QConvKernel::Indirect));
  Conv2dParams small_groups = p;
  small_groups.groups = 8;  // 4 output channels per group: the indirect kernel's, not the direct one's
  EXPECT_FALSE(FastQConv2d::supports(small_groups, 1, 1, Isa::Avx512, QConvKernel::Direct));
  EXPECT_TRUE(FastQConv2d::supports(small_groups, 1, 1, Isa::Avx512));
  std::vector<int8_t> w(static_cast<size_t>(32 * 32 * 9), 1);
  std::vector<float> m(32, 0.01f);
  Requantization q;
  q.multiplier = m.data();
  FastQConv2d avx2_conv(p, w.data(), q, 0, Isa::Avx2, 1, 8);
  EXPECT_STREQ(avx2_conv.algorithm(), "int8-avx2-w7-direct");  // weights of 1: vpmaddubsw cannot saturate
  EXPECT_TRUE(avx2_conv.stages_input());  // plain NCHW input
  // A plain NCHW output (a detection head's): under AVX2 the direct kernels, which store it four pixels at a
  // time as the indirect kernel does; under VNNI the indirect kernel (8 lanes, where the direct one has 16).
  FastQConv2d plain_out(p, w.data(), q, 0, Isa::Avx2, 8, 1);
  EXPECT_STREQ(plain_out.algorithm(), "int8-avx2-w7-direct");
  if (cpu_features().avx512vnni) {
    FastQConv2d plain_out_vnni(p, w.data(), q, 0, Isa::Avx512, 8, 1);
    EXPECT_STREQ(plain_out_vnni.algorithm(), "int8-vnni-indirect");
  }
  FastQConv2d best(p, w.data(), q, 0, Isa::Avx512, 16, 16);
  EXPECT_STREQ(best.algorithm(), cpu_features().avx512vnni ? "int8-vnni-direct" : "int8-avx2-w7-direct");
  EXPECT_FALSE(best.stages_input());
  // One pair of adjacent input channels whose weights could saturate vpmaddubsw: split, one rest vector.
  std::vector<int8_t> wide = w;
  wide[0] = 65, wide[9] = 64;  // output channel 0, input channels 0 and 1, tap 0
  FastQConv2d avx2_wide(p, wide.data(), q, 0, Isa::Avx2, 8, 8);
  EXPECT_STREQ(avx2_wide.algorithm(), "int8-avx2-w7r-direct");
  // Such a pair in every weight vector (output channels 0, 8, 16 and 24, input channels 4 s and 4 s + 1 at
  // every tap): the vpmaddwd kernel.
  for (int64_t oc = 0; oc < 32; oc += 8)
    for (int64_t ic = 0; ic < 32; ic += 4)
      for (int64_t t = 0; t < 9; ++t) {
        wide[static_cast<size_t>((oc * 32 + ic) * 9 + t)] = 65;
        wide[static_cast<size_t>((oc * 32 + ic + 1) * 9 + t)] = 64;
      }
  FastQConv2d avx2_words(p, wide.data(), q, 0, Isa::Avx2, 8, 8);
  EXPECT_STREQ(avx2_words.algorithm(), "int8-avx2-direct");
  FastQConv2d grouped(small_groups, w.data(), q, 0, Isa::Avx512, 1, 1);
  EXPECT_STREQ(grouped.algorithm(), cpu_features().avx512vnni ? "int8-vnni-indirect" : "int8-avx2-indirect");
  // A plain 3-channel image to 8 channels (RetinaFace's first conv): the first-layer kernel on both ISAs;
  // with a fused residual, which it does not take, what Auto chose before it (VNNI's indirect kernel). To
  // 32 channels (MobileNetV2's) in NCHW16c under VNNI: the direct kernel, which fills its 16 lanes there
  // (as fast, measured); in NCHW8c under AVX2, the first-layer kernel.
  Conv2dParams first = p;
  first.in_channels = 3, first.out_channels = 8, first.in_h = first.in_w = 32, first.out_h = first.out_w = 16;
  first.stride_h = first.stride_w = 2;
  const bool vnni = cpu_features().avx512vnni;
  FastQConv2d first_conv(first, w.data(), q, 0, Isa::Avx512, 1, 8);
  EXPECT_STREQ(first_conv.algorithm(), vnni ? "int8-vnni-first-layer" : "int8-avx2-first-layer");
  EXPECT_FALSE(first_conv.stages_input());
  Requantization with_residual = q;
  with_residual.residual_multiplier = 0.5f;
  FastQConv2d first_residual(first, w.data(), with_residual, 0, Isa::Avx512, 1, 8);
  EXPECT_STREQ(first_residual.algorithm(), vnni ? "int8-vnni-indirect" : "int8-avx2-w7-direct");
  Conv2dParams dilated = first;  // columns not adjacent: not the first-layer kernel's
  dilated.dilation_w = 2, dilated.out_w = 15;
  EXPECT_FALSE(FastQConv2d::supports(dilated, 1, 8, Isa::Avx512, QConvKernel::FirstLayer));
  EXPECT_TRUE(FastQConv2d::supports(dilated, 1, 8, Isa::Avx512));
  first.out_channels = 32;
  FastQConv2d first_wide(first, w.data(), q, 0, Isa::Avx512, 1, vnni ? 16 : 8);
  EXPECT_STREQ(first_wide.algorithm(), vnni ? "int8-vnni-direct" : "int8-avx2-first-layer");
  FastQConv2d first_wide_forced(first, w.data(), q, 0, Isa::Avx512, 1, vnni ? 16 : 8, QConvKernel::FirstLayer);
  EXPECT_STREQ(first_wide_forced.algorithm(), vnni ? "int8-vnni-first-layer" : "int8-avx2-first-layer");
  // 3x3 stride 1 on a 16 x 16 plane (64 tiles), blocks of 8 or 16: the Winograd kernel without VNNI, unless
  // the "winograd" algorithm is off; not for a plain input (byte-by-byte loads) or output, fewer than 16
  // output channels or a 7 x 7 plane (16 tiles).
  Conv2dParams wide_plane = p;
  wide_plane.in_h = wide_plane.in_w = wide_plane.out_h = wide_plane.out_w = 16;
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 8, 8).algorithm(), "int8-avx2-winograd-f2x3");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 16, 16).algorithm(), "int8-avx2-winograd-f2x3");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 8, 8, QConvKernel::NoIndirect).algorithm(),
               "int8-avx2-winograd-f2x3");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 8, 8, QConvKernel::Auto, false).algorithm(),
               "int8-avx2-w7-direct");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 8, 8, QConvKernel::NoIndirect, false).algorithm(),
               "int8-avx2-w7-direct");
  // A plain NCHW output (a head's) stays on the direct kernels' four-pixel stores.
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 16, 1).algorithm(), "int8-avx2-w7-direct");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx2, 1, 8).algorithm(), "int8-avx2-w7-direct");
  EXPECT_STREQ(FastQConv2d(wide_plane, w.data(), q, 0, Isa::Avx512, 16, 16).algorithm(),
               vnni ? "int8-vnni-direct" : "int8-avx2-winograd-f2x3");
  Conv2dParams few_out = wide_plane;
  few_out.out_channels = 8;
  EXPECT_STREQ(FastQConv2d(few_out, w.data(), q, 0, Isa::Avx2, 8, 8).algorithm(), "int8-avx2-w7-direct");
  Conv2dParams small_plane = wide_plane;
  small_plane.in_h = small_plane.in_w = small_plane.out_h = small_plane.out_w = 7;
  EXPECT_STREQ(FastQConv2d(small_plane, w.data(), q, 0, Isa::Avx2, 8, 8).algorithm(), "int8-avx2-w7-direct");
}

// NoIndirect (a float conv's "direct" setting, for int8): what Auto chooses, except that convs Auto gives to
// the indirect kernel go to the direct or pointwise kernel, and those whose groups only the indirect kernel
// takes get no fast kernel; the first-layer and strided pointwise kernels stay. Bit for bit on each.
TEST(QConvX86, NoIndirectKeepsTheDirectFamily) {
  Rng rng(4242);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const int64_t P = isa.lanes;
    struct Shape {
      int64_t in_c, out_c, groups, hw, k, stride, pad, in_block, out_block;
      const char* auto_kernel;  // the kernel Auto picks (the name's suffix)
      const char* kernel;       // the kernel NoIndirect picks
    };
    // A detection head: a plain NCHW output, which Auto gives to the indirect kernel under VNNI (16-lane direct
    // kernels) and to the direct family under AVX2.
    const bool vnni = P == 16;
    const Shape shapes[] = {
        {32, 20, 1, 11, 1, 1, 0, 8, 1, vnni ? "indirect" : "pointwise", "pointwise"},
        {32, 12, 1, 9, 3, 1, 1, 8, 1, vnni ? "indirect" : "direct", "direct"},
        // ResNet's downsampling shortcut and a plain image's first conv.
        {32, 64, 1, 14, 1, 2, 0, 8, P, "pointwise-strided", "pointwise-strided"},
        {3, 8, 1, 23, 3, 2, 1, 1, 8, "first-layer", "first-layer"},
    };
    for (const Shape& s : shapes) {
      Case c;
      c.p = square_conv(s.in_c, s.out_c, s.groups, s.hw, s.hw, s.k, s.stride, 1, s.pad);
      c.in_block = s.in_block, c.out_block = s.out_block;
      fill(c, rng);
      drop_residual(c);
      // The direct family's names carry the vpmaddubsw prefix where the weights allow it; the indirect and
      // first-layer kernels have one form.
      auto named = [&](const std::string& kernel) {
        const bool direct_family = kernel != "indirect" && kernel != "first-layer";
        return (direct_family ? direct_prefix(isa, c) : std::string(isa.prefix)) + kernel;
      };
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, 1, &algorithm), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, named(s.auto_kernel)) << c.describe();
      EXPECT_EQ(mismatches(c, isa, 1, &algorithm, QConvKernel::NoIndirect), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, named(s.kernel)) << c.describe();
      ++tested;
    }
    // Four output channels per group: only the indirect kernel takes them.
    Conv2dParams small_groups;
    small_groups.in_channels = small_groups.out_channels = 32, small_groups.groups = 8;
    small_groups.in_h = small_groups.in_w = small_groups.out_h = small_groups.out_w = 8;
    small_groups.kernel_h = small_groups.kernel_w = 3;
    small_groups.pad_top = small_groups.pad_left = small_groups.pad_bottom = small_groups.pad_right = 1;
    EXPECT_TRUE(FastQConv2d::supports(small_groups, 8, 8, isa.isa));
    EXPECT_FALSE(FastQConv2d::supports(small_groups, 8, 8, isa.isa, QConvKernel::NoIndirect));
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// c on the indirect kernel of `isa` with the thread split forced (Rows: a band of tiles per thread through
// all output channels; Channels: ranges of output-channel groups), at `threads` threads.
int64_t indirect_split_mismatches(const Case& c, const Int8Isa& isa, ConvSplit split, int threads) {
  ExecSettings settings;
  settings.isa = isa.isa;
  const bool residual = c.q.residual_add || c.q.residual_multiplier != 0.f;
  ConvPlan plan = qconv_forced_plan(qconv_key(c.p, residual, c.in_block, c.out_block, settings, c.w.data()),
                                    QConvKernel::Indirect);
  plan.split = split;
  const FastQConv2d conv(c.p, c.w.data(), c.q, c.x_zero_point, plan);
  return reference_mismatches(c, conv, threads);
}

// The indirect kernel forced on random convolutions: any kernel, stride, dilation and padding, groups of
// any number of output channels (1 up to past two vectors, so narrower last vectors and padded groups),
// odd input channel counts (staged), every input and output block, zero points at both extremes,
// saturating multipliers, residuals of both kinds, one and two threads (and in every fourth case both thread
// splits forced, at 2 or 3 threads); bit for bit.
TEST(QConvX86, IndirectMatchesReferenceBitForBit) {
  Rng rng(4242);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 160; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.groups = rng(0, 2) == 0 ? rng(2, 4) : 1;
      const int64_t ocpg = rng(0, 3) == 0 ? rng.pick<int64_t>({8, 16, 24}) : rng(1, 20);
      p.out_channels = p.groups * ocpg;
      const int64_t icpg = rng.pick<int64_t>({1, 2, 3, 4, 5, 7, 8, 12, 16, 19, 32, 33});
      p.in_channels = icpg * p.groups;
      p.kernel_h = rng(1, 5), p.kernel_w = rng(1, 5);
      p.stride_h = rng(1, 3), p.stride_w = rng(1, 3);
      p.dilation_h = rng(0, 3) == 0 ? 2 : 1, p.dilation_w = rng(0, 3) == 0 ? 2 : 1;
      p.pad_top = rng(0, 2), p.pad_left = rng(0, 2), p.pad_bottom = rng(0, 2), p.pad_right = rng(0, 2);
      p.in_h = rng(1, 14), p.in_w = rng(1, 20);
      p.out_h = out_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
      p.out_w = out_size(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left, p.pad_right);
      if (p.out_h < 1 || p.out_w < 1) continue;
      c.in_block = block_for(rng, {1, 4, 8, 16}, p.in_channels);
      c.out_block = block_for(rng, {16, 8, 4, 1}, p.out_channels);
      fill(c, rng);
      std::string algorithm;
      const int threads = rng(0, 3) == 0 ? 2 : 1;
      EXPECT_EQ(mismatches(c, isa, threads, &algorithm, QConvKernel::Indirect), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, std::string(isa.prefix) + "indirect");
      if (iter % 4 == 0) {  // both splits forced, at 2 and 3 threads (bands of fewer tiles than threads too)
        for (ConvSplit split : {ConvSplit::Rows, ConvSplit::Channels})
          EXPECT_EQ(indirect_split_mismatches(c, isa, split, 2 + iter / 4 % 2), 0)
              << isa.name << " split " << conv_split_name(split) << " " << c.describe();
      }
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The layers Auto gives the indirect kernel in RetinaFace (its 3->8 3x3/2 first conv from a plain image,
// the heads' 64->20/8/4 pointwise convs from NCHW16c into the blocks the layout plan gives them; AVX2 runs
// the plain-output one on the direct kernels, next test) and a
// dilated grouped conv with 12 output channels per group, at sizes with several pixel tiles per row and a
// partial last tile; bit for bit, whichever kernel Auto chose.
TEST(QConvX86, IndirectModelShapedLayersMatchReference) {
  Rng rng(99);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    struct Shape {
      int64_t in_c, out_c, groups, h, w, k, stride, dilation, pad, in_block, out_block;
    };
    const Shape shapes[] = {{3, 8, 1, 41, 37, 3, 2, 1, 1, 1, 8},     {64, 20, 1, 13, 11, 1, 1, 1, 0, 16, 4},
                            {64, 8, 1, 13, 11, 1, 1, 1, 0, 16, 8},   {64, 4, 1, 13, 11, 1, 1, 1, 0, 16, 4},
                            {64, 20, 1, 13, 11, 1, 1, 1, 0, 16, 1},  {32, 24, 2, 15, 16, 3, 1, 2, 2, 16, 8}};
    for (const Shape& s : shapes) {
      for (QConvKernel kernel : {QConvKernel::Auto, QConvKernel::Indirect}) {
        Case c;
        c.p = square_conv(s.in_c, s.out_c, s.groups, s.h, s.w, s.k, s.stride, s.dilation, s.pad);
        c.in_block = s.in_block, c.out_block = s.out_block;
        fill(c, rng);
        std::string algorithm;
        EXPECT_EQ(mismatches(c, isa, 1, &algorithm, kernel), 0) << isa.name << " " << algorithm << " " << c.describe();
        ++tested;
      }
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// Plain NCHW outputs (detection heads, read by a DequantizeLinear) under Auto: on AVX2 the direct and
// pointwise kernels, which store four pixels of a vector channel by channel when the multipliers allow the
// packed store and no residual is fused, else vector by vector. Head shapes (64 -> 4, 8, 20 pointwise; 3x3
// too), planes whose rows end mid-tile; the packed store's path in every other case, the rest with what
// fill() draws (a residual a third of the time, saturating multipliers a quarter); bit for bit.
TEST(QConvX86, PlainOutputHeadsMatchReference) {
  Rng rng(4820);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    const bool avx2 = std::string(isa.name) == "avx2";
    for (int64_t out_c : {4, 8, 20, 13})
      for (int64_t k : {1, 3})
        for (int packed = 0; packed < 2; ++packed) {
          Case c;
          c.p = square_conv(64, out_c, 1, rng(5, 23), rng(5, 23), k, 1, 1, k / 2);
          c.in_block = 16, c.out_block = 1;
          fill(c, rng);
          if (packed) {
            drop_residual(c);
            // Within the packed store's bound (|m| <= 1/4).
            for (float& m : c.multiplier) m = std::ldexp(static_cast<float>(rng(1, 1 << 12)), -24);
          }
          std::string algorithm;
          EXPECT_EQ(mismatches(c, isa, rng(1, 2), &algorithm), 0) << isa.name << " " << algorithm << " " << c.describe();
          if (avx2) {
            EXPECT_EQ(algorithm, direct_prefix(isa, c) + (k == 1 ? "pointwise" : "direct")) << c.describe();
          }
          ++tested;
        }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The Winograd F(2x2, 3x3) kernel forced on random 3x3 stride-1 convs: channel counts on and off its groups
// of 16 (1 to 65 in, 1 to 40 out), odd and even heights and widths (partial tiles at the bottom and right),
// rows wide enough for several strips of tiles, padding 0-2 on each side, every input and output block,
// zero points at both extremes, residuals and fused additions, one and two threads; bit for bit. Then each
// of its three input load forms (16 bytes from blocks of 16 and 32, two 8-byte halves from blocks of 8, byte
// by byte) on a plane of several strips, with and without a residual. It runs under AVX2, so on both x86
// ISAs' entries.
TEST(QConvX86, WinogradMatchesReferenceBitForBit) {
  Rng rng(2611);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 120; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.in_channels = rng.pick<int64_t>({1, 2, 3, 7, 8, 15, 16, 17, 24, 32, 33, 48, 64, 65});
      p.out_channels = rng(0, 2) == 0 ? rng(1, 15) : rng(16, 40);
      p.kernel_h = p.kernel_w = 3;
      p.pad_top = rng(0, 2), p.pad_left = rng(0, 2), p.pad_bottom = rng(0, 2), p.pad_right = rng(0, 2);
      p.in_h = rng(1, 13);
      p.in_w = rng(0, 5) == 0 ? rng(90, 210) : rng(1, 27);
      p.out_h = out_size(p.in_h, 3, 1, 1, p.pad_top, p.pad_bottom);
      p.out_w = out_size(p.in_w, 3, 1, 1, p.pad_left, p.pad_right);
      if (p.out_h < 1 || p.out_w < 1) continue;
      c.in_block = block_for(rng, {1, 4, 8, 16, 32}, p.in_channels);
      c.out_block = block_for(rng, {16, 8, 4, 1}, p.out_channels);
      fill(c, rng);
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, rng(1, 2), &algorithm, QConvKernel::Winograd), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, "int8-avx2-winograd-f2x3");
      ++tested;
    }
    for (int64_t in_block : {16, 32, 8, 4})
      for (int with_residual = 0; with_residual < 2; ++with_residual) {
        Case c;
        c.p = square_conv(64, 24, 1, 7, 101, 3, 1, 1, 1);  // 51 tiles per row: two strips
        c.in_block = in_block, c.out_block = 8;
        fill(c, rng);
        if (!with_residual) drop_residual(c);
        std::string algorithm;
        EXPECT_EQ(mismatches(c, isa, 2, &algorithm, QConvKernel::Winograd), 0) << isa.name << " " << c.describe();
        ++tested;
      }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The Winograd kernel's exactness bound (kernels/x86/qconv_winograd_x86.h): at the largest channel count it
// takes, every interior output's sum at its extreme (weights -128 against inputs 255 with zero point 0, the most
// negative sum, and against inputs 0 with zero point 255, the most positive) matches the reference; one channel more and the kernel refuses the conv.
TEST(QConvX86, WinogradAtItsExactnessBound) {
  int64_t largest = 1;
  while (qwinograd_f2x3_exact(largest + 1)) ++largest;
  EXPECT_LT(largest * 9 * 255 * 128 * 4, int64_t(1) << 31);
  EXPECT_GE((largest + 1) * 9 * 255 * 128 * 4, int64_t(1) << 31);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int high = 0; high < 2; ++high) {
      Case c;
      c.p = square_conv(largest, 16, 1, 4, 5, 3, 1, 1, 1);
      c.in_block = 1, c.out_block = 8;
      Rng rng(static_cast<uint32_t>(77 + high));
      fill(c, rng);
      drop_residual(c);
      c.x_zero_point = high ? 0 : 255;
      std::fill(c.x.begin(), c.x.end(), static_cast<uint8_t>(high ? 255 : 0));
      std::fill(c.w.begin(), c.w.end(), static_cast<int8_t>(-128));
      // Multipliers that keep the extreme sums (about 2^29) inside the output range.
      for (float& m : c.multiplier) m = std::ldexp(1.f, -23);
      c.q.out_zero_point = 128, c.q.qmin = 0, c.q.qmax = 255;
      std::string algorithm;
      EXPECT_EQ(mismatches(c, isa, 1, &algorithm, QConvKernel::Winograd), 0) << isa.name << " " << c.describe();
      ++tested;
    }
    EXPECT_TRUE(FastQConv2d::supports(square_conv(largest, 16, 1, 4, 5, 3, 1, 1, 1), 1, 8, isa.isa,
                                      QConvKernel::Winograd));
    EXPECT_FALSE(FastQConv2d::supports(square_conv(largest + 1, 16, 1, 4, 5, 3, 1, 1, 1), 1, 8, isa.isa,
                                       QConvKernel::Winograd));
    // Nor any other geometry than 3x3, stride 1, dilation 1, one group (depthwise convs included).
    EXPECT_FALSE(FastQConv2d::supports(square_conv(16, 16, 1, 8, 8, 3, 2, 1, 1), 8, 8, isa.isa, QConvKernel::Winograd));
    EXPECT_FALSE(FastQConv2d::supports(square_conv(16, 16, 1, 8, 8, 3, 1, 2, 2), 8, 8, isa.isa, QConvKernel::Winograd));
    EXPECT_FALSE(FastQConv2d::supports(square_conv(16, 16, 2, 8, 8, 3, 1, 1, 1), 8, 8, isa.isa, QConvKernel::Winograd));
    EXPECT_FALSE(FastQConv2d::supports(square_conv(16, 16, 1, 8, 8, 5, 1, 1, 2), 8, 8, isa.isa, QConvKernel::Winograd));
    EXPECT_FALSE(FastQConv2d::supports(square_conv(16, 16, 16, 8, 8, 3, 1, 1, 1), 8, 8, isa.isa, QConvKernel::Winograd));
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The first-layer kernel forced on random plain images of 1-4 channels: 1-40 output channels, kernels up to
// 11 wide and high, strides 1-3 down and 1-2 across, dilation 1-2 down, padding, odd heights and widths from
// a few pixels to rows of several register tiles (so tiles in place and from border windows), outputs in
// plain NCHW and blocks of 8 (and 16 for vnni), zero points at both extremes, saturating multipliers, one
// and two threads; bit for bit. No residual (the kernel takes none: see the next test).
TEST(QConvX86, FirstLayerMatchesReferenceBitForBit) {
  Rng rng(31337);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    for (int iter = 0; iter < 200; ++iter) {
      Case c;
      Conv2dParams& p = c.p;
      p.batch = rng(1, 2);
      p.in_channels = rng(1, 4);
      p.out_channels = rng(0, 2) == 0 ? rng.pick<int64_t>({8, 16, 24, 32, 40}) : rng(1, 40);
      p.kernel_h = rng(0, 3) == 0 ? rng(1, 11) : rng(1, 5);
      p.kernel_w = rng(0, 3) == 0 ? rng(1, 11) : rng(1, 5);
      p.stride_h = rng(1, 3), p.stride_w = rng(1, 2);
      p.dilation_h = rng(0, 3) == 0 ? 2 : 1;
      p.pad_top = rng(0, 3), p.pad_left = rng(0, 3), p.pad_bottom = rng(0, 3), p.pad_right = rng(0, 3);
      p.in_h = rng(1, 13), p.in_w = rng(0, 1) ? rng(1, 40) : rng(41, 170);
      p.out_h = out_size(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom);
      p.out_w = out_size(p.in_w, p.kernel_w, p.stride_w, 1, p.pad_left, p.pad_right);
      if (p.out_h < 1 || p.out_w < 1) continue;
      c.out_block = block_for(rng, isa.lanes == 16 ? std::vector<int64_t>{16, 8, 1} : std::vector<int64_t>{8, 1},
                              p.out_channels);
      fill(c, rng);
      c.with_residual = false;
      c.q.residual_add = false, c.q.residual_multiplier = 0.f, c.q.residual_zero_point = 0;
      std::string algorithm;
      const int threads = rng(0, 3) == 0 ? 2 : 1;
      EXPECT_EQ(mismatches(c, isa, threads, &algorithm, QConvKernel::FirstLayer), 0) << isa.name << " " << c.describe();
      EXPECT_EQ(algorithm, std::string(isa.prefix) + "first-layer") << c.describe();
      ++tested;
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}

// The first layers of the benchmark models (RetinaFace's 3->8 3x3/2 into NCHW8c, MobileNetV2's 3->32 3x3/2
// into the vector's block, ResNet's 3->64 7x7/2) at odd sizes, as Auto chooses and forced; and with a
// fused residual, which the first-layer kernel does not take: Auto and FirstLayer both
// fall back to another kernel, still bit for bit.
TEST(QConvX86, FirstLayerModelShapedLayersMatchReference) {
  Rng rng(2718);
  int tested = 0;
  for (const Int8Isa& isa : int8_isas()) {
    if (!isa.runs) continue;
    struct Shape {
      int64_t out_c, h, w, k, stride, pad, out_block;
    };
    const int64_t wide = isa.lanes == 16 ? 16 : 8;
    const Shape shapes[] = {{8, 41, 163, 3, 2, 1, 8}, {32, 23, 97, 3, 2, 1, wide}, {64, 15, 67, 7, 2, 3, wide},
                            {8, 9, 131, 3, 1, 1, 1}};
    for (const Shape& s : shapes) {
      for (QConvKernel kernel : {QConvKernel::Auto, QConvKernel::FirstLayer}) {
        for (bool residual : {false, true}) {
          Case c;
          c.p = square_conv(3, s.out_c, 1, s.h, s.w, s.k, s.stride, 1, s.pad);
          const Conv2dParams& p = c.p;
          c.in_block = 1, c.out_block = s.out_block;
          fill(c, rng);
          if (residual && !c.with_residual) {
            c.with_residual = true;
            c.residual.assign(static_cast<size_t>(p.out_channels * p.out_h * p.out_w), 77);
            c.q.residual_zero_point = 3, c.q.residual_multiplier = 0.5f, c.q.residual_add = false;
          }
          if (!residual) drop_residual(c);
          std::string algorithm;
          EXPECT_EQ(mismatches(c, isa, 1, &algorithm, kernel), 0) << isa.name << " " << algorithm << " " << c.describe();
          // Auto: the first-layer kernel up to 16 output channels under VNNI, always under AVX2.
          const bool first_layer = !residual && (kernel == QConvKernel::FirstLayer || s.out_c <= 16 || isa.lanes == 8);
          EXPECT_EQ(algorithm == std::string(isa.prefix) + "first-layer", first_layer) << algorithm << " " << c.describe();
          ++tested;
        }
      }
    }
  }
  if (tested == 0) GTEST_SKIP() << "no int8 x86 kernel runs on this CPU";
}
#endif

}  // namespace
}  // namespace ninegrid
#endif
