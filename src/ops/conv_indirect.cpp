#include "ops/conv_indirect.h"

#include <algorithm>
#include <string>

#include "kernels/x86/conv_indirect_x86.h"
#include "ninegrid/tensor.h"
#include "core/thread_pool.h"

namespace ninegrid {

namespace {

// The best kernels' ISA for this conv under the cap `isa`, or Ref when none applies: AVX-512 needs whole
// 16-channel vectors per group, AVX2 whole 8-channel ones, NEON (on AArch64) whole 4-channel ones.
Isa kernel_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  isa = runnable_isa(isa);
  if (isa == Isa::Ref) return Isa::Ref;
  if (p.batch < 1 || p.in_channels < 1 || p.out_channels < 1 || p.groups < 1 || p.in_channels % p.groups != 0 ||
      p.out_channels % p.groups != 0)
    return Isa::Ref;
  if (p.in_h < 1 || p.in_w < 1 || p.out_h < 1 || p.out_w < 1 || p.kernel_h < 1 || p.kernel_w < 1 ||
      p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1 || p.pad_top < 0 || p.pad_left < 0)
    return Isa::Ref;
  if (p.in_h * p.in_w >= (int64_t(1) << 31)) return Isa::Ref;
  if (!is_kernel_channel_block(in_block, p.in_channels) || !is_kernel_channel_block(out_block, p.out_channels) ||
      !isa_takes_block(isa, in_block) || !isa_takes_block(isa, out_block))
    return Isa::Ref;
  const int64_t ocpg = p.out_channels_per_group();
  if (is_arm_isa(isa)) return p.groups == 1 || ocpg % 4 == 0 ? Isa::Neon : Isa::Ref;
  if (isa == Isa::Avx512 && (p.groups == 1 || ocpg % 16 == 0)) return Isa::Avx512;
  if (p.groups == 1 || ocpg % 8 == 0) return Isa::Avx2;
  return Isa::Ref;
}

}  // namespace

bool IndirectConv2d::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return kernel_isa(p, in_block, out_block, isa) != Isa::Ref;
}

Isa IndirectConv2d::best_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  return kernel_isa(p, in_block, out_block, isa);
}

bool IndirectConv2d::fits(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa) {
  // The narrower x86 vectors run wherever the wider ones do (AVX2 kernels on an AVX-512 CPU).
  if (isa == Isa::Ref || runnable_isa(isa) != isa) return false;
  const Isa best = kernel_isa(p, in_block, out_block, isa);
  return best == isa || (isa == Isa::Dotprod && best == Isa::Neon);
}

bool indirect_splits_rows(ConvSplit split, int64_t tiles, int64_t threads) {
  return split == ConvSplit::Rows || (split == ConvSplit::Auto && tiles >= 4 * threads);
}

IndirectConv2d::IndirectConv2d(const Conv2dParams& p, const float* weights, const float* bias,
                               const Activation& activation, const ConvPlan& plan)
    : params_(p), isa_(kernel_isa(p, plan.in_block, plan.out_block, plan.isa)), in_block_(plan.in_block),
      out_block_(plan.out_block), split_(plan.split), activation_(activation) {
  if (plan.kernel != ConvKernel::Indirect) throw Error("IndirectConv2d: the plan is not an indirect one");
  if (!fits(p, plan.in_block, plan.out_block, plan.isa))
    throw Error("IndirectConv2d: no kernel for this convolution (in block " + std::to_string(plan.in_block) +
                ", out block " + std::to_string(plan.out_block) + ", isa " + isa_name(plan.isa) + ")");
  if (plan.split == ConvSplit::Tiles) throw Error("IndirectConv2d: splits by channels or by rows, not by tiles");
  if (activation.kind == ActivationKind::PRelu && !activation.slope)
    throw Error("IndirectConv2d: PRelu activation without slopes");
  const bool avx512 = isa_ == Isa::Avx512, neon = isa_ == Isa::Neon;
  lanes_ = avx512 ? 16 : neon ? 4 : 8;
  const int64_t vectors = avx512 ? avx512::kIndirectOcVectors : neon ? neon::kIndirectOcVectors : avx2::kIndirectOcVectors;
  const int64_t pixels = avx512 ? avx512::kIndirectPixels : neon ? neon::kIndirectPixels : avx2::kIndirectPixels;
  indirection_ = build_indirection(p, pixels);

  // Weights [g][vector group][tap][ic of the group][lanes of the vector group], per-channel values
  // [g][oc_padded_per_group], zeros for the padding channels.
  const int64_t ocpg = p.out_channels_per_group(), icpg = p.in_channels_per_group();
  const int64_t taps = p.kernel_h * p.kernel_w;
  oc_padded_per_group_ = round_up_to_block(ocpg, lanes_);
  const int64_t group_lanes = vectors * lanes_;
  weights_ = AlignedFloats(p.groups * oc_padded_per_group_ * icpg * taps);
  bias_ = AlignedFloats(p.groups * oc_padded_per_group_);
  if (activation.kind == ActivationKind::PRelu) slope_ = AlignedFloats(p.groups * oc_padded_per_group_);
  for (int64_t g = 0; g < p.groups; ++g) {
    for (int64_t k = 0; k < ocpg; ++k) {
      const int64_t oc = g * ocpg + k, cp = g * oc_padded_per_group_ + k;
      const int64_t vg = k / group_lanes;
      const int64_t width = std::min(group_lanes, oc_padded_per_group_ - vg * group_lanes);
      float* w = weights_.data() + (g * oc_padded_per_group_ + vg * group_lanes) * taps * icpg;
      for (int64_t tap = 0; tap < taps; ++tap)
        for (int64_t icg = 0; icg < icpg; ++icg)
          w[(tap * icpg + icg) * width + k % group_lanes] = weights[(oc * icpg + icg) * taps + tap];
      bias_.data()[cp] = bias ? bias[oc] : 0.f;
      if (activation.kind == ActivationKind::PRelu) slope_.data()[cp] = activation.slope[oc];
    }
  }
}

void IndirectConv2d::run(const float* x, float* y, const float* residual, ThreadPool* pool) const {
#if defined(__x86_64__) || defined(__aarch64__)
  const Conv2dParams& p = params_;
#if defined(__aarch64__)
  const int64_t group_lanes = lanes_ * neon::kIndirectOcVectors;
  auto kernel = neon::conv2d_indirect;
#else
  const bool avx512 = isa_ == Isa::Avx512;
  const int64_t group_lanes = lanes_ * (avx512 ? avx512::kIndirectOcVectors : avx2::kIndirectOcVectors);
  auto kernel = avx512 ? avx512::conv2d_indirect : avx2::conv2d_indirect;
#endif

  IndirectX86Args a;
  a.in_channels = p.in_channels, a.in_plane = p.in_h * p.in_w, a.in_block = in_block_;
  a.out_channels = p.out_channels, a.out_plane = p.out_h * p.out_w, a.out_block = out_block_;
  a.groups = p.groups;
  a.in_channels_per_group = p.in_channels_per_group(), a.out_channels_per_group = p.out_channels_per_group();
  a.oc_padded_per_group = oc_padded_per_group_;
  a.taps = indirection_.taps;
  a.tiles = indirection_.tiles;
  a.indirection = indirection_.entries.data();
  a.weights = weights_.data();
  a.bias = bias_.data();
  set_activation(a.epilogue, activation_);
  a.epilogue.slope = slope_.data();

  const int64_t items = p.groups * ((oc_padded_per_group_ + group_lanes - 1) / group_lanes) * a.tiles;
  const int64_t in_image = p.in_channels * a.in_plane, out_image = p.out_channels * a.out_plane;
  const bool threaded = pool && pool->size() > 1 && split_ != ConvSplit::Serial;
  const int64_t threads = threaded ? pool->size() : 1;
  const bool rows = threaded && indirect_splits_rows(split_, a.tiles, threads);
  for (int64_t n = 0; n < p.batch; ++n) {
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.residual = residual ? residual + n * out_image : nullptr;
    if (!threaded)
      kernel(a, 0, items);
    else if (!rows)
      pool->parallel_for(items, [&](int64_t begin, int64_t end) { kernel(a, begin, end); });
    else
      pool->parallel_for(threads, [&](int64_t begin, int64_t end) {
        for (int64_t band = begin; band < end; ++band) {
          const IndirectX86Args t = indirect_band(a, band, threads);
          kernel(t, 0, items / a.tiles * t.tiles);
        }
      });
  }
#else
  (void)x, (void)y, (void)residual, (void)pool;
  throw Error("IndirectConv2d: x86-64 and AArch64 only");
#endif
}

}  // namespace ninegrid
