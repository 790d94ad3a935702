// The x86 int8 depthwise kernels (vnni:: and avx2::qconv2d_depthwise, kernels/x86/qconv_depthwise_impl.h)
// against the integer reference qconv2d_ref, bit for bit, over random shapes: channel counts of several
// vectors and (input blocks 8, 4, 1) not a multiple of 16, 3x3 and 5x5 (the register tiles) and other
// kernels, strides 1 and 2 (and 3, and unequal), padding up to beyond the kernel's reach, dilation, tiny
// planes, input zero points 0, 255 and between, saturating outputs, fused residuals, every output block, and
// the work split into ranges as threads would run it. Each ISA is skipped where the CPU lacks it. On AArch64
// the same tests run the dotprod and neon kernels (kernels/arm/qconv_kernels_arm.h), whose register tiles
// read NCHW4c (under qemu: QEMU_CPU=max has dotprod, cortex-a72 not).
#if defined(__x86_64__) || defined(__aarch64__)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/conv_params.h"
#include "kernels/qpack_depthwise.h"
#include "kernels/quantized.h"
#include "kernels/ref/qconv2d_ref.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/qconv_kernels_x86.h"
#if defined(__aarch64__)
#include "kernels/arm/qconv_kernels_arm.h"
#endif

namespace ninegrid {
namespace {

using DepthwiseFn = void (*)(const X86QConvArgs&, const X86ConvRange&);
using LayoutFn = X86QDepthwiseLayout (*)(int64_t);

struct Int8Isa {
  const char* name;
  bool runs;
  DepthwiseFn depthwise;
  LayoutFn layout;
  // What the kernel subtracts from each input byte: its bias is prepared for the zero point minus this.
  int32_t input_shift;
};

std::vector<Int8Isa> int8_isas() {
  const CpuFeatures& f = cpu_features();
#if defined(__aarch64__)
  return {{"dotprod", f.asimddp, dotprod::qconv2d_depthwise, dotprod::qconv2d_depthwise_layout,
           kArmInputZeroPointShift},
          {"neon", f.asimd, neon::qconv2d_depthwise, neon::qconv2d_depthwise_layout, kArmInputZeroPointShift}};
#else
  return {{"vnni", f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni, vnni::qconv2d_depthwise,
           vnni::qconv2d_depthwise_layout, 0},
          {"avx2", f.avx2 && f.fma, avx2::qconv2d_depthwise, avx2::qconv2d_depthwise_layout, 0}};
#endif
}

// The input block the register tiles read: the widest on x86 (16; 8 also), 4 on AArch64 (the layout
// planner's int8 block there).
#if defined(__aarch64__)
constexpr int64_t kTileBlock = 4, kOtherTileBlock = 4;
#else
constexpr int64_t kTileBlock = 16, kOtherTileBlock = 8;
#endif

struct Shape {
  int64_t channels, in_h, in_w, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right, in_block, out_block;
};

std::string describe(const Shape& s) {
  return std::to_string(s.channels) + "ch " + std::to_string(s.in_h) + "x" + std::to_string(s.in_w) + " k" +
         std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " s" + std::to_string(s.stride_h) + "x" +
         std::to_string(s.stride_w) + " d" + std::to_string(s.dilation_h) + "x" + std::to_string(s.dilation_w) +
         " pad " + std::to_string(s.pad_top) + "," + std::to_string(s.pad_left) + "," + std::to_string(s.pad_bottom) +
         "," + std::to_string(s.pad_right) + " blocks " + std::to_string(s.in_block) + "/" +
         std::to_string(s.out_block);
}

class Checker {
 public:
  explicit Checker(uint32_t seed) : rng_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  // One convolution on one ISA against the reference; `ranges` pieces of the output run separately.
  void check(const Int8Isa& isa, const Shape& s, int32_t x_zero_point, int ranges) {
    Conv2dParams p;
    p.in_channels = p.out_channels = p.groups = s.channels;
    p.in_h = s.in_h, p.in_w = s.in_w;
    p.kernel_h = s.kernel_h, p.kernel_w = s.kernel_w;
    p.stride_h = s.stride_h, p.stride_w = s.stride_w;
    p.dilation_h = s.dilation_h, p.dilation_w = s.dilation_w;
    p.pad_top = s.pad_top, p.pad_left = s.pad_left, p.pad_bottom = s.pad_bottom, p.pad_right = s.pad_right;
    p.out_h = (s.in_h + s.pad_top + s.pad_bottom - s.dilation_h * (s.kernel_h - 1) - 1) / s.stride_h + 1;
    p.out_w = (s.in_w + s.pad_left + s.pad_right - s.dilation_w * (s.kernel_w - 1) - 1) / s.stride_w + 1;
    ASSERT_GE(p.out_h, 1);
    ASSERT_GE(p.out_w, 1);
    const int64_t C = s.channels, taps = s.kernel_h * s.kernel_w;
    const int64_t in_size = C * s.in_h * s.in_w, out_size = C * p.out_h * p.out_w;

    std::vector<uint8_t> x(static_cast<size_t>(in_size));
    // Mostly random bytes; some inputs all at one extreme, where the sums are largest.
    const int64_t x_kind = uniform(0, 5);
    for (uint8_t& v : x) v = static_cast<uint8_t>(x_kind == 0 ? 255 : x_kind == 1 ? 0 : uniform(0, 255));
    std::vector<int8_t> w(static_cast<size_t>(C * taps));
    const int64_t w_kind = uniform(0, 5);
    for (int8_t& v : w) v = static_cast<int8_t>(w_kind == 0 ? -128 : w_kind == 1 ? 127 : uniform(-128, 127));
    std::vector<int32_t> bias(static_cast<size_t>(C));
    for (int32_t& b : bias) b = static_cast<int32_t>(uniform(-20000, 20000));
    // Multipliers from "most land inside the range" to "every output saturates"; the largest (over 1/4)
    // take the kernels' other requantisation path.
    std::vector<float> multiplier(static_cast<size_t>(C));
    const int scale_exp = static_cast<int>(uniform(0, 4) ? uniform(-20, -6) : uniform(-3, 2));
    for (float& m : multiplier) m = std::ldexp(static_cast<float>(uniform(1 << 10, 1 << 11)), scale_exp - 10);

    Requantization ref_q;
    ref_q.bias = bias.data();
    ref_q.multiplier = multiplier.data();
    ref_q.out_zero_point = static_cast<int32_t>(uniform(0, 255));
    ref_q.qmin = static_cast<int32_t>(uniform(0, 1) ? 0 : uniform(0, ref_q.out_zero_point));
    ref_q.qmax = static_cast<int32_t>(uniform(0, 1) ? 255 : uniform(ref_q.qmin, 255));
    std::vector<uint8_t> residual(static_cast<size_t>(out_size));
    if (uniform(0, 2) == 0) {
      for (uint8_t& v : residual) v = static_cast<uint8_t>(uniform(0, 255));
      ref_q.residual = residual.data();
      ref_q.residual_zero_point = static_cast<int32_t>(uniform(0, 255));
      ref_q.residual_multiplier = std::ldexp(static_cast<float>(uniform(1, 1 << 12)), -11);
      // Or a fused quantised addition after the requantisation (ng.QConv + ng.QAdd), either operand.
      if (uniform(0, 1)) {
        ref_q.residual_add = true;
        ref_q.conv_is_first = uniform(0, 1) == 1;
        ref_q.add.a_zero_point = static_cast<int32_t>(uniform(0, 255));
        ref_q.add.b_zero_point = static_cast<int32_t>(uniform(0, 255));
        ref_q.add.out_zero_point = static_cast<int32_t>(uniform(0, 255));
        auto multiplier = [&]() {
          return std::ldexp(static_cast<float>(uniform(1, 1 << 12)), -12 + static_cast<int>(uniform(-2, 2)));
        };
        ref_q.add.a_multiplier = multiplier();
        ref_q.add.b_multiplier = multiplier();
        ref_q.add.qmin = uniform(0, 1) ? 0 : ref_q.add.out_zero_point;
        ref_q.add.qmax = static_cast<int32_t>(uniform(0, 1) ? 255 : uniform(ref_q.add.qmin, 255));
      }
    }
    std::vector<uint8_t> want(static_cast<size_t>(out_size));
    qconv2d_ref(p, ref_q, x_zero_point, s.in_block, s.out_block, x.data(), w.data(), want.data());

    // The kernel's arguments, prepared as the op does: weights packed for the ISA's layout, the zero
    // point's correction folded into the bias, per-channel values padded to whole vectors.
    const X86QDepthwiseLayout layout = isa.layout(s.in_block);
    const int64_t P = layout.lanes, vectors = (C + P - 1) / P;
    std::vector<int8_t> packed(static_cast<size_t>(qdepthwise_packed_bytes(layout, C, s.kernel_h, s.kernel_w)));
    pack_qdepthwise_weights(layout, w.data(), C, s.kernel_h, s.kernel_w, packed.data());
    std::vector<int32_t> folded(static_cast<size_t>(vectors * P), 0);
    std::vector<float> padded_multiplier(static_cast<size_t>(vectors * P), 1.f);
    for (int64_t c = 0; c < C; ++c) {
      int32_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) sum += w[static_cast<size_t>(c * taps + t)];
      folded[static_cast<size_t>(c)] = bias[static_cast<size_t>(c)] - (x_zero_point - isa.input_shift) * sum;
      padded_multiplier[static_cast<size_t>(c)] = multiplier[static_cast<size_t>(c)];
    }
    X86QConvArgs a;
    a.in_channels = a.out_channels = a.groups = C;
    a.in_channels_per_group = a.out_channels_per_group = 1;
    a.in_h = s.in_h, a.in_w = s.in_w, a.out_h = p.out_h, a.out_w = p.out_w;
    a.kernel_h = s.kernel_h, a.kernel_w = s.kernel_w, a.stride_h = s.stride_h, a.stride_w = s.stride_w;
    a.dilation_h = s.dilation_h, a.dilation_w = s.dilation_w, a.pad_top = s.pad_top, a.pad_left = s.pad_left;
    a.in_block = s.in_block, a.out_block = s.out_block;
    a.weights = packed.data();
    a.bias = folded.data();
    a.x_zero_point = x_zero_point;
    a.requantize.multiplier = padded_multiplier.data();
    a.requantize.out_zero_point = ref_q.out_zero_point;
    a.requantize.qmin = ref_q.qmin, a.requantize.qmax = ref_q.qmax;
    a.requantize.residual = ref_q.residual;
    a.requantize.residual_zero_point = ref_q.residual_zero_point;
    a.requantize.residual_multiplier = ref_q.residual_multiplier;
    a.requantize.residual_add = ref_q.residual_add;
    a.requantize.conv_is_first = ref_q.conv_is_first;
    a.requantize.add.a_zero_point = ref_q.add.a_zero_point, a.requantize.add.b_zero_point = ref_q.add.b_zero_point;
    a.requantize.add.out_zero_point = ref_q.add.out_zero_point;
    a.requantize.add.a_multiplier = ref_q.add.a_multiplier, a.requantize.add.b_multiplier = ref_q.add.b_multiplier;
    a.requantize.add.qmin = ref_q.add.qmin, a.requantize.add.qmax = ref_q.add.qmax;
    a.x = x.data();
    // Guard bytes around the output catch stores outside it.
    const int64_t guard = 64;
    std::vector<uint8_t> y(static_cast<size_t>(out_size + 2 * guard), 0xA5);
    a.y = y.data() + guard;

    // The output cut into ranges of channel vectors x rows, run in a shuffled order.
    std::vector<X86ConvRange> pieces;
    const int64_t block_cuts = ranges > 1 ? uniform(1, vectors) : vectors;
    for (int64_t b0 = 0; b0 < vectors;) {
      const int64_t b1 = b0 + (ranges > 1 ? uniform(1, block_cuts) : vectors);
      for (int64_t r0 = 0; r0 < p.out_h;) {
        const int64_t r1 = ranges > 1 ? r0 + uniform(1, p.out_h) : p.out_h;
        X86ConvRange r;
        r.oc_block_begin = b0, r.oc_block_end = b1 < vectors ? b1 : vectors;
        r.row_begin = r0, r.row_end = r1 < p.out_h ? r1 : p.out_h;
        pieces.push_back(r);
        r0 = r.row_end;
      }
      b0 = b1;
    }
    std::shuffle(pieces.begin(), pieces.end(), rng_);
    for (const X86ConvRange& r : pieces) isa.depthwise(a, r);

    const std::string what = std::string(isa.name) + " " + describe(s) + " x_zp " + std::to_string(x_zero_point);
    for (int64_t i = 0; i < out_size; ++i)
      ASSERT_EQ(y[static_cast<size_t>(guard + i)], want[static_cast<size_t>(i)]) << what << ": output byte " << i;
    for (int64_t g = 0; g < guard; ++g) {
      ASSERT_EQ(y[static_cast<size_t>(g)], 0xA5) << what << ": wrote before the output";
      ASSERT_EQ(y[static_cast<size_t>(guard + out_size + g)], 0xA5) << what << ": wrote past the output";
    }
    ++checked_;
  }

  int32_t zero_point() {
    const int64_t k = uniform(0, 3);
    return static_cast<int32_t>(k == 0 ? 0 : k == 1 ? 255 : uniform(1, 254));
  }
  // A block the layout pass could give `channels`, and channels for it.
  int64_t channels_for(int64_t block) {
    if (block == 1) return uniform(1, 37);
    return block * uniform(1, 48 / block + 1);
  }
  // The output block: mostly the input's (as the layout pass plans a depthwise conv), else any block the
  // kernels store (plain, 4, 8, 16) that divides the channels.
  int64_t out_block_for(int64_t in_block, int64_t channels) {
    if (uniform(0, 1)) return in_block;
    std::vector<int64_t> blocks = {1};
    for (int64_t b : {4, 8, 16})
      if (channels % b == 0) blocks.push_back(b);
    return blocks[static_cast<size_t>(uniform(0, static_cast<int64_t>(blocks.size()) - 1))];
  }
  int checked() const { return checked_; }

 private:
  std::mt19937 rng_;
  int checked_ = 0;
};

std::vector<Int8Isa> running_isas() {
  std::vector<Int8Isa> out;
  for (const Int8Isa& isa : int8_isas())
    if (isa.runs) out.push_back(isa);
  return out;
}

// The register tiles: 3x3 and 5x5, stride 1 and 2, any padding, planes from 1x1 to wider than two tiles.
TEST(QConvDepthwiseX86, TilesMatchReference) {
  const std::vector<Int8Isa> isas = running_isas();
  if (isas.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
  Checker c(20261201);
  for (const Int8Isa& isa : isas)
    for (int iter = 0; iter < 160; ++iter) {
      Shape s;
      const int64_t k = c.uniform(0, 1) ? 3 : 5, stride = c.uniform(1, 2);
      s.kernel_h = s.kernel_w = k, s.stride_h = s.stride_w = stride, s.dilation_h = s.dilation_w = 1;
      const int64_t blocks[] = {kTileBlock, kOtherTileBlock, 16, 8, 4, 1};
      s.in_block = blocks[c.uniform(0, 5)];
      // Tiny planes, small ones (the kernels copy those into a bordered plane) and large ones (the border
      // tiles then mask their loads), these with fewer channels.
      const int64_t plane_kind = c.uniform(0, 3);
      s.in_h = plane_kind == 0 ? c.uniform(1, 4) : plane_kind == 1 ? c.uniform(1, 24) : c.uniform(20, 50);
      s.in_w = plane_kind == 0 ? c.uniform(1, 4) : plane_kind == 1 ? c.uniform(1, 41) : c.uniform(24, 70);
      s.channels = plane_kind < 2 ? c.channels_for(s.in_block) : s.in_block * c.uniform(1, 32 / s.in_block + 1);
      s.out_block = c.out_block_for(s.in_block, s.channels);
      // Mostly the usual K / 2 padding; sometimes none, less, more, or beyond the kernel's reach.
      auto pad = [&]() { return c.uniform(0, 2) ? k / 2 : c.uniform(0, k + 1); };
      s.pad_top = pad(), s.pad_left = pad(), s.pad_bottom = pad(), s.pad_right = pad();
      if (s.in_h + s.pad_top + s.pad_bottom < k) s.pad_bottom = k - s.in_h - s.pad_top + c.uniform(0, 1);
      if (s.in_w + s.pad_left + s.pad_right < k) s.pad_right = k - s.in_w - s.pad_left + c.uniform(0, 1);
      c.check(isa, s, c.zero_point(), c.uniform(0, 2) ? 1 : 4);
      if (HasFatalFailure()) return;
    }
  EXPECT_GT(c.checked(), 0);
}

// Everything else: other kernel sizes (square or not), strides 1 to 3 (unequal too), dilation.
TEST(QConvDepthwiseX86, GeneralShapesMatchReference) {
  const std::vector<Int8Isa> isas = running_isas();
  if (isas.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
  Checker c(20261202);
  for (const Int8Isa& isa : isas)
    for (int iter = 0; iter < 120; ++iter) {
      Shape s;
      s.kernel_h = c.uniform(1, 7), s.kernel_w = c.uniform(1, 7);
      s.stride_h = c.uniform(1, 3), s.stride_w = c.uniform(1, 3);
      s.dilation_h = c.uniform(1, 3), s.dilation_w = c.uniform(1, 3);
      const int64_t blocks[] = {16, 8, 4, 1};
      s.in_block = blocks[c.uniform(0, 3)];
      s.channels = c.channels_for(s.in_block);
      s.out_block = c.out_block_for(s.in_block, s.channels);
      s.pad_top = c.uniform(0, s.kernel_h), s.pad_left = c.uniform(0, s.kernel_w);
      s.pad_bottom = c.uniform(0, s.kernel_h), s.pad_right = c.uniform(0, s.kernel_w);
      s.in_h = c.uniform(1, 14), s.in_w = c.uniform(1, 14);
      const int64_t reach_h = s.dilation_h * (s.kernel_h - 1) + 1, reach_w = s.dilation_w * (s.kernel_w - 1) + 1;
      if (s.in_h + s.pad_top + s.pad_bottom < reach_h) s.pad_bottom = reach_h - s.in_h - s.pad_top;
      if (s.in_w + s.pad_left + s.pad_right < reach_w) s.pad_right = reach_w - s.in_w - s.pad_left;
      c.check(isa, s, c.zero_point(), c.uniform(0, 1) ? 1 : 3);
      if (HasFatalFailure()) return;
    }
  EXPECT_GT(c.checked(), 0);
}

// The layers of MobileNetV2 and RetinaFace-MobileNet0.25 the kernels exist for (planes cut down, edges
// kept), each ISA, both the layout block and plain output, split as two threads would.
TEST(QConvDepthwiseX86, NetworkLayersMatchReference) {
  const std::vector<Int8Isa> isas = running_isas();
  if (isas.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
  Checker c(20261203);
  struct Layer {
    int64_t channels, h, w, k, stride;
  };
  const Layer layers[] = {{8, 40, 40, 3, 1},   {16, 40, 40, 3, 2}, {32, 20, 20, 3, 1}, {96, 28, 28, 3, 2},
                          {144, 14, 14, 3, 1}, {960, 7, 7, 3, 1},  {64, 10, 10, 5, 1}, {48, 15, 15, 5, 2}};
  for (const Int8Isa& isa : isas)
    for (const Layer& l : layers)
      for (int64_t out_block : {int64_t(0), int64_t(1)}) {
        Shape s{l.channels, l.h, l.w, l.k, l.k, l.stride, l.stride, 1, 1, l.k / 2, l.k / 2, l.k / 2, l.k / 2, 0, 0};
        s.in_block = l.channels % kTileBlock == 0 ? kTileBlock : kOtherTileBlock;
        s.out_block = out_block == 0 ? s.in_block : 1;
        c.check(isa, s, c.zero_point(), 2);
        if (HasFatalFailure()) return;
      }
}

// Padding taps must read the zero point, not zero: with every input at the zero point, every output is the
// bias alone, whatever the padding.
TEST(QConvDepthwiseX86, PaddingReadsTheZeroPoint) {
  const std::vector<Int8Isa> isas = running_isas();
  if (isas.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512 VNNI";
  for (const Int8Isa& isa : isas)
    for (int64_t k : {3, 5}) {
      const int64_t C = 16, H = 6, W = 9, pad = k / 2 + 1;
      const int32_t zp = 200;
      const X86QDepthwiseLayout layout = isa.layout(kTileBlock);
      std::vector<int8_t> w(static_cast<size_t>(C * k * k), 100);
      std::vector<int8_t> packed(static_cast<size_t>(qdepthwise_packed_bytes(layout, C, k, k)));
      pack_qdepthwise_weights(layout, w.data(), C, k, k, packed.data());
      const int32_t bias = 1000;
      std::vector<int32_t> folded(static_cast<size_t>(C),
                                  bias - (zp - isa.input_shift) * 100 * static_cast<int32_t>(k * k));
      std::vector<float> multiplier(static_cast<size_t>(C), 1.f / 8);
      std::vector<uint8_t> x(static_cast<size_t>(C * H * W), static_cast<uint8_t>(zp));
      X86QConvArgs a;
      a.in_channels = a.out_channels = a.groups = C;
      a.in_channels_per_group = a.out_channels_per_group = 1;
      a.in_h = H, a.in_w = W, a.kernel_h = a.kernel_w = k, a.pad_top = a.pad_left = pad;
      a.out_h = H + 2 * pad - k + 1, a.out_w = W + 2 * pad - k + 1;
      a.in_block = a.out_block = kTileBlock;
      a.weights = packed.data(), a.bias = folded.data(), a.x_zero_point = zp;
      a.requantize.multiplier = multiplier.data();
      a.x = x.data();
      std::vector<uint8_t> y(static_cast<size_t>(C * a.out_h * a.out_w), 0);
      a.y = y.data();
      X86ConvRange r;
      r.oc_block_begin = 0, r.oc_block_end = C / layout.lanes, r.row_begin = 0, r.row_end = a.out_h;
      isa.depthwise(a, r);
      for (uint8_t v : y) ASSERT_EQ(v, bias / 8) << isa.name << " " << k << "x" << k;
    }
}

}  // namespace
}  // namespace ninegrid
#endif
