#include "ops/qconv_fast.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/thread_pool.h"
#include "core/thread_scratch.h"
#include "kernels/gather_strided.h"
#include "kernels/pack_weights.h"
#include "kernels/qpack_depthwise.h"
#include "kernels/qpack_winograd.h"
#include "ninegrid/tensor.h"
#include "ops/conv_fast.h"  // the shape classes
#include "ops/conv_indirect.h"  // the indirect convs' split
#include "ops/qconv_select.h"

#if defined(__aarch64__)
#include "kernels/arm/qconv_kernels_arm.h"
#endif

namespace ninegrid {

namespace {

// The requantisation constants of q for the x86 kernels (the tensors come per run); multiplier: `channels`
// values, padding included (zeros).
X86Requantize x86_requantize(const Requantization& q, const float* multiplier, int64_t channels) {
  X86Requantize r;
  r.multiplier = multiplier;
  r.out_zero_point = q.out_zero_point;
  r.qmin = q.qmin, r.qmax = q.qmax;
  r.residual_zero_point = q.residual_zero_point;
  r.residual_multiplier = q.residual_multiplier;
  r.residual_add = q.residual_add;
  r.conv_is_first = q.conv_is_first;
  r.add.a_zero_point = q.add.a_zero_point, r.add.b_zero_point = q.add.b_zero_point;
  r.add.out_zero_point = q.add.out_zero_point;
  r.add.a_multiplier = q.add.a_multiplier, r.add.b_multiplier = q.add.b_multiplier;
  r.add.qmin = q.add.qmin, r.add.qmax = q.add.qmax;
  // The packed store's bound, checked once for the layer (requantize_packed_block checks it per block).
  bool fits = packed_store_residual_fits(q.residual_add, q.residual_multiplier);
  for (int64_t c = 0; c < channels; ++c) fits = fits && packed_store_multiplier_fits(multiplier[c]);
  r.packed_store = fits;
  return r;
}

// What the kernels subtract from every input byte before multiplying: 0 on x86 (vpdpbusd and vpmaddwd take
// the uint8 values), 128 on AArch64 (signed byte products: kernels/arm/qconv_kernels_arm.h). The prepared
// sums use the zero point of the values the kernels multiply, x_zero_point minus this.
#if defined(__aarch64__)
constexpr int32_t kInputShift = kArmInputZeroPointShift;
#else
constexpr int32_t kInputShift = 0;
#endif

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Copies one tap of one filter into the packed weights, input channel ic from src[ic * src_stride] to
// dst[(ic / D) * dst_stride + ic % D], and returns the sum of the copied values. D, the channels of one
// multiply-add step, is a template argument so that a step's copies unroll: with D read at run time, a
// bounds test per byte and a memory-carried sum per tap, packing took most of an int8 ResNet-50's load.
template <int D>
int64_t pack_filter_tap(const int8_t* src, int64_t src_stride, int64_t channels, int8_t* dst, int64_t dst_stride) {
  int64_t sum = 0, ic = 0;
  for (; ic + D <= channels; ic += D, src += D * src_stride, dst += dst_stride)
    for (int d = 0; d < D; ++d) {
      const int8_t v = src[d * src_stride];
      dst[d] = v;
      sum += v;
    }
  for (int d = 0; ic < channels; ++d, ++ic, src += src_stride) {
    dst[d] = *src;
    sum += *src;
  }
  return sum;
}

// The kernels' depths: 2 (vpmaddwd, smull + sadalp) and 4 (vpdpbusd, vpmaddubsw pairs, sdot).
int64_t pack_filter_tap(int64_t depth, const int8_t* src, int64_t src_stride, int64_t channels, int8_t* dst,
                        int64_t dst_stride) {
  if (depth == 2) return pack_filter_tap<2>(src, src_stride, channels, dst, dst_stride);
  if (depth == 4) return pack_filter_tap<4>(src, src_stride, channels, dst, dst_stride);
  throw Error("FastQConv2d: no weight packing for " + std::to_string(depth) + " input channels per step");
}

#if NINEGRID_X86_INT8_CONV
// The AVX2 vpmaddubsw kernels (avx2::qconv2d_direct_w7) multiply-add the packed bytes (2j, 2j + 1) of a weight
// vector ([8 output channels][4 input channels], packed at depth 4) as a pair, input channels (2j, 2j + 1) of
// a group at one tap, and a pair of the same sign whose magnitudes sum past 128 can saturate the
// instruction's 16-bit sum (255 x 129 > 32767). Pairs of opposite signs or with a zero have |a + b| <= 128, so
// the test is |a + b| <= 128 for every pair: branch-free, vectorised (an early exit on random signs
// mispredicted enough to add 60-130 ms to ResNet-50's int8 load of about 130).
// Each pair is read as one little-endian int16 whose bytes the shifts sign-extend: 8 pairs per 16-byte
// vector (the baseline's width) in a few instructions, where loops over the bytes took a tenth of
// ResNet-50's int8 load. The mask of a pair beyond the bound: 0xFFFF, both its bytes set.
constexpr int64_t kW7VectorBytes = 32;
using W7Pairs = int16_t __attribute__((vector_size(16)));
using W7Bits = uint16_t __attribute__((vector_size(16)));
using W7Bytes = int8_t __attribute__((vector_size(16)));
W7Pairs pairs_beyond_w7(const int8_t* v) {
  W7Bits x;
  std::memcpy(&x, v, sizeof x);
  const W7Pairs sum = (W7Pairs(x << 8) >> 8) + (W7Pairs(x) >> 8);
  return (sum > 128) | (sum < -128);
}

bool vector_fits_w7(const int8_t* v) {
  const W7Pairs beyond = pairs_beyond_w7(v) | pairs_beyond_w7(v + 16);
  uint64_t words[2];
  std::memcpy(words, &beyond, sizeof words);
  return (words[0] | words[1]) == 0;
}

// The split of split_w7_block (below) on one packed vector: its pairs beyond the bound keep
// w - w / 2, and `rest` gets w / 2 there (rounded toward zero: (w - (w >> 7)) >> 1) and zeros elsewhere.
void split_vector_w7(int8_t* packed, int8_t* rest) {
  for (int half = 0; half < 2; ++half) {
    const W7Bytes mask = W7Bytes(pairs_beyond_w7(packed + 16 * half));
    W7Bytes w;
    std::memcpy(&w, packed + 16 * half, sizeof w);
    const W7Bytes r = ((w - (w >> 7)) >> 1) & mask;
    const W7Bytes kept = w - r;
    std::memcpy(rest + 16 * half, &r, sizeof r);
    std::memcpy(packed + 16 * half, &kept, sizeof kept);
  }
}

#endif

}  // namespace

namespace {
// The key FastQConv2d's forced-family constructor plans for: the conv's own, under the ISA cap `isa`.
ConvKey forced_key(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, bool residual,
                   const int8_t* w) {
  ExecSettings settings;
  settings.isa = isa;
  return qconv_key(p, residual, in_block, out_block, settings, w);
}

ConvPlan forced_plan(const Conv2dParams& p, const int8_t* w, const Requantization& q, Isa isa, int64_t in_block,
                     int64_t out_block, QConvKernel kernel, bool allow_winograd) {
  const bool residual = q.residual_add || q.residual_multiplier != 0.f;
  const ConvPlan plan =
      qconv_forced_plan(forced_key(p, in_block, out_block, isa, residual, w), kernel, allow_winograd);
  if (plan.kernel == ConvKernel::Ref)
    throw Error("FastQConv2d: no fast int8 kernel for this convolution (in block " + std::to_string(in_block) +
                ", out block " + std::to_string(out_block) + ", isa " + isa_name(isa) + ")");
  return plan;
}
}  // namespace

bool FastQConv2d::supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                           QConvKernel kernel, bool allow_winograd) {
  return qconv_forced_plan(forced_key(p, in_block, out_block, isa, false, nullptr), kernel, allow_winograd).kernel !=
         ConvKernel::Ref;
}

FastQConv2d::FastQConv2d(const Conv2dParams& p, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                         Isa isa, int64_t in_block, int64_t out_block, QConvKernel kernel, bool allow_winograd)
    : FastQConv2d(p, w, q, x_zero_point, forced_plan(p, w, q, isa, in_block, out_block, kernel, allow_winograd)) {}

FastQConv2d::FastQConv2d(const Conv2dParams& p, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                         const ConvPlan& plan)
    : params_(p), in_block_(plan.in_block), split_(plan.split) {
  const int64_t in_block = plan.in_block, out_block = plan.out_block;
  const bool residual = q.residual_add || q.residual_multiplier != 0.f;
  // A plan no kernel computes on this CPU would crash or give wrong bytes (a cache entry is refused before it
  // gets here, by qconv_plan_fits; tests and benchmarks build plans directly). This is the one check: the
  // reference kernel, a first-layer kernel with a residual, a pointwise kernel on a conv it does not take,
  // the wide form outside its constraints, a family without kernels in this build all fail it.
  if (!qconv_plan_computes(plan, p, residual))
    throw Error("FastQConv2d: the plan " + describe_plan(plan) + " does not compute this conv on this CPU");
#if NINEGRID_X86_INT8_CONV
  const bool vnni = plan.isa == Isa::Avx512;
#else
  const bool vnni = plan.isa == Isa::Dotprod;
#endif
  switch (plan.kernel) {
    case ConvKernel::Depthwise:
      prepare_depthwise(vnni, w, q, x_zero_point, in_block, out_block);
      return;
#if NINEGRID_X86_INT8_CONV
    case ConvKernel::Indirect:
      lanes_ = vnni ? vnni::kQIndirectLanes : avx2::kQIndirectLanes;
      depth_ = vnni ? vnni::kDepth : avx2::kInt8Depth;
      prepare_indirect(vnni, w, q, x_zero_point, in_block, out_block);
      return;
    case ConvKernel::FirstLayer:
      lanes_ = vnni ? vnni::kQFirstLayerLanes : avx2::kQFirstLayerLanes;
      depth_ = vnni ? vnni::kQFirstLayerDepth : avx2::kQFirstLayerDepth;
      prepare_first_layer(vnni, w, q, x_zero_point, out_block);
      return;
    case ConvKernel::Winograd:
      lanes_ = avx2::kLanes, depth_ = avx2::kInt8Depth;
      prepare_winograd(w, q, x_zero_point, in_block, out_block);
      return;
#endif
    case ConvKernel::Direct:
    case ConvKernel::Pointwise: break;
    default: throw Error("FastQConv2d: no int8 kernel for the plan " + describe_plan(plan));
  }
  depth_ = qconv_plan_depth(plan);
#if NINEGRID_X86_INT8_CONV
  lanes_ = vnni ? vnni::kLanes : avx2::kLanes;
  // Without VNNI, the plan's form (ops/qconv_select.cpp, rule_avx2_form, says which the rules take): bytes,
  // four input channels per vpmaddubsw, with each weight vector whose pairs pass its bound split into a
  // packed and a rest vector (split_w7_block; none split: the w7 kernels, else the w7r ones), or words, two
  // channels per vpmaddwd, widened once per chunk in the wide form.
  enum class AvxForm { Vnni, W7, W7Rest, Words } form =
      vnni ? AvxForm::Vnni : plan.int8_form == QConvForm::Bytes ? AvxForm::W7 : AvxForm::Words;
  plan_staging(in_block);
  pack_direct_weights(w, q, x_zero_point, /*split_w7=*/form == AvxForm::W7);
  if (form == AvxForm::W7 && !rest_.empty()) form = AvxForm::W7Rest;
  if (form != AvxForm::W7Rest) rest_begin_.clear();
  rest_.shrink_to_fit();
#else
#if defined(__aarch64__)
  lanes_ = dotprod::kInt8Lanes;
#endif
  plan_staging(in_block);
  pack_direct_weights(w, q, x_zero_point, /*split_w7=*/false);
#endif
  // A strided 1x1 conv on the pointwise kernel (ResNet's downsampling shortcuts) runs over its input's pixels
  // gathered into an output-sized plane first (run()), as the float conv does: the direct kernel's tiles
  // read them a stride apart, row by row, and ran these layers at about 60% of the pointwise kernel's rate
  // (bench/REPORT.md, "Strided 1x1 convs on the pointwise kernel").
  subsample_input_ = plan.kernel == ConvKernel::Pointwise && conv_is_strided_pointwise(p);
  const bool pointwise = conv_is_pointwise(p) || subsample_input_;
  [[maybe_unused]] auto name = [&](const char* direct, const char* pointwise_name, const char* strided) {
    return subsample_input_ ? strided : pointwise ? pointwise_name : direct;
  };
#if NINEGRID_X86_INT8_CONV
  if (form == AvxForm::Vnni) {
    kernel_ = pointwise ? vnni::qconv2d_pointwise : vnni::qconv2d_direct;
    blocks_per_tile_ = vnni::kOcBlocksPerTile;
    algorithm_name_ = name("int8-vnni-direct", "int8-vnni-pointwise", "int8-vnni-pointwise-strided");
  } else if (form == AvxForm::W7) {
    kernel_ = pointwise ? avx2::qconv2d_pointwise_w7 : avx2::qconv2d_direct_w7;
    blocks_per_tile_ = avx2::kOcBlocksPerTile;
    algorithm_name_ = name("int8-avx2-w7-direct", "int8-avx2-w7-pointwise", "int8-avx2-w7-pointwise-strided");
  } else if (form == AvxForm::W7Rest) {
    kernel_ = pointwise ? avx2::qconv2d_pointwise_w7r : avx2::qconv2d_direct_w7r;
    blocks_per_tile_ = avx2::kOcBlocksPerTile;
    algorithm_name_ =
        name("int8-avx2-w7r-direct", "int8-avx2-w7r-pointwise", "int8-avx2-w7r-pointwise-strided");
  } else {
    kernel_ = pointwise ? avx2::qconv2d_pointwise : avx2::qconv2d_direct;
    blocks_per_tile_ = avx2::kOcBlocksPerTile;
    algorithm_name_ = name("int8-avx2-direct", "int8-avx2-pointwise", "int8-avx2-pointwise-strided");
  }
#elif defined(__aarch64__)
  if (vnni) {
    kernel_ = pointwise ? dotprod::qconv2d_pointwise : dotprod::qconv2d_direct;
    blocks_per_tile_ = dotprod::kInt8OcBlocksPerTile;
    algorithm_name_ = name("int8-dotprod-direct", "int8-dotprod-pointwise", "int8-dotprod-pointwise-strided");
  } else {
    kernel_ = pointwise ? neon::qconv2d_pointwise : neon::qconv2d_direct;
    blocks_per_tile_ = neon::kInt8OcBlocksPerTile;
    algorithm_name_ = name("int8-neon-direct", "int8-neon-pointwise", "int8-neon-pointwise-strided");
  }
#endif
  const int64_t kernel_channels = staged_icpg_ * p.groups;
  // The zero point of the values the kernels multiply (see kInputShift).
  const int32_t kernel_zero_point = x_zero_point - kInputShift;

  X86QConvArgs& a = args_;
  a.in_channels = kernel_channels, a.in_h = p.in_h, a.in_w = p.in_w;
  if (subsample_input_) a.in_h = p.out_h, a.in_w = p.out_w;  // the kernel reads the gathered plane
  a.out_channels = p.out_channels, a.out_h = p.out_h, a.out_w = p.out_w;
  a.groups = p.groups;
  a.in_channels_per_group = staged_icpg_;
  a.out_channels_per_group = p.out_channels_per_group();
  a.kernel_h = p.kernel_h, a.kernel_w = p.kernel_w;
  a.stride_h = subsample_input_ ? 1 : p.stride_h, a.stride_w = subsample_input_ ? 1 : p.stride_w;
  a.dilation_h = p.dilation_h, a.dilation_w = p.dilation_w;
  a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.in_block = stage_input_ ? staged_block_ : in_block;
  a.out_block = out_block;
  a.weights = weights_.data();
  a.bias = bias_.data();
  a.tap_zero_sums = tap_zero_sums_.data();
  if (!rest_begin_.empty()) a.rest = rest_.data(), a.rest_begin = rest_begin_.data();
  a.x_zero_point = kernel_zero_point;
  a.requantize = x86_requantize(q, multiplier_.data(), static_cast<int64_t>(multiplier_.size()));
#if NINEGRID_X86_INT8_CONV
  // vpmaddwd's pointwise tiles on a staged int16 copy of their input where its constraints hold: each pair
  // of input channels is then a broadcast load where the byte tiles shuffle it for every pair of output
  // blocks (the plan's Wide form; qconv_select.cpp's fits_wide_pointwise says where the rules take it: from
  // 64 output channels). Its chunk is its own thread_scratch slot, beside the input that run() may have
  // staged or gathered into slot 0.
  if (plan.int8_form == QConvForm::Wide) {
    kernel_ = avx2::qconv2d_pointwise_wide;
    algorithm_name_ = subsample_input_ ? "int8-avx2-wide-pointwise-strided" : "int8-avx2-wide-pointwise";
    scratch_floats_ = avx2::qconv2d_pointwise_wide_scratch_floats(a);
  }
#endif
}

// The direct and pointwise kernels' weights at depth_ for staged_icpg_ channels per group, with the sums
// that start their tiles (bias_, tap_zero_sums_) and the multipliers. split_w7 (x86-64, depth 4): each
// block's pairs beyond vpmaddubsw's bound split into rest_ as it is packed (split_w7_block).
void FastQConv2d::pack_direct_weights(const int8_t* w, const Requantization& q, int32_t x_zero_point,
                                      [[maybe_unused]] bool split_w7) {
  const Conv2dParams& p = params_;
  const int64_t icpg = p.in_channels_per_group();
  const int64_t P = lanes_, D = depth_, taps = p.kernel_h * p.kernel_w;
  // The zero point of the values the kernels multiply (see kInputShift).
  const int32_t kernel_zero_point = x_zero_point - kInputShift;

  // Weights [block][icpg' / D][kh][kw][P][D]: zeros for the padding output channels and input channels.
  // Packed one filter at a time, tap by tap (pack_filter_tap): the filter and its block's stores stay in cache,
  // and each tap's sum over the input channels comes with the copy.
  blocks_ = round_up(p.out_channels, P) / P;
  const int64_t steps = staged_icpg_ / D;
  const int64_t tap_stride = P * D, step_stride = taps * tap_stride, block_bytes = steps * step_stride;
  weights_ = AlignedArray<int8_t>(blocks_ * block_bytes);
  bias_.assign(static_cast<size_t>(blocks_ * P), 0);
  tap_zero_sums_.assign(static_cast<size_t>(blocks_ * taps * P), 0);
  multiplier_.assign(static_cast<size_t>(blocks_ * P), 0.f);
  rest_.clear();
  rest_begin_.assign(split_w7 ? static_cast<size_t>(blocks_ + 1) : 0, 0);
  for (int64_t oc = 0; oc < p.out_channels; ++oc) {
    const int64_t b = oc / P, lane = oc % P;
    const int8_t* filter = w + oc * icpg * taps;
    int8_t* lane_weights = weights_.data() + b * block_bytes + lane * D;
    int64_t weight_sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t sum = pack_filter_tap(D, filter + t, taps, icpg, lane_weights + t * tap_stride, step_stride);
      weight_sum += sum;
      // int32 wraps alike here and in the reference, which sums the products per weight.
      tap_zero_sums_[static_cast<size_t>((b * taps + t) * P + lane)] =
          static_cast<int32_t>(static_cast<uint32_t>(int64_t(kernel_zero_point) * sum));
    }
    // The reference sums (x - zp) * w over the taps inside the image; the kernels sum x * w (x - 128 on
    // AArch64, with zp - 128 here) and start from bias - zp * (all weights), adding back the taps outside on
    // the borders. int32 wraps alike in both.
    const int64_t folded = (q.bias ? q.bias[oc] : 0) - int64_t(kernel_zero_point) * weight_sum;
    bias_[static_cast<size_t>(oc)] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    multiplier_[static_cast<size_t>(oc)] = q.multiplier[oc];
#if NINEGRID_X86_INT8_CONV
    if (split_w7 && (lane == P - 1 || oc + 1 == p.out_channels)) split_w7_block(b);
#endif
  }
}

#if NINEGRID_X86_INT8_CONV
// Splits every weight pair of output block b's packed vectors (at depth 4) beyond vpmaddubsw's bound
// (vector_fits_w7) into halves that meet it: w - w / 2 stays packed, w / 2 (rounded toward zero) goes to the
// vector's rest vector, whose other pairs are zero. Same-sign weights of magnitudes up to 128 halve to at
// most 64 each, so both pairs sum to at most 128 in magnitude; w = (w - w / 2) + w / 2 exactly, so the sums
// of bias_ and tap_zero_sums_ (from the whole weights) stay right. One rest vector per packed vector with
// such a pair, appended to rest_ in packing order; blocks are split in order, each just after its packing
// (while it is in cache).
void FastQConv2d::split_w7_block(int64_t b) {
  const Conv2dParams& p = params_;
  const int64_t steps = staged_icpg_ / depth_;
  // Vectors [step][kh][kw], counted off in loops (a division per vector cost more than the rest).
  int8_t* packed = weights_.data() + b * steps * p.kernel_h * p.kernel_w * kW7VectorBytes;
  for (int64_t step = 0; step < steps; ++step)
    for (int64_t kh = 0; kh < p.kernel_h; ++kh)
      for (int64_t kw = 0; kw < p.kernel_w; ++kw, packed += kW7VectorBytes) {
        if (vector_fits_w7(packed)) continue;
        X86QRestVector rest;
        rest.channel = static_cast<int32_t>(step * depth_);
        rest.kh = static_cast<int16_t>(kh);
        rest.kw = static_cast<int16_t>(kw);
        split_vector_w7(packed, rest.weights);
        rest_.push_back(rest);
      }
  rest_begin_[static_cast<size_t>(b + 1)] = static_cast<int32_t>(rest_.size());
}
#endif

// An input the kernels do not read as it is at depth_ (qconv_reads_unstaged) is staged into a copy with every
// group's channels padded to a multiple of 4 (which the depth divides) in the widest of the blocks 16, 8
// and 4 that divides the padded count.
void FastQConv2d::plan_staging(int64_t in_block) {
  const Conv2dParams& p = params_;
  const int64_t icpg = p.in_channels_per_group();
  stage_input_ = !qconv_reads_unstaged(in_block, icpg, depth_);
  staged_icpg_ = stage_input_ ? round_up(icpg, 4) : icpg;
#if defined(__aarch64__)
  staged_block_ = 4;
#else
  const int64_t kernel_channels = staged_icpg_ * p.groups;
  staged_block_ = kernel_channels % 16 == 0 ? 16 : kernel_channels % 8 == 0 ? 8 : 4;
#endif
}

// Indirect (x86-64): weights packed per conv group and vector group as X86QIndirectArgs says, each group's
// output channels padded to whole vectors of lanes_ (bias, multipliers alike); the indirection buffer built
// once for the conv's shape; padding taps read a row of the kernels' zero point, so the folded bias is exact
// and no per-tap sums are needed. Inputs are staged as for the direct kernel.
void FastQConv2d::prepare_indirect(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                                   int64_t in_block, int64_t out_block) {
#if NINEGRID_X86_INT8_CONV
  const Conv2dParams& p = params_;
  indirect_kernel_ = vnni ? vnni::qconv2d_indirect : avx2::qconv2d_indirect;
  algorithm_name_ = vnni ? "int8-vnni-indirect" : "int8-avx2-indirect";
  const int64_t pixel_tile = vnni ? vnni::kQIndirectPixels : avx2::kQIndirectPixels;
  const int64_t group_lanes = lanes_ * (vnni ? vnni::kQIndirectOcVectors : avx2::kQIndirectOcVectors);
  const int64_t L = lanes_, D = depth_;
  const int64_t icpg = p.in_channels_per_group(), ocpg = p.out_channels_per_group();
  const int32_t kernel_zero_point = x_zero_point - kInputShift;

  // A plain image of a few channels with adjacent kernel columns (a first layer) runs as packed rows
  // (kernels/x86/qconv_indirect_impl.h): its taps are (kernel row, group of 4 columns), its channels
  // (channel, column in the group), read from a copy of the image padded with the zero point on every
  // side; everything else as the direct kernel reads it (plan_staging).
  const int64_t column_groups = (p.kernel_w + 3) / 4;
  // (Every row and column an output reads lies inside the copy, whatever the pads' consistency with out_h.)
  const int64_t padded_h =
      std::max(p.in_h + p.pad_top + p.pad_bottom, (p.out_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1);
  const int64_t padded_w = std::max(p.in_w + p.pad_left + p.pad_right, (p.out_w - 1) * p.stride_w + 4 * column_groups);
  packed_rows_ = in_block == 1 && p.groups == 1 && p.in_channels <= 4 && p.dilation_w == 1 &&
                 padded_h * padded_w < (int64_t(1) << 31);
  int64_t taps, icp;
  if (packed_rows_) {
    stage_input_ = true;
    padded_h_ = padded_h, padded_w_ = padded_w;
    taps = p.kernel_h * column_groups;
    icp = 4 * icpg;
  } else {
    plan_staging(in_block);
    taps = p.kernel_h * p.kernel_w;
    icp = staged_icpg_;
  }
  // (kernel tap, input channel) of weight (ic, kh, kw) as the kernel reads it.
  auto kernel_tap = [&](int64_t kh, int64_t kw) { return packed_rows_ ? kh * column_groups + kw / 4 : kh * p.kernel_w + kw; };
  auto kernel_channel = [&](int64_t ic, int64_t kw) { return packed_rows_ ? ic * 4 + kw % 4 : ic; };
  const int64_t steps = icp / D, ocpp = round_up(ocpg, L);
  weights_ = AlignedArray<int8_t>(p.groups * ocpp * taps * icp);
  bias_.assign(static_cast<size_t>(p.groups * ocpp), 0);
  multiplier_.assign(static_cast<size_t>(p.groups * ocpp), 0.f);
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t o = 0; o < ocpg; ++o) {
      const int64_t oc = g * ocpg + o, cp = g * ocpp + o;
      const int64_t v = o / group_lanes, lane = o % group_lanes;
      const int64_t lanes_v = std::min(group_lanes, ocpp - v * group_lanes);
      const int64_t base = (g * ocpp + v * group_lanes) * taps * icp;
      int64_t weight_sum = 0;
      for (int64_t ic = 0; ic < icpg; ++ic)
        for (int64_t kh = 0; kh < p.kernel_h; ++kh)
          for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
            const int8_t value = w[((oc * icpg + ic) * p.kernel_h + kh) * p.kernel_w + kw];
            const int64_t t = kernel_tap(kh, kw), k = kernel_channel(ic, kw);
            weights_[base + ((t * steps + k / D) * lanes_v + lane) * D + k % D] = value;
            weight_sum += value;
          }
      // As for the direct kernel (the constructor), but exact at the borders too: padding taps read the
      // zero point.
      const int64_t folded = (q.bias ? q.bias[oc] : 0) - int64_t(kernel_zero_point) * weight_sum;
      bias_[static_cast<size_t>(cp)] = static_cast<int32_t>(static_cast<uint32_t>(folded));
      multiplier_[static_cast<size_t>(cp)] = q.multiplier[oc];
    }
  if (packed_rows_) {
    // Entry of output pixel (oh, ow) at tap (kh, group): the byte of padded row oh * stride_h + kh *
    // dilation_h, column ow * stride_w + 4 * group (padded coordinates: every read is inside the copy).
    IndirectionBuffer& b = indirection_;
    b.pixel_tile = pixel_tile;
    b.taps = taps;
    const int64_t out_plane = p.out_h * p.out_w;
    b.tiles = (out_plane + pixel_tile - 1) / pixel_tile;
    b.entries.assign(static_cast<size_t>(b.tiles * taps * pixel_tile), IndirectionBuffer::kZero);
    for (int64_t pixel = 0; pixel < out_plane; ++pixel) {
      const int64_t oh = pixel / p.out_w, ow = pixel % p.out_w;
      int32_t* tile = b.entries.data() + (pixel / pixel_tile) * taps * pixel_tile;
      for (int64_t kh = 0; kh < p.kernel_h; ++kh)
        for (int64_t cg = 0; cg < column_groups; ++cg)
          tile[(kh * column_groups + cg) * pixel_tile + pixel % pixel_tile] =
              static_cast<int32_t>((oh * p.stride_h + kh * p.dilation_h) * padded_w + ow * p.stride_w + 4 * cg);
    }
  } else {
    indirection_ = build_indirection(p, pixel_tile);
  }
  // Tiles none of whose taps reads padding take the kernel's path without the zero-row test.
  const int64_t tile_entries = indirection_.taps * pixel_tile;
  tile_interior_.assign(static_cast<size_t>(indirection_.tiles), 1);
  for (int64_t t = 0; t < indirection_.tiles; ++t)
    for (int64_t i = 0; i < tile_entries; ++i)
      if (indirection_.entries[static_cast<size_t>(t * tile_entries + i)] < 0) {
        tile_interior_[static_cast<size_t>(t)] = 0;
        break;
      }
  zero_row_.assign(64, static_cast<uint8_t>(kernel_zero_point));
  X86QIndirectArgs& a = indirect_args_;
  a.in_channels = icp * p.groups;
  a.in_plane = packed_rows_ ? padded_h * padded_w : p.in_h * p.in_w;
  a.in_block = packed_rows_ ? 4 : stage_input_ ? staged_block_ : in_block;
  a.packed_rows = packed_rows_;
  a.out_channels = p.out_channels, a.out_plane = p.out_h * p.out_w, a.out_block = out_block;
  a.groups = p.groups, a.in_channels_per_group = icp, a.out_channels_per_group = ocpg, a.oc_padded_per_group = ocpp;
  a.taps = taps;
  a.tiles = indirection_.tiles;
  a.indirection = indirection_.entries.data();
  a.tile_interior = tile_interior_.data();
  a.weights = weights_.data();
  a.bias = bias_.data();
  a.requantize = x86_requantize(q, multiplier_.data(), static_cast<int64_t>(multiplier_.size()));
  a.zero_row = zero_row_.data();
  indirect_items_ = p.groups * ((ocpp + group_lanes - 1) / group_lanes) * indirection_.tiles;
#else
  (void)vnni, (void)w, (void)q, (void)x_zero_point, (void)in_block, (void)out_block;
  throw Error("FastQConv2d: no indirect int8 kernel on this build");
#endif
}

// First layer (x86-64): weights as the kernel broadcasts them, one 32-bit word per (pass, input channel,
// kernel row, group of `depth` columns, output channel): vnni 4 int8 weights, avx2 2 int16 (the columns past
// the kernel and the channels past out_channels zero). The bias folds x_zero_point times all the channel's
// weights (the kernel's border windows read the zero point), and the kernel adds back each kernel row's
// share where it skips the row (outside the image).
void FastQConv2d::prepare_first_layer(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                                      int64_t out_block) {
#if NINEGRID_X86_INT8_CONV
  const Conv2dParams& p = params_;
  first_layer_kernel_ = vnni ? vnni::qconv2d_first_layer : avx2::qconv2d_first_layer;
  algorithm_name_ = vnni ? "int8-vnni-first-layer" : "int8-avx2-first-layer";
  const int64_t D = depth_, C = out_block == 16 ? 16 : 8;
  const int64_t groups = (p.kernel_w + D - 1) / D, passes = (p.out_channels + C - 1) / C;
  const int64_t IC = p.in_channels, KH = p.kernel_h, KW = p.kernel_w;
  first_layer_weights_.assign(static_cast<size_t>(passes * IC * KH * groups * C), 0);
  row_zero_sums_.assign(static_cast<size_t>(passes * KH * C), 0);
  bias_.assign(static_cast<size_t>(passes * C), 0);
  multiplier_.assign(static_cast<size_t>(passes * C), 0.f);
  for (int64_t oc = 0; oc < p.out_channels; ++oc) {
    const int64_t pass = oc / C, o = oc % C;
    int64_t weight_sum = 0;
    for (int64_t kh = 0; kh < KH; ++kh) {
      int64_t row_sum = 0;
      for (int64_t ic = 0; ic < IC; ++ic)
        for (int64_t g = 0; g < groups; ++g) {
          uint32_t word = 0;
          for (int64_t d = 0; d < D; ++d) {
            const int64_t kw = g * D + d;
            if (kw >= KW) break;
            const int8_t value = w[((oc * IC + ic) * KH + kh) * KW + kw];
            row_sum += value;
            // vnni: byte d; avx2: the int16 value at word d.
            word |= vnni ? uint32_t(uint8_t(value)) << (8 * d) : uint32_t(uint16_t(int16_t(value))) << (16 * d);
          }
          first_layer_weights_[static_cast<size_t>((((pass * IC + ic) * KH + kh) * groups + g) * C + o)] =
              static_cast<int32_t>(word);
        }
      row_zero_sums_[static_cast<size_t>((pass * KH + kh) * C + o)] =
          static_cast<int32_t>(static_cast<uint32_t>(int64_t(x_zero_point) * row_sum));
      weight_sum += row_sum;
    }
    const int64_t folded = (q.bias ? q.bias[oc] : 0) - int64_t(x_zero_point) * weight_sum;
    bias_[static_cast<size_t>(oc)] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    multiplier_[static_cast<size_t>(oc)] = q.multiplier[oc];
  }
  X86QFirstLayerArgs& a = first_layer_args_;
  a.in_channels = IC, a.in_h = p.in_h, a.in_w = p.in_w;
  a.out_channels = p.out_channels, a.out_h = p.out_h, a.out_w = p.out_w, a.out_block = out_block;
  a.kernel_h = KH, a.kernel_w = KW, a.stride_h = p.stride_h, a.stride_w = p.stride_w;
  a.dilation_h = p.dilation_h, a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.column_groups = groups;
  a.pass_channels = C;
  a.weights = first_layer_weights_.data();
  a.bias = bias_.data();
  a.row_zero_sums = row_zero_sums_.data();
  a.x_zero_point = static_cast<uint8_t>(x_zero_point);
  a.requantize = x86_requantize(q, multiplier_.data(), static_cast<int64_t>(multiplier_.size()));
#else
  (void)vnni, (void)w, (void)q, (void)x_zero_point, (void)out_block;
  throw Error("FastQConv2d: no first-layer int8 kernel on this build");
#endif
}

// The Winograd kernel's arguments and transformed weights; strips of at most 48 tiles, spread evenly over a
// tile row (the transformed inputs of a strip are 16 x 48 x channels x 2 bytes: 96 KB for 64 channels, which
// stay in L2 while every block of output channels reads them).
void FastQConv2d::prepare_winograd(const int8_t* w, const Requantization& q, int32_t x_zero_point,
                                   int64_t in_block, int64_t out_block) {
  const Conv2dParams& p = params_;
#if NINEGRID_X86_INT8_CONV
  winograd_kernel_ = avx2::qconv2d_winograd_f2x3;
#else
  throw Error("FastQConv2d: no int8 Winograd kernel on this build");
#endif
  lanes_ = avx2::kLanes;
  algorithm_name_ = "int8-avx2-winograd-f2x3";
  X86QWinogradArgs& a = winograd_args_;
  a.in_channels = p.in_channels, a.in_h = p.in_h, a.in_w = p.in_w, a.in_block = in_block;
  a.out_channels = p.out_channels, a.out_h = p.out_h, a.out_w = p.out_w, a.out_block = out_block;
  a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.tiles_h = (p.out_h + 1) / 2, a.tiles_w = (p.out_w + 1) / 2;
  constexpr int64_t kMaxStripTiles = 48;
  a.strips_per_row = (a.tiles_w + kMaxStripTiles - 1) / kMaxStripTiles;
  a.strip_tiles = (a.tiles_w + a.strips_per_row - 1) / a.strips_per_row;
  a.channels_padded = round_up(p.in_channels, kQWinogradChannelGroup);
  a.out_channels_padded = round_up(p.out_channels, kQWinogradOcBlock);
  winograd_weights_ = AlignedArray<int16_t>(qwinograd_f2x3_packed_values(a.channels_padded, a.out_channels_padded));
  pack_qwinograd_f2x3(w, p.out_channels, p.in_channels, a.out_channels_padded, a.channels_padded,
                      winograd_weights_.data());
  a.weights = winograd_weights_.data();
  bias_.assign(static_cast<size_t>(a.out_channels_padded), 0);
  multiplier_.assign(static_cast<size_t>(a.out_channels_padded), 0.f);
  for (int64_t c = 0; c < p.out_channels; ++c) {
    bias_[c] = q.bias ? q.bias[c] : 0;
    multiplier_[c] = q.multiplier[c];
  }
  a.bias = bias_.data();
  a.x_zero_point = x_zero_point;
  a.requantize = x86_requantize(q, multiplier_.data(), a.out_channels_padded);
}

// Depthwise: the int8-dw kernels' own weight packing (kernels/qpack_depthwise.h); padding taps read the zero
// point there, so only the bias carries the correction (no tap_zero_sums) and no input is staged.
void FastQConv2d::prepare_depthwise(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                                    int64_t in_block, int64_t out_block) {
  const Conv2dParams& p = params_;
  const int64_t C = p.out_channels, taps = p.kernel_h * p.kernel_w;
  // Input in blocks the kernel's register tiles do not read (a plain NCHW tensor; on AArch64 any block but
  // 4) is staged into one they read: their general path, over each output's taps, ran MobileNetV2's
  // plain-layout depthwise layers at under 1 GOP/s.
#if NINEGRID_X86_INT8_CONV
  const int64_t staged_block = in_block % 8 != 0 && C % 8 == 0 ? (vnni && C % 16 == 0 ? 16 : 8) : 0;
  const int64_t kernel_in_block = staged_block ? staged_block : in_block;
  const X86QDepthwiseLayout layout =
      (vnni ? vnni::qconv2d_depthwise_layout : avx2::qconv2d_depthwise_layout)(kernel_in_block);
  kernel_ = vnni ? vnni::qconv2d_depthwise : avx2::qconv2d_depthwise;
  algorithm_name_ = vnni ? "int8-vnni-depthwise" : "int8-avx2-depthwise";
#elif defined(__aarch64__)
  const int64_t staged_block = in_block != 4 && C % 4 == 0 ? 4 : 0;
  const int64_t kernel_in_block = staged_block ? staged_block : in_block;
  const X86QDepthwiseLayout layout =
      (vnni ? dotprod::qconv2d_depthwise_layout : neon::qconv2d_depthwise_layout)(kernel_in_block);
  kernel_ = vnni ? dotprod::qconv2d_depthwise : neon::qconv2d_depthwise;
  algorithm_name_ = vnni ? "int8-dotprod-depthwise" : "int8-neon-depthwise";
#else
  const int64_t staged_block = 0;
  const X86QDepthwiseLayout layout;
#endif
  lanes_ = layout.lanes;
  blocks_per_tile_ = 1;
  if (staged_block) {
    stage_input_ = true;
    staged_icpg_ = 1;
    staged_block_ = staged_block;
  }
  blocks_ = round_up(C, lanes_) / lanes_;
  weights_ = AlignedArray<int8_t>(qdepthwise_packed_bytes(layout, C, p.kernel_h, p.kernel_w));
  pack_qdepthwise_weights(layout, w, C, p.kernel_h, p.kernel_w, weights_.data());
  bias_.assign(static_cast<size_t>(blocks_ * lanes_), 0);
  multiplier_.assign(static_cast<size_t>(blocks_ * lanes_), 0.f);
  for (int64_t c = 0; c < C; ++c) {
    int64_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += w[c * taps + t];
    // The kernels' padding taps read x_zero_point (shifted like every input), so this is exact everywhere.
    const int64_t folded = (q.bias ? q.bias[c] : 0) - int64_t(x_zero_point - kInputShift) * sum;
    bias_[static_cast<size_t>(c)] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    multiplier_[static_cast<size_t>(c)] = q.multiplier[c];
  }
  X86QConvArgs& a = args_;
  a.in_channels = a.out_channels = a.groups = C;
  a.in_channels_per_group = a.out_channels_per_group = 1;
  a.in_h = p.in_h, a.in_w = p.in_w, a.out_h = p.out_h, a.out_w = p.out_w;
  a.kernel_h = p.kernel_h, a.kernel_w = p.kernel_w, a.stride_h = p.stride_h, a.stride_w = p.stride_w;
  a.dilation_h = p.dilation_h, a.dilation_w = p.dilation_w, a.pad_top = p.pad_top, a.pad_left = p.pad_left;
  a.in_block = stage_input_ ? staged_block_ : in_block, a.out_block = out_block;
  a.weights = weights_.data();
  a.bias = bias_.data();
  a.x_zero_point = x_zero_point;
  a.requantize = x86_requantize(q, multiplier_.data(), static_cast<int64_t>(multiplier_.size()));
}

// NCHW[in_block]c with icpg channels per group -> NCHW[staged_block]c with staged_icpg per group, the padding
// channels zero. Tasks are (image, staged block); each writes its block pixel by pixel while reading one
// sequential stream per channel.
void FastQConv2d::stage(const uint8_t* x, uint8_t* staged, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  if (packed_rows_) {
    // Packed rows: each channel's rows copied into a plane of padded_h_ x padded_w_ bytes, the zero point
    // around them. Tasks are (image, channel).
    const uint8_t zp = indirect_args_.zero_row[0];
    const int64_t plane = p.in_h * p.in_w, padded = padded_h_ * padded_w_;
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const uint8_t* in = x + t * plane;
        uint8_t* out = staged + t * padded;
        std::memset(out, zp, static_cast<size_t>(p.pad_top * padded_w_));
        out += p.pad_top * padded_w_;
        for (int64_t r = 0; r < p.in_h; ++r, in += p.in_w, out += padded_w_) {
          std::memset(out, zp, static_cast<size_t>(p.pad_left));
          std::memcpy(out + p.pad_left, in, static_cast<size_t>(p.in_w));
          std::memset(out + p.pad_left + p.in_w, zp, static_cast<size_t>(padded_w_ - p.pad_left - p.in_w));
        }
        std::memset(out, zp, static_cast<size_t>((padded_h_ - p.pad_top - p.in_h) * padded_w_));
      }
    };
    if (pool && pool->size() > 1) pool->parallel_for(p.batch * p.in_channels, run);
    else run(0, p.batch * p.in_channels);
    return;
  }
  const int64_t plane = p.in_h * p.in_w, icpg = p.in_channels_per_group(), B = staged_block_;
  const int64_t staged_channels = staged_icpg_ * p.groups, blocks = staged_channels / B;
  static const uint8_t kZero = 0;
  if (in_block_ == 1 && p.groups == 1 && B == 4 && icpg <= 4) {
    // A plain image of up to 4 channels (a quantised first layer): one 4-byte pixel from 4 planes at a
    // time, a loop the compiler vectorises (the general loop below took longer than the convolution).
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        const uint8_t* src = x + n * p.in_channels * plane;
        uint8_t* out = staged + n * plane * 4;
        const uint8_t* c0 = src;
        const uint8_t* c1 = icpg > 1 ? src + plane : &kZero;
        const uint8_t* c2 = icpg > 2 ? src + 2 * plane : &kZero;
        const uint8_t* c3 = icpg > 3 ? src + 3 * plane : &kZero;
        const int64_t s1 = icpg > 1, s2 = icpg > 2, s3 = icpg > 3;
        if (icpg == 3) {
          for (int64_t i = 0; i < plane; ++i) {
            const uint32_t v = uint32_t(c0[i]) | uint32_t(c1[i]) << 8 | uint32_t(c2[i]) << 16;
            __builtin_memcpy(out + 4 * i, &v, 4);
          }
        } else {
          for (int64_t i = 0; i < plane; ++i) {
            const uint32_t v =
                uint32_t(c0[i]) | uint32_t(c1[i * s1]) << 8 | uint32_t(c2[i * s2]) << 16 | uint32_t(c3[i * s3]) << 24;
            __builtin_memcpy(out + 4 * i, &v, 4);
          }
        }
      }
    };
    if (pool && pool->size() > 1 && p.batch > 1) pool->parallel_for(p.batch, run);
    else run(0, p.batch);
    return;
  }
  if (in_block_ == 1 && staged_icpg_ == icpg) {
    // A plain tensor with no padding channels: each channel's plane copied into its lane of the block, read
    // sequentially, written every B bytes (the per-pixel loop below took several cycles a byte).
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / blocks, b = t % blocks;
        uint8_t* out = staged + (n * blocks + b) * plane * B;
        for (int64_t j = 0; j < B; ++j) {
          const uint8_t* in = x + (n * p.in_channels + b * B + j) * plane;
          for (int64_t i = 0; i < plane; ++i) out[i * B + j] = in[i];
        }
      }
    };
    if (pool && pool->size() > 1) pool->parallel_for(p.batch * blocks, run);
    else run(0, p.batch * blocks);
    return;
  }
  auto run = [&](int64_t begin, int64_t end) {
    constexpr int64_t kMaxBlock = 16;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / blocks, b = t % blocks;
      const uint8_t* src = x + n * p.in_channels * plane;
      uint8_t* out = staged + (n * blocks + b) * plane * B;
      const uint8_t* in[kMaxBlock];
      int64_t step[kMaxBlock];
      for (int64_t j = 0; j < B; ++j) {
        const int64_t sc = b * B + j, g = sc / staged_icpg_, i = sc % staged_icpg_;
        if (i < icpg) {
          const int64_t c = g * icpg + i;
          in[j] = src + (c / in_block_) * plane * in_block_ + c % in_block_;
          step[j] = in_block_;
        } else {
          in[j] = &kZero;
          step[j] = 0;
        }
      }
      for (int64_t i = 0; i < plane; ++i, out += B)
        for (int64_t j = 0; j < B; ++j) out[j] = in[j][i * step[j]];
    }
  };
  if (pool && pool->size() > 1) pool->parallel_for(p.batch * blocks, run);
  else run(0, p.batch * blocks);
}

// The strided 1x1 conv's input pixels gathered (see the constructor); tasks are channel blocks of all images
// (kernels/gather_strided.h counts them on across images).
void FastQConv2d::gather_strided_pixels(const uint8_t* x, uint8_t* gathered, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  auto run = [&](int64_t begin, int64_t end) { ninegrid::gather_strided_pixels(p, in_block_, x, gathered, begin, end); };
  const int64_t blocks = p.batch * (p.in_channels / in_block_);
  if (pool && pool->size() > 1) pool->parallel_for(blocks, run);
  else run(0, blocks);
}

void FastQConv2d::run(const uint8_t* x, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  if (split_ == ConvSplit::Serial) pool = nullptr;  // the plan keeps the layer on the calling thread
  const uint8_t* in = x;
  int64_t in_image = p.in_channels * p.in_h * p.in_w;
  if (stage_input_) {
    in_image = packed_rows_ ? p.in_channels * padded_h_ * padded_w_ : staged_icpg_ * p.groups * p.in_h * p.in_w;
    uint8_t* staged = reinterpret_cast<uint8_t*>(thread_scratch((p.batch * in_image + 3) / 4));
    stage(x, staged, pool);
    in = staged;
  }
  if (subsample_input_) {
    const int64_t gathered_image = p.in_channels * p.out_h * p.out_w;
    uint8_t* gathered = reinterpret_cast<uint8_t*>(thread_scratch((p.batch * gathered_image + 3) / 4));
    gather_strided_pixels(x, gathered, pool);
    run_kernel(gathered, gathered_image, y, residual, pool);
    return;
  }
  if (winograd_kernel_) run_winograd(x, y, residual, pool);
  else if (first_layer_kernel_) run_first_layer(x, y, pool);
  else if (indirect_kernel_) run_indirect(in, in_image, y, residual, pool);
  else run_kernel(in, in_image, y, residual, pool);
}

namespace {
// run(n, begin, end) over items [begin, end) of image n, for every image and all `items`: per image in one
// call on one thread; else in contiguous chunks, a few per thread, spread over the pool.
template <class Run>
void for_each_image_chunk(ThreadPool* pool, int64_t batch, int64_t items, Run run) {
  const int threads = pool ? pool->size() : 1;
  if (threads <= 1) {
    for (int64_t n = 0; n < batch; ++n) run(n, int64_t(0), items);
    return;
  }
  const int64_t chunks = std::min<int64_t>(items, 4 * static_cast<int64_t>(threads));
  pool->parallel_for(batch * chunks, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / chunks, k = t % chunks;
      run(n, items * k / chunks, items * (k + 1) / chunks);
    }
  });
}
}  // namespace

// The first-layer kernel over (image, chunk of output rows), a few chunks per thread. (No residual: the
// constructor chose another kernel for a conv with one.)
void FastQConv2d::run_first_layer(const uint8_t* x, uint8_t* y, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  const int64_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * p.out_h * p.out_w;
  auto image_args = [&](int64_t n) {
    X86QFirstLayerArgs a = first_layer_args_;
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    return a;
  };
  for_each_image_chunk(pool, p.batch, p.out_h, [&](int64_t n, int64_t begin, int64_t end) {
    first_layer_kernel_(image_args(n), begin, end);
  });
}

// The Winograd kernel's strips of tiles, a few chunks per thread, each thread with its own scratch.
void FastQConv2d::run_winograd(const uint8_t* x, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  const int64_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * p.out_h * p.out_w;
  const int64_t items = winograd_args_.tiles_h * winograd_args_.strips_per_row;
  const int64_t scratch_bytes = qwinograd_f2x3_scratch_bytes(winograd_args_);
  for_each_image_chunk(pool, p.batch, items, [&](int64_t n, int64_t begin, int64_t end) {
    X86QWinogradArgs a = winograd_args_;
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.requantize.residual = residual ? residual + n * out_image : nullptr;
    winograd_kernel_(a, begin, end, thread_scratch((scratch_bytes + 3) / 4));
  });
}

// The indirect kernel's work items (conv group, vector group, pixel tile) of every image, in contiguous
// chunks (consecutive items share their weights), a few per thread.
void FastQConv2d::run_indirect(const uint8_t* x, int64_t in_image, uint8_t* y, const uint8_t* residual,
                               ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  const int64_t out_image = p.out_channels * p.out_h * p.out_w;
  auto image_args = [&](int64_t n) {
    X86QIndirectArgs a = indirect_args_;
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.requantize.residual = residual ? residual + n * out_image : nullptr;
    return a;
  };
  // By rows (indirect_splits_rows): one band of tiles per thread; else contiguous chunks of the items, a
  // few per thread, which split the output channels.
  const int64_t threads = pool ? pool->size() : 1, tiles = indirect_args_.tiles;
  if (threads <= 1 || !indirect_splits_rows(split_, tiles, threads)) {
    for_each_image_chunk(pool, p.batch, indirect_items_, [&](int64_t n, int64_t begin, int64_t end) {
      indirect_kernel_(image_args(n), begin, end);
    });
    return;
  }
  pool->parallel_for(p.batch * threads, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const X86QIndirectArgs a = indirect_band(image_args(task / threads), task % threads, threads);
      indirect_kernel_(a, 0, indirect_items_ / tiles * a.tiles);
    }
  });
}

void FastQConv2d::run_kernel(const uint8_t* x, int64_t in_image, uint8_t* y, const uint8_t* residual,
                             ThreadPool* pool) const {
  const Conv2dParams& p = params_;
  const int64_t out_image = p.out_channels * p.out_h * p.out_w;
  auto image_args = [&](int64_t n) {
    X86QConvArgs a = args_;
    a.x = x + n * in_image;
    a.y = y + n * out_image;
    a.requantize.residual = residual ? residual + n * out_image : nullptr;
    return a;
  };
  const int threads = pool ? pool->size() : 1;
  if (threads <= 1) {
    X86ConvRange r{0, blocks_, 0, p.out_h};
    r.scratch = scratch_floats_ ? thread_scratch(scratch_floats_, 1) : nullptr;
    for (int64_t n = 0; n < p.batch; ++n) kernel_(image_args(n), r);
    return;
  }
  // Tasks (image, part of the groups of whole tiles of output blocks, chunk of rows), as FastConv2d::run_kernel
  // splits them: one group per part, rows outermost when the image outweighs the weights, output blocks
  // otherwise. The wide pointwise kernel widens its range's input once for all the range's blocks, so its
  // parts hold at least 4 groups where there are that many (64 channels, from which the rules take it), no
  // more parts than tasks wanted, and rows split the rest; with a group per task each would widen the whole
  // plane.
  const int64_t block_groups = (blocks_ + blocks_per_tile_ - 1) / blocks_per_tile_;
  const int64_t wanted = 4 * static_cast<int64_t>(threads);
  // Where the images have too few rows for the tasks wanted, the parts get smaller (down to a group).
  constexpr int64_t kWideGroupsPerPart = 4;
  const int64_t row_tasks = p.batch * p.out_h;
  // A plan split by rows gives every task all the output blocks.
  const int64_t parts =
      split_ == ConvSplit::Rows ? 1
      : scratch_floats_
          ? std::min(block_groups, std::max({int64_t{1}, std::min(wanted, block_groups / kWideGroupsPerPart),
                                             (wanted + row_tasks - 1) / row_tasks}))
          : block_groups;
  const bool rows_outer = weights_.size() < in_image;
  int64_t row_chunks =
      std::min<int64_t>(p.out_h, std::max<int64_t>(1, (wanted + p.batch * parts - 1) / (p.batch * parts)));
  if (rows_outer && split_ != ConvSplit::Rows) row_chunks = row_band_chunks(p, row_chunks, threads);
  const int64_t tasks = p.batch * parts * row_chunks;
  pool->parallel_for(tasks, [&](int64_t begin, int64_t end) {
    float* const scratch = scratch_floats_ ? thread_scratch(scratch_floats_, 1) : nullptr;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t chunk = rows_outer ? (t / parts) % row_chunks : t % row_chunks;
      const int64_t part = rows_outer ? t % parts : (t / row_chunks) % parts;
      const int64_t n = t / (row_chunks * parts);
      X86ConvRange r;
      r.oc_block_begin = blocks_per_tile_ * (block_groups * part / parts);
      r.oc_block_end = std::min(blocks_, blocks_per_tile_ * (block_groups * (part + 1) / parts));
      r.row_begin = p.out_h * chunk / row_chunks;
      r.row_end = p.out_h * (chunk + 1) / row_chunks;
      r.scratch = scratch;
      kernel_(image_args(n), r);
    }
  });
}

}  // namespace ninegrid
