#include "ops/qconv_select.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ops/conv_fast.h"  // the shape classes
#include "ops/conv_select.h"  // tuned_plan_entry

#if NINEGRID_X86_INT8_CONV
#include "kernels/x86/qconv_first_layer_x86.h"
#include "kernels/x86/qconv_indirect_x86.h"  // (and qconv_kernels_x86.h)
#include "kernels/x86/qconv_winograd_x86.h"
#endif
#if defined(__aarch64__)
#include "kernels/arm/qconv_kernels_arm.h"
#endif

namespace ninegrid {

namespace {

bool valid_geometry(const Conv2dParams& p) {
  return p.batch >= 1 && p.in_channels >= 1 && p.out_channels >= 1 && p.groups >= 1 &&
         p.in_channels % p.groups == 0 && p.out_channels % p.groups == 0 && p.in_h >= 1 && p.in_w >= 1 &&
         p.out_h >= 1 && p.out_w >= 1 && p.kernel_h >= 1 && p.kernel_w >= 1 && p.stride_h >= 1 && p.stride_w >= 1 &&
         p.dilation_h >= 1 && p.dilation_w >= 1 && p.pad_top >= 0 && p.pad_left >= 0;
}

bool blocks_fit(const ConvKey& k) {
  return k.in_block >= 1 && k.p.in_channels % k.in_block == 0 && k.out_block >= 1 &&
         k.p.out_channels % k.out_block == 0;
}

// The modes in which the rules choose the kernel themselves rather than being told one.
bool chooses_itself(QConvKernel kernel) { return kernel == QConvKernel::Auto || kernel == QConvKernel::NoIndirect; }

// Direct-family plans of one family: the pointwise kernel for 1x1 convs (a strided one only where its input is
// read unstaged, so that run() can gather its pixels, and not when the direct kernel is forced), else direct.
ConvKernel direct_family_kernel(const ConvKey& k, QConvKernel kernel, int64_t depth) {
  const Conv2dParams& p = k.p;
  if (conv_is_pointwise(p)) return ConvKernel::Pointwise;
  if (chooses_itself(kernel) && conv_is_strided_pointwise(p) &&
      qconv_reads_unstaged(k.in_block, p.in_channels_per_group(), depth))
    return ConvKernel::Pointwise;
  return ConvKernel::Direct;
}

#if NINEGRID_X86_INT8_CONV
// Where the AVX2 vpmaddwd pointwise kernel runs on widened inputs (avx2::qconv2d_pointwise_wide): one group,
// NCHW8c output and 64 or more output channels. The widening pass pays once per chunk of pixels for all the
// output blocks: from 64 channels on (4 pairs of blocks) it measured 3-15% faster than widening each
// channel pair per pair of blocks, below that about even (bench/REPORT.md, "int8 pointwise on widened
// inputs").
bool fits_wide_pointwise(const Conv2dParams& p, int64_t out_block) {
  constexpr int64_t kWideMinOutChannels = 64;
  return p.groups == 1 && out_block == 8 && p.out_channels >= kWideMinOutChannels;
}

// Whether the wide pointwise kernel computes a 1x1 conv at all (the tuner may time it below the rules' 64
// output channels): one group, NCHW8c output.
bool wide_pointwise_computes(const Conv2dParams& p, int64_t out_block) { return p.groups == 1 && out_block == 8; }

bool vnni_runs(Isa cap) { return runnable_isa(cap) >= Isa::Avx512 && cpu_features().avx512vnni; }

// Whether Auto runs a conv (not depthwise) on the indirect kernel rather than the direct one, whose vectors
// (VNNI: 16 lanes, AVX2: 8) hold one group's channels each. The indirect kernel's vectors have 8 lanes, each
// group padded to whole vectors, so it takes what the direct kernel cannot (groups of output channels that
// are not a multiple of its lanes, otherwise the reference's) and, under VNNI, the output channel counts
// that 8-lane vectors fill better than 16-lane ones (a remainder of 1 to 8 past a multiple of 16: RetinaFace's
// 3->8 first conv and its heads' 64->8/4/20 pointwise convs leave half or more of the 16 lanes idle), and,
// under VNNI, outputs in plain NCHW (a detection head's, read by a DequantizeLinear and a Reshape), which the
// indirect kernel stores four pixels per channel at a time where the 16-lane direct kernel's store scatters
// byte by byte. The AVX2 direct kernels store plain NCHW four pixels at a time too, and beat the indirect
// kernel on RetinaFace's heads in each of their forms (vpmaddubsw with or without rest vectors, and
// vpmaddwd: bench/REPORT.md, "int8 detection heads on the direct kernels"). Planes of fewer than 4 pixel
// tiles stay direct: a tile's pixels past the plane are computed and dropped.
bool prefer_indirect(const Conv2dParams& p, bool vnni, bool direct_fits, int64_t out_block) {
  const int64_t pixels = vnni ? vnni::kQIndirectPixels : avx2::kQIndirectPixels;
  if (p.out_h * p.out_w < 4 * pixels) return !direct_fits;
  if (!direct_fits || (vnni && out_block == 1)) return true;
  const int64_t rest = p.out_channels_per_group() % vnni::kLanes;
  return vnni && rest >= 1 && rest <= vnni::kQIndirectLanes;
}

// Whether the first-layer kernel (kernels/x86/qconv_first_layer_x86.h) runs this conv: a plain image of up to
// 4 channels, one group, stride 1 or 2 along the width (dilation 1), kernels up to 11 x 11, an output in
// blocks of 8 or plain (vnni also 16).
bool first_layer_fits(const Conv2dParams& p, int64_t in_block, int64_t out_block, bool vnni) {
  return in_block == 1 && p.groups == 1 && p.in_channels <= kQFirstLayerMaxChannels && p.dilation_w == 1 &&
         (p.stride_w == 1 || p.stride_w == 2) && p.kernel_h <= kQFirstLayerMaxKernel &&
         p.kernel_w <= kQFirstLayerMaxKernel && (out_block == 1 || out_block == 8 || (vnni && out_block == 16));
}

// Whether Auto gives a conv that first_layer_fits to the first-layer kernel. Measured (bench/REPORT.md, "The
// int8 first-layer kernel"): under AVX2 it beats the direct and indirect kernels on RetinaFace's 3->8,
// MobileNetV2's 3->32 and ResNet's 3->64 7x7 first convs; under VNNI on the 3->8 (1.6x the indirect
// kernel), while with 32 output channels it ties with the direct kernel, whose 16-lane vectors are then
// full, and with 64 loses to it: up to 16 output channels only.
bool prefer_first_layer(const Conv2dParams& p, bool vnni) { return !vnni || p.out_channels <= 16; }

// Whether the int8 Winograd kernel (kernels/x86/qconv_winograd_x86.h) computes this conv: 3x3, stride 1,
// dilation 1, one group, few enough input channels for its int16 arithmetic to be exact.
bool winograd_fits(const Conv2dParams& p) {
  return p.groups == 1 && p.kernel_h == 3 && p.kernel_w == 3 && p.stride_h == 1 && p.stride_w == 1 &&
         p.dilation_h == 1 && p.dilation_w == 1 && qwinograd_f2x3_exact(p.in_channels);
}

// Whether Auto runs a conv that winograd_fits on it: without VNNI, 16-channel loads (input blocks of 8 or a
// multiple of 16, whole groups of 16 channels), at least 16 output channels (two full vectors per block),
// an output in blocks of 8 or more (plain NCHW outputs stay on the direct kernels, which store them four
// pixels at a time; the Winograd kernel would scatter them byte by byte, not measured) and at least 25 tiles
// (9 x 9 or 10 x 10 outputs and more). Its transformed weights are 3.6 times the int8 weights' bytes and each
// is read once per strip of tiles: on 7 x 7 planes (16 tiles, 64 computed outputs for 49) the direct kernels
// were faster, on 10 x 10 and larger ones slower (bench/REPORT.md, "int8 Winograd F(2,3) on AVX2").
bool prefer_winograd(const Conv2dParams& p, int64_t in_block, int64_t out_block, bool vnni) {
  const int64_t tiles = ((p.out_h + 1) / 2) * ((p.out_w + 1) / 2);
  return !vnni && winograd_fits(p) && p.in_channels % kQWinogradChannelGroup == 0 &&
         (in_block == kQWinogradChannelGroup / 2 || in_block % kQWinogradChannelGroup == 0) &&
         out_block % (kQWinogradOcBlock / 2) == 0 && p.out_channels >= kQWinogradOcBlock && tiles >= 25;
}

bool groups_fit(const Conv2dParams& p, int64_t lanes) { return p.groups == 1 || p.out_channels_per_group() % lanes == 0; }

// The AVX2 direct and pointwise kernels' form by the rules. vpmaddubsw (four input channels per multiply-add)
// where few enough weight vectors need a rest vector; else vpmaddwd, two channels per multiply-add. A rest
// vector costs about what a packed one does; the vpmaddwd direct kernels take 1.4-1.8x as long as the
// vpmaddubsw ones, and 1x1 convs were measured layer by layer at several bounds: for 1x1 convs of the
// pointwise shapes, strided or not (whichever kernel then runs them), up to 1/5 of the vectors with a rest
// where vpmaddwd would run them on widened inputs, 3/10 for the others; half for the other convs
// (bench/REPORT.md, "int8 pointwise on vpmaddwd" and "int8 pointwise on widened inputs"). Widened inputs:
// fits_wide_pointwise, and for a strided conv an input that the vpmaddwd kernels read unstaged, so that
// run() gathers its pixels (a forced Direct, which runs the direct kernel on them, keeps that bound).
// Rest vectors name their tap in int16: larger kernels take vpmaddwd.
QConvForm rule_avx2_form(const ConvKey& k) {
  const Conv2dParams& p = k.p;
  if (p.kernel_h > INT16_MAX || p.kernel_w > INT16_MAX) return QConvForm::Words;
  const bool one_by_one = conv_is_pointwise(p) || conv_is_strided_pointwise(p);
  const bool gathered = qconv_reads_unstaged(k.in_block, p.in_channels_per_group(), avx2::kInt8Depth);
  const bool widened = fits_wide_pointwise(p, k.out_block) && (conv_is_pointwise(p) || gathered);
  const int most_tenths = !one_by_one ? 5 : widened ? 2 : 3;
  return std::max(k.w7_rest_tenths, 0) > most_tenths ? QConvForm::Words : QConvForm::Bytes;
}
#endif

}  // namespace

bool qconv_reads_unstaged(int64_t in_block, int64_t icpg, int64_t depth) {
#if defined(__aarch64__)
  const bool block_readable = in_block == 4;
#else
  const bool block_readable = in_block == 16 || in_block == 8 || in_block == 4;
#endif
  return block_readable && in_block % depth == 0 && icpg % depth == 0;
}

int64_t qconv_plan_depth(const ConvPlan& plan) {
#if NINEGRID_X86_INT8_CONV
  if (plan.isa == Isa::Avx2)
    return plan.int8_form == QConvForm::Bytes ? avx2::kInt8DepthW7 : avx2::kInt8Depth;
  return vnni::kDepth;
#elif defined(__aarch64__)
  return plan.isa == Isa::Dotprod ? dotprod::kInt8Depth : neon::kInt8Depth;
#else
  (void)plan;
  return 4;
#endif
}

namespace {
// out[i] |= 1 where |a[i] + b[i]| > 128, for kChunk bytes, in byte lanes of the baseline's 16-byte
// vectors (GCC's vector extensions): only two weights of one sign can pass the bound, and for magnitudes m,
// n in [1, 128] (as unsigned bytes: -(-128) is 128) m + n > 128 is m > 128 - n, which never wraps. A byte
// loop took about 0.4 ns a weight (4-5 ms of an int8 ResNet-18's load); widening to 16 bits took longer.
constexpr int64_t kChunk = 16;
using I8x16 = int8_t __attribute__((vector_size(16)));
using U8x16 = uint8_t __attribute__((vector_size(16)));
void or_sums_past_128(const int8_t* a, const int8_t* b, uint8_t* out) {
  I8x16 x, y;
  std::memcpy(&x, a, sizeof x);
  std::memcpy(&y, b, sizeof y);
  const U8x16 ux = U8x16(x), uy = U8x16(y), nx = U8x16{} - ux, ny = U8x16{} - uy;
  const U8x16 bound = U8x16{} + 128;
  const I8x16 positive = (x > 0) & (y > 0) & I8x16(ux > bound - uy);
  const I8x16 negative = (x < 0) & (y < 0) & I8x16(nx > bound - ny);
  I8x16 bits;
  std::memcpy(&bits, out, sizeof bits);
  bits |= (positive | negative) & 1;
  std::memcpy(out, &bits, sizeof bits);
}
}  // namespace

int qconv_w7_rest_tenths(const Conv2dParams& p, const int8_t* w) {
  // Vectors per group: ceil(ocpg / 8) blocks x ceil(icpg / 4) steps x taps; a vector needs a rest when one of
  // its 8 output channels has a pair (4s, 4s + 1) or (4s + 2, 4s + 3) summing past 128 in magnitude.
  constexpr int64_t kLanes = 8, kStep = 4;
  const int64_t icpg = p.in_channels_per_group(), ocpg = p.out_channels_per_group();
  const int64_t taps = p.kernel_h * p.kernel_w, steps = (icpg + kStep - 1) / kStep;
  const int64_t blocks = (ocpg + kLanes - 1) / kLanes;
  // Per block of filters, first whether each weight and the one a channel later at the same tap sum past the
  // bound in any of the block's filters (contiguous vector loops: a filter is [icpg][taps]), then the even
  // channels' results (the pairs) gathered into their vectors' flags.
  const int64_t row = icpg * taps;
  std::vector<uint8_t> beyond(static_cast<size_t>(steps * taps)), past(static_cast<size_t>(row));
  int64_t vectors = 0, with_rest = 0;
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t b = 0; b < blocks; ++b) {
      std::fill(past.begin(), past.end(), 0);
      for (int64_t oc = b * kLanes; oc < std::min(ocpg, (b + 1) * kLanes); ++oc) {
        const int8_t* f = w + (g * ocpg + oc) * row;
        uint8_t* pt = past.data();
        int64_t j = 0;
        for (; j + kChunk + taps <= row; j += kChunk) or_sums_past_128(f + j, f + j + taps, pt + j);
        for (; j + taps < row; ++j) {
          const int sum = int(f[j]) + int(f[j + taps]);
          pt[j] |= static_cast<uint8_t>((sum > 128) | (sum < -128));
        }
      }
      std::fill(beyond.begin(), beyond.end(), 0);
      for (int64_t ic = 0; ic + 1 < icpg; ic += 2) {
        uint8_t* flag = beyond.data() + (ic / kStep) * taps;
        const uint8_t* pair = past.data() + ic * taps;
        for (int64_t t = 0; t < taps; ++t) flag[t] |= pair[t];
      }
      vectors += steps * taps;
      for (uint8_t f : beyond) with_rest += f;
    }
  if (with_rest == 0 || vectors == 0) return 0;
  return static_cast<int>((10 * with_rest + vectors - 1) / vectors);
}

bool qconv_needs_rest_class(const Conv2dParams& p, Isa isa) {
#if NINEGRID_X86_INT8_CONV
  // Only where AVX2's direct kernels take the groups (whole 8-lane vectors); with VNNI the direct family runs
  // vpdpbusd, except for groups whose output channels fill 8 lanes but not 16 (then AVX2's direct kernel,
  // which the rules take under NoIndirect).
  const Isa runs = runnable_isa(isa);
  return runs >= Isa::Avx2 && !is_arm_isa(runs) && valid_geometry(p) && !conv_is_depthwise(p) &&
         groups_fit(p, avx2::kLanes) && (!vnni_runs(isa) || !groups_fit(p, vnni::kLanes));
#else
  (void)p, (void)isa;
  return false;
#endif
}

ConvKey qconv_key(const Conv2dParams& p, bool residual, int64_t in_block, int64_t out_block,
                  const ExecSettings& settings, const int8_t* w) {
  ConvKey k;
  k.p = p;
  k.residual = residual;
  k.in_block = in_block, k.out_block = out_block;
  k.isa = settings.isa;
  k.threads = settings.threads;
  k.int8 = true;
  k.w7_rest_tenths = w && qconv_needs_rest_class(p, settings.isa) ? qconv_w7_rest_tenths(p, w) : -1;
  return k;
}

ConvPlan qconv_forced_plan(const ConvKey& key, QConvKernel kernel, bool allow_winograd) {
  const Conv2dParams& p = key.p;
  ConvPlan plan;
  plan.in_block = key.in_block, plan.out_block = key.out_block;
  const ConvPlan none;
  const Isa isa = runnable_isa(key.isa);
  if (!valid_geometry(p) || !blocks_fit(key)) return none;
#if NINEGRID_X86_INT8_CONV
  if (isa == Isa::Ref || is_arm_isa(isa)) return none;
  const bool vnni = vnni_runs(key.isa);
  // The first-layer kernel fuses no residual: forced on a conv it takes that has one, the choice Auto makes
  // without that kernel.
  if (kernel == QConvKernel::FirstLayer && key.residual) {
    if (conv_is_depthwise(p) || !first_layer_fits(p, key.in_block, key.out_block, vnni)) return none;
    kernel = QConvKernel::Auto;
  }
  plan.isa = vnni ? Isa::Avx512 : Isa::Avx2;
  if (conv_is_depthwise(p)) {
    if (kernel == QConvKernel::Indirect || kernel == QConvKernel::FirstLayer || kernel == QConvKernel::Winograd)
      return none;
    plan.kernel = ConvKernel::Depthwise;
    return plan;
  }
  if (kernel == QConvKernel::FirstLayer || (chooses_itself(kernel) && !key.residual)) {
    if (first_layer_fits(p, key.in_block, key.out_block, vnni) &&
        (kernel == QConvKernel::FirstLayer || prefer_first_layer(p, vnni))) {
      plan.kernel = ConvKernel::FirstLayer;
      return plan;
    }
    if (kernel == QConvKernel::FirstLayer) return none;
  }
  if (kernel == QConvKernel::Winograd ||
      (chooses_itself(kernel) && allow_winograd && prefer_winograd(p, key.in_block, key.out_block, vnni))) {
    if (!winograd_fits(p)) return none;
    plan.kernel = ConvKernel::Winograd, plan.isa = Isa::Avx2, plan.winograd_tile = 2;
    return plan;
  }
  const bool direct_fits = groups_fit(p, vnni ? vnni::kLanes : avx2::kLanes);
  if (kernel == QConvKernel::Indirect ||
      (kernel == QConvKernel::Auto && prefer_indirect(p, vnni, direct_fits, key.out_block))) {
    plan.kernel = ConvKernel::Indirect;
    return plan;
  }
  if (vnni && groups_fit(p, vnni::kLanes)) {
    plan.isa = Isa::Avx512;
  } else if (groups_fit(p, avx2::kLanes)) {
    plan.isa = Isa::Avx2;
    plan.int8_form = rule_avx2_form(key);
  } else {
    return none;
  }
  plan.kernel = direct_family_kernel(key, kernel, qconv_plan_depth(plan));
  if (plan.int8_form == QConvForm::Words && plan.kernel == ConvKernel::Pointwise &&
      fits_wide_pointwise(p, key.out_block))
    plan.int8_form = QConvForm::Wide;
  return plan;
#elif defined(__aarch64__)
  (void)allow_winograd;
  if (!is_arm_isa(isa) || kernel == QConvKernel::Indirect || kernel == QConvKernel::FirstLayer ||
      kernel == QConvKernel::Winograd)
    return none;
  plan.isa = isa == Isa::Dotprod ? Isa::Dotprod : Isa::Neon;
  if (conv_is_depthwise(p)) {
    plan.kernel = ConvKernel::Depthwise;
    return plan;
  }
  if (p.groups != 1 && p.out_channels_per_group() % dotprod::kInt8Lanes != 0) return none;
  plan.kernel = direct_family_kernel(key, kernel, qconv_plan_depth(plan));
  return plan;
#else
  (void)kernel, (void)allow_winograd, (void)isa;
  return none;
#endif
}

ConvPlan rule_qconv_plan(const ConvKey& key, const ExecSettings& settings) {
  QConvKernel kernel = QConvKernel::Auto;
  if (!(settings.conv_algorithms & kConvIndirect)) kernel = QConvKernel::NoIndirect;
  else if (!(settings.conv_algorithms & kConvDirect)) kernel = QConvKernel::Indirect;
  const bool winograd = (settings.conv_algorithms & kConvWinograd) != 0;
  if (settings.isa == Isa::Ref) return ConvPlan();
  if (kernel == QConvKernel::Indirect) {
    const ConvPlan plan = qconv_forced_plan(key, kernel, winograd);
    if (plan.kernel != ConvKernel::Ref) return plan;
    kernel = QConvKernel::Auto;
  }
  return qconv_forced_plan(key, kernel, winograd);
}

namespace {
// Whether a direct or pointwise plan names the kernel its conv runs on: a plain 1x1 conv the pointwise
// kernel; a strided one either (gathered, where its input is read unstaged at the plan's depth, or not).
bool direct_family_matches(const ConvPlan& plan, const ConvKey& key) {
  const ConvKernel family = direct_family_kernel(key, QConvKernel::Auto, qconv_plan_depth(plan));
  return plan.kernel == family || (plan.kernel == ConvKernel::Direct && conv_is_strided_pointwise(key.p));
}
}  // namespace

bool qconv_plan_computes(const ConvPlan& plan, const Conv2dParams& p, bool residual) {
  ConvKey key;  // the plan's blocks, for the helpers above
  key.p = p;
  key.in_block = plan.in_block, key.out_block = plan.out_block;
  key.residual = residual;
  if (!valid_geometry(p) || !blocks_fit(key)) return false;
  if (plan.oc_tile != 0 || plan.strassen_levels != 0) return false;
  if (plan.winograd_tile != (plan.kernel == ConvKernel::Winograd ? 2 : 0)) return false;
  const bool direct_family = plan.kernel == ConvKernel::Direct || plan.kernel == ConvKernel::Pointwise ||
                             plan.kernel == ConvKernel::Depthwise;
  const bool indirect = plan.kernel == ConvKernel::Indirect;
  if (plan.split != ConvSplit::Auto && plan.split != ConvSplit::Serial &&
      !(plan.split == ConvSplit::Rows && (direct_family || indirect)) &&
      !(plan.split == ConvSplit::Channels && indirect))
    return false;
  const bool depthwise = conv_is_depthwise(p);
  if ((plan.kernel == ConvKernel::Depthwise) != depthwise) return false;
  // The CPU runs the plan's kernels (runnable_isa caps at what it has).
  if (plan.isa == Isa::Ref || runnable_isa(plan.isa) != plan.isa) return false;
#if NINEGRID_X86_INT8_CONV
  if (is_arm_isa(plan.isa)) return false;
  const bool vnni = plan.isa == Isa::Avx512;
  if (vnni && !cpu_features().avx512vnni) return false;
  const bool avx2_direct = plan.isa == Isa::Avx2 && (plan.kernel == ConvKernel::Direct || plan.kernel == ConvKernel::Pointwise);
  if (avx2_direct ? plan.int8_form == QConvForm::None : plan.int8_form != QConvForm::None) return false;
  switch (plan.kernel) {
    case ConvKernel::Depthwise: return true;
    case ConvKernel::FirstLayer: return !residual && first_layer_fits(p, plan.in_block, plan.out_block, vnni);
    case ConvKernel::Winograd: return plan.isa == Isa::Avx2 && winograd_fits(p);
    case ConvKernel::Indirect: return true;
    case ConvKernel::Direct:
    case ConvKernel::Pointwise: {
      if (!groups_fit(p, vnni ? vnni::kLanes : avx2::kLanes)) return false;
      if (plan.int8_form == QConvForm::Bytes && (p.kernel_h > INT16_MAX || p.kernel_w > INT16_MAX)) return false;
      if (plan.int8_form == QConvForm::Wide &&
          (plan.kernel != ConvKernel::Pointwise || !wide_pointwise_computes(p, plan.out_block)))
        return false;
      return direct_family_matches(plan, key);
    }
    default: return false;
  }
#elif defined(__aarch64__)
  if (!is_arm_isa(plan.isa) || plan.int8_form != QConvForm::None) return false;
  if (depthwise) return true;
  if (plan.kernel != ConvKernel::Direct && plan.kernel != ConvKernel::Pointwise) return false;
  if (p.groups != 1 && p.out_channels_per_group() % dotprod::kInt8Lanes != 0) return false;
  return direct_family_matches(plan, key);
#else
  (void)direct_family, (void)direct_family_matches;
  return false;
#endif
}

bool qconv_plan_fits(const ConvPlan& plan, const ConvKey& key, const ExecSettings& settings) {
  if (!key.int8 || settings.isa == Isa::Ref) return false;
  if (plan.in_block != key.in_block || plan.out_block != key.out_block) return false;
  // The algorithms the settings allow, as the rules apply them (rule_qconv_plan): Indirect and Winograd only
  // when named; the direct family always (the fallback), except that "indirect" without "direct" asks for
  // the indirect kernel wherever it computes the conv.
  const unsigned allowed = settings.conv_algorithms;
  if (plan.kernel == ConvKernel::Indirect && !(allowed & kConvIndirect)) return false;
  if (plan.kernel == ConvKernel::Winograd && !(allowed & kConvWinograd)) return false;
  if ((plan.kernel == ConvKernel::Direct || plan.kernel == ConvKernel::Pointwise ||
       plan.kernel == ConvKernel::FirstLayer) &&
      !(allowed & kConvDirect) && (allowed & kConvIndirect) &&
      qconv_forced_plan(key, QConvKernel::Indirect).kernel != ConvKernel::Ref)
    return false;
  // Within the key's ISA cap (what the CPU runs is qconv_plan_computes's).
  const Isa cap = runnable_isa(key.isa);
#if NINEGRID_X86_INT8_CONV
  if (cap == Isa::Ref || is_arm_isa(cap)) return false;
  if (plan.isa == Isa::Avx512 && !vnni_runs(key.isa)) return false;
#elif defined(__aarch64__)
  if (!is_arm_isa(cap) || (plan.isa == Isa::Dotprod && cap != Isa::Dotprod)) return false;
#else
  (void)cap;
#endif
  // The byte kernels' cost is in the key only where its weight class is.
  if (plan.int8_form == QConvForm::Bytes && key.w7_rest_tenths < 0) return false;
  return qconv_plan_computes(plan, key.p, key.residual);
}

std::vector<ConvPlan> qconv_plan_candidates(const ConvKey& key, const ExecSettings& settings) {
  std::vector<ConvPlan> out;
  auto add = [&](ConvPlan plan) {
    const ConvSplit splits[] = {ConvSplit::Auto, ConvSplit::Serial, ConvSplit::Rows, ConvSplit::Channels};
    for (ConvSplit s : splits) {
      if (s != ConvSplit::Auto && settings.threads <= 1) break;
      plan.split = s;
      if (qconv_plan_fits(plan, key, settings) && std::find(out.begin(), out.end(), plan) == out.end())
        out.push_back(plan);
    }
  };
  const ConvKernel kernels[] = {ConvKernel::Depthwise, ConvKernel::FirstLayer, ConvKernel::Winograd,
                                ConvKernel::Indirect,  ConvKernel::Direct,     ConvKernel::Pointwise};
  const Isa isas[] = {Isa::Avx512, Isa::Avx2, Isa::Dotprod, Isa::Neon};
  const QConvForm forms[] = {QConvForm::None, QConvForm::Bytes, QConvForm::Words, QConvForm::Wide};
  for (ConvKernel k : kernels)
    for (Isa isa : isas)
      for (QConvForm f : forms) {
        ConvPlan plan;
        plan.kernel = k, plan.isa = isa, plan.int8_form = f;
        plan.in_block = key.in_block, plan.out_block = key.out_block;
        plan.winograd_tile = k == ConvKernel::Winograd ? 2 : 0;
        add(plan);
      }
  return out;
}

ConvPlan choose_qconv_plan(const ConvKey& key, const ExecSettings& settings, bool* tuned_out) {
  const ConvPlan* tuned = tuned_plan_entry(key, settings);
  const bool use = tuned && qconv_plan_fits(*tuned, key, settings);
  if (tuned_out) *tuned_out = use;
  return use ? *tuned : rule_qconv_plan(key, settings);
}

}  // namespace ninegrid
