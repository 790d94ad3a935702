// Entry points of the fast x86 int8 kernels (kernels/quantized.h defines the arithmetic they compute, bit for
// bit the same as the reference kernels in kernels/ref/), one set per instruction set:
//   ninegrid::vnni (src/kernels/x86/vnni/, AVX-512 with VNNI: vpdpbusd, 16 int32 accumulator lanes)
//   ninegrid::avx2 (src/kernels/x86/avx2/, AVX2 without VNNI: vpmaddwd on 16-bit values, 8 lanes; it cannot
//                   saturate, unlike vpmaddubsw, so it needs no 7-bit weights; the _w7 direct and pointwise
//                   kernels use vpmaddubsw where the weights allow it)
// Call an ISA's functions only when the CPU has it (core/cpu_features.h: avx512vnni for vnni).
//
// Layouts. Activations are uint8 in NCHW[B]c (B = 1 is plain NCHW). The kernels compute P output channels per
// vector (P = the ISA's lanes) and store them in the output's block: B = P, a divisor of P (one vector is P / B
// consecutive blocks) or 1; lanes past out_channels are never stored.
//
// Plain data only, as in conv_kernels_x86.h (the ISA files must not share inline or template code with
// generic code).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"  // X86ConvRange

namespace ninegrid {

// kernels/quantized.h's QuantizedAdd (y = a + b on uint8 values; ONNX QLinearAdd), as plain data:
//   v = fma(float(b - b_zero_point), b_multiplier, float(a - a_zero_point) * a_multiplier);  clamp to
//   [qmin - out_zero_point, qmax - out_zero_point];  round half to even;  + out_zero_point.
struct X86QuantizedAdd {
  int32_t a_zero_point = 0, b_zero_point = 0, out_zero_point = 0;
  float a_multiplier = 1.f, b_multiplier = 1.f;
  int32_t qmin = 0, qmax = 255;
};

// The requantisation of P int32 sums into P uint8 outputs (kernels/quantized.h's requantize, whose sum there
// already includes the bias):
//   v = float(acc) * multiplier[c];  v = fma(float(r - residual_zero_point), residual_multiplier, v) with a
//   residual;  clamp to [qmin - out_zero_point, qmax - out_zero_point];  round half to even;  + out_zero_point.
struct X86Requantize {
  const float* multiplier = nullptr;  // one per output channel, padded to whole vectors of P (any finite value)
  int32_t out_zero_point = 0;
  int32_t qmin = 0, qmax = 255;
  // The fused residual (uint8, the output's shape and layout), or null.
  const uint8_t* residual = nullptr;
  int32_t residual_zero_point = 0;
  float residual_multiplier = 0.f;
  // With residual_add, the residual is the other operand of a quantised addition after the requantisation
  // (residual_zero_point and residual_multiplier unused): the requantised output q is add's first operand
  // when conv_is_first, else its second.
  bool residual_add = false;
  bool conv_is_first = true;
  X86QuantizedAdd add;
  // Every real channel's multiplier and the residual's meet the bound of the packed store
  // (qconv_epilogue_impl.h, "Packed stores"; set by the op, which checks it once), and there is no fused
  // addition: the direct and pointwise kernels then requantise through it.
  bool packed_store = false;
};

// The bound of the packed store (qconv_epilogue_impl.h, "Packed stores"), as comparisons that a NaN fails:
// each real channel's multiplier, and a fused residual's (never with a fused addition).
inline bool packed_store_multiplier_fits(float m) { return m <= 0.25f && m >= -0.25f; }
inline bool packed_store_residual_fits(bool residual_add, float residual_multiplier) {
  return !residual_add && residual_multiplier <= 1048576.f && residual_multiplier >= -1048576.f;
}

// A weight vector that a direct or pointwise tile adds on top of its packed weights: the AVX2 vpmaddubsw
// kernels on 8-bit weights (avx2::qconv2d_direct_w7r below) split each weight pair that could saturate
// vpmaddubsw into a part packed with the others and a rest, both within the bound, and keep the rests of
// one step and tap of one output block here. Weights [P][kDepth] (8 x 4 bytes on AVX2), for the input
// channels [channel, channel + kDepth) of the block's group at kernel tap (kh, kw).
struct X86QRestVector {
  int32_t channel = 0;
  int16_t kh = 0, kw = 0;
  int8_t weights[32] = {};
};

// One image's quantised convolution with everything prepared for a kernel (the int8 twin of X86ConvArgs;
// ranges are X86ConvRange's, kernels/x86/conv_kernels_x86.h). `P` is the ISA's lane count.
struct X86QConvArgs {
  // Geometry, as in X86ConvArgs.
  int64_t in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;  // out_channels: the real count; stores stop there
  int64_t groups = 1, in_channels_per_group = 0, out_channels_per_group = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t in_block = 1, out_block = 1;
  // Output blocks per register tile, as in X86ConvArgs (the direct and pointwise templates read it): 2, pairs
  // where a group allows, or 1. The int8 drivers keep 2.
  int64_t oc_blocks_per_tile = 2;

  // Prepacked weights (each kernel's entry point gives its packing); zeros for padding channels.
  const int8_t* weights = nullptr;
  // Per output channel, padded to whole vectors: where the sums start, the bias minus x_zero_point times the
  // sum of all the channel's weights (the reference subtracts the zero point from every input inside the
  // image; the kernels multiply the raw bytes and correct once).
  const int32_t* bias = nullptr;
  // Per kernel tap [ceil(out_channels / P)][kernel_h][kernel_w][P]: x_zero_point times the channel's weights of
  // that tap summed over its input channels. An output whose window leaves the image adds back those of its
  // taps outside, which the reference skips and the correction in `bias` counted.
  const int32_t* tap_zero_sums = nullptr;
  // Rest vectors (the _w7r kernels only): those of output block b are rest[rest_begin[b]] up to
  // rest[rest_begin[b + 1]].
  const X86QRestVector* rest = nullptr;
  const int32_t* rest_begin = nullptr;
  int32_t x_zero_point = 0;
  X86Requantize requantize;

  const uint8_t* x = nullptr;  // the input, NCHW[in_block]c
  uint8_t* y = nullptr;        // the output, NCHW[out_block]c
};

// How an x86 int8 depthwise kernel (qconv2d_depthwise below) reads its weights; kernels/qpack_depthwise.h
// packs them so. The kernel computes `lanes` channels per vector: X86ConvRange's channel blocks count such
// vectors, and X86QConvArgs' bias and requantize.multiplier are padded to a whole number of them. Each
// multiply-add takes `taps` consecutive taps of one kernel row for every lane (vpdpbusd 4, vpmaddwd 2).
struct X86QDepthwiseLayout {
  int64_t lanes = 16;
  int64_t taps = 4;
  int64_t weight_bytes = 1;  // 1: int8 weights; 2: int16 (vpmaddwd's operand, packed wide)
};

#define NINEGRID_X86_INT8_KERNELS                                                                          \
  /* int32 sums in NCHW[P]c (one image: ceil(channels / P) blocks of `plane` pixels x P lanes, padding     \
     lanes ignored) requantised into y (block out_block: P, a divisor of P, or 1), channel blocks          \
     [block_begin, block_end) of P channels. The conv kernels' epilogue, callable on its own. */          \
  void requantize_sums(const int32_t* acc, int64_t channels, int64_t plane, const X86Requantize& q,         \
                       int64_t out_block, int64_t block_begin, int64_t block_end, uint8_t* y);                \
  /* Direct convolution (qconv_arith_impl.h on conv_direct_impl.h's tiles): any kernel, stride, dilation,  \
     padding; groups == 1 or output channels per group a multiple of P. Input blocks 16, 8 or 4 (a multiple \
     of kDepth dividing in_channels), in_channels_per_group a multiple of kDepth (the caller stages other   \
     inputs into a padded copy). Weights packed [ceil(out_channels / P)][in_channels_per_group / kDepth]    \
     [kernel_h][kernel_w][P][kDepth]. */                                                                    \
  void qconv2d_direct(const X86QConvArgs& a, const X86ConvRange& r);                                        \
  /* 1x1, stride 1, no padding: the plane as one long row. Same packing and constraints. */                 \
  void qconv2d_pointwise(const X86QConvArgs& a, const X86ConvRange& r);                                     \
  /* ng.QAdd element by element: y[i] = QuantizedAdd(a[i], b[i]) for i in [0, n) (qadd_impl.h); y may be a  \
     or b. */                                                                                               \
  void quantized_add(const X86QuantizedAdd& q, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n);      \
  /* QuantizeLinear / DequantizeLinear between float and uint8 with one scale and zero point, element by     \
     element (quantize_linear_impl.h; bit for bit quantize_linear_ref / dequantize_linear_ref). */          \
  void quantize_u8(const float* x, float scale, int32_t zero_point, uint8_t* q, int64_t n);                  \
  void dequantize_u8(const uint8_t* q, float scale, int32_t zero_point, float* x, int64_t n);

// Depthwise convolution (groups == in_channels == out_channels), declared in both namespaces below: any
// kernel, stride, dilation and padding, any input and output block. Kernels 3x3 and 5x5 with stride 1 or 2
// (both axes) and dilation 1, on input blocks that are a multiple of the layout's lanes, run unrolled
// register tiles with nine-grid borders; the rest a slower path over each output's taps. Padding taps read
// the input zero point, so the weight-sum correction in `bias` is exact everywhere and tap_zero_sums is not
// read. Weights: pack_qdepthwise_weights (kernels/qpack_depthwise.h) with qconv2d_depthwise_layout(in_block).
//   void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r);
//   X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t in_block);
// vnni: 16 lanes (zmm) for input blocks that are a multiple of 16, else 8 (ymm, vpdpbusd on 256 bits).
// avx2: 8 lanes, int16 weights (vpmaddwd on tap pairs).
struct X86ConvRange;

namespace vnni {
constexpr int kLanes = 16;
constexpr int kDepth = 4;  // input channels per vpdpbusd
// Output blocks the direct and pointwise kernels handle together (as conv_kernels_x86.h's).
constexpr int kOcBlocksPerTile = 2;
NINEGRID_X86_INT8_KERNELS
void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r);
X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t in_block);
}  // namespace vnni

namespace avx2 {
constexpr int kInt8Depth = 2;  // input channels per vpmaddwd (kLanes, 8, and kOcBlocksPerTile: conv_kernels_x86.h)
NINEGRID_X86_INT8_KERNELS
// The direct and pointwise kernels on vpmaddubsw (kernels/x86/simd_int8_avx2.h, QVecAvx2W7): 4 input
// channels per multiply-add, weights packed [ceil(out_channels / 8)][icpg / 4][kh][kw][8][4], otherwise the
// constraints above. Exact only when no weight pair (packed bytes 2j, 2j + 1) has the same sign and
// magnitudes summing past 128 (ops/qconv_fast.cpp checks); a pair beyond it saturates vpmaddubsw's 16-bit sums.
constexpr int kInt8DepthW7 = 4;
void qconv2d_direct_w7(const X86QConvArgs& a, const X86ConvRange& r);
void qconv2d_pointwise_w7(const X86QConvArgs& a, const X86ConvRange& r);
// The same kernels on any 8-bit weights, exactly: the packed weights within the bound above, and per tile the
// block's rest vectors (X86QConvArgs::rest) added with the same instructions. ops/qconv_fast.cpp splits
// the weights (split_w7_block) and takes these where few enough of the vectors need a rest.
void qconv2d_direct_w7r(const X86QConvArgs& a, const X86ConvRange& r);
void qconv2d_pointwise_w7r(const X86QConvArgs& a, const X86ConvRange& r);
// qconv2d_pointwise on a staged int16 copy of the input, chunk by chunk (kernels/x86/qconv_pointwise_wide_impl.h):
// the same weights and results, for groups == 1, in_channels a multiple of in_block and out_block 8;
// X86ConvRange::scratch must hold qconv2d_pointwise_wide_scratch_floats(a) floats.
void qconv2d_pointwise_wide(const X86QConvArgs& a, const X86ConvRange& r);
int64_t qconv2d_pointwise_wide_scratch_floats(const X86QConvArgs& a);
void qconv2d_depthwise(const X86QConvArgs& a, const X86ConvRange& r);
X86QDepthwiseLayout qconv2d_depthwise_layout(int64_t in_block);
}  // namespace avx2

#undef NINEGRID_X86_INT8_KERNELS

}  // namespace ninegrid
