// The fast int8 2-D convolution behind ng.QConv (x86-64 and AArch64): builds the kernel a ConvPlan names
// (the int8 conv policy, ops/qconv_select.h, plans it: VNNI or AVX2, kernels/x86/qconv_kernels_x86.h;
// dotprod or neon, kernels/arm/qconv_kernels_arm.h; direct, pointwise, depthwise, or on x86-64 first-layer,
// Winograd or indirect), prepares its arguments once (packed weights, the zero point folded into the bias,
// per-tap zero-point sums for the borders, per-channel multipliers) and runs it split over the thread pool
// as the plan says. Inputs whose channel block or per-group channel count the kernels cannot read (a plain
// NCHW image, channels not a multiple of the multiply-add depth) are staged per run into a zero-padded
// blocked copy whose padding channels meet zero weights. int8 convs are not laid out by the layout search.
//
//   FastQConv2d conv(p, w, q, x_zero_point, choose_qconv_plan(key, settings));  // at prepare time
//   conv.run(x, y, residual, pool);                                             // per inference
#pragma once

#include <cstdint>
#include <vector>

#include "core/aligned_memory.h"
#include "core/cpu_features.h"
#include "kernels/conv_params.h"
#include "kernels/indirection.h"
#include "kernels/quantized.h"
#include "kernels/x86/qconv_first_layer_x86.h"
#include "kernels/x86/qconv_indirect_x86.h"  // (and qconv_kernels_x86.h)
#include "kernels/x86/qconv_winograd_x86.h"
#include "ops/conv_plan.h"
#include "ops/qconv_select.h"  // QConvKernel, and the policy that plans these convs

namespace ninegrid {

class ThreadPool;

class FastQConv2d {
 public:
  // Whether a fast int8 kernel runs this conv with at most `isa`: VNNI when isa is avx512 and the CPU has
  // avx512vnni, AVX2 when isa is at least avx2; on AArch64 dotprod when isa is dotprod and the CPU has it,
  // neon when isa is at least neon; one group, or output channels per group a multiple of the
  // vector's lanes; positive strides and dilations, non-negative pads; any channel blocks dividing their
  // counts; depthwise convs (groups == channels) on qconv2d_depthwise, any blocks. On x86-64 the indirect
  // kernel takes any number of output channels per group.
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                       QConvKernel kernel = QConvKernel::Auto, bool allow_winograd = true);
  // w: OIHW int8 weights; q: bias (out_channels int32 values or null), multiplier (out_channels floats),
  // out_zero_point, qmin, qmax and the residual's zero point and multiplier (q.residual itself is ignored
  // here: run() takes it). `plan` should pass qconv_plan_fits for the conv (with a residual exactly when q
  // has one); the constructor throws Error on a plan whose kernel cannot compute it.
  FastQConv2d(const Conv2dParams& p, const int8_t* w, const Requantization& q, int32_t x_zero_point,
              const ConvPlan& plan);
  // The rules' plan with `kernel` forced (qconv_forced_plan; tests and benchmarks). Throws Error when
  // !supports(...).
  FastQConv2d(const Conv2dParams& p, const int8_t* w, const Requantization& q, int32_t x_zero_point, Isa isa,
              int64_t in_block, int64_t out_block, QConvKernel kernel = QConvKernel::Auto,
              bool allow_winograd = true);
  // y = requantize(conv(x - x_zero_point) + bias [+ residual]) for the whole batch: x in the input block,
  // y and the optional residual (may be y itself) in the output block. `pool` may be null (one thread).
  void run(const uint8_t* x, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const;
  // "int8-avx2-winograd-f2x3"; "int8-vnni-direct", "int8-vnni-pointwise", "int8-vnni-depthwise", "int8-vnni-indirect",
  // "int8-vnni-first-layer", and the same with "int8-avx2-"; "int8-avx2-w7-direct" and "int8-avx2-w7-pointwise"
  // (vpmaddubsw) where the weights cannot saturate it (every same-sign pair of input channels 2j, 2j + 1 at most
  // 128 in magnitude: 7-bit weights); "int8-avx2-w7r-direct" and "-pointwise" (vpmaddubsw on any weights, the
  // pairs beyond that bound split into two halves, one added from rest vectors) where at most half of the
  // packed weight vectors need a rest; "int8-avx2-pointwise" and "int8-avx2-wide-pointwise" (vpmaddwd, on
  // widened inputs); "int8-dotprod-" and "int8-neon-" with direct, pointwise and depthwise.
  // A "-pointwise-strided" name: a 1x1 conv with a stride, run on the pointwise kernel over its input's
  // pixels gathered first.
  const char* algorithm() const { return algorithm_name_; }
  // Whether run() stages the input into a padded blocked copy first.
  bool stages_input() const { return stage_input_; }

 private:
  using Kernel = void (*)(const X86QConvArgs&, const X86ConvRange&);
  using IndirectKernel = void (*)(const X86QIndirectArgs&, int64_t, int64_t);
  void plan_staging(int64_t in_block);
  void pack_direct_weights(const int8_t* w, const Requantization& q, int32_t x_zero_point, bool split_w7);
  void split_w7_block(int64_t b);
  void prepare_depthwise(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                         int64_t in_block, int64_t out_block);
  void prepare_indirect(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                        int64_t in_block, int64_t out_block);
  void prepare_first_layer(bool vnni, const int8_t* w, const Requantization& q, int32_t x_zero_point,
                           int64_t out_block);
  void stage(const uint8_t* x, uint8_t* staged, ThreadPool* pool) const;
  void gather_strided_pixels(const uint8_t* x, uint8_t* gathered, ThreadPool* pool) const;
  void run_kernel(const uint8_t* x, int64_t in_image, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const;
  void run_indirect(const uint8_t* x, int64_t in_image, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const;
  void run_first_layer(const uint8_t* x, uint8_t* y, ThreadPool* pool) const;
  void prepare_winograd(const int8_t* w, const Requantization& q, int32_t x_zero_point, int64_t in_block,
                        int64_t out_block);
  void run_winograd(const uint8_t* x, uint8_t* y, const uint8_t* residual, ThreadPool* pool) const;

  Conv2dParams params_;
  int64_t lanes_ = 16, depth_ = 4;
  int64_t in_block_ = 1;           // the caller's input block
  ConvSplit split_ = ConvSplit::Auto;  // the plan's: auto, serial, or rows (the direct family's tasks)
  bool stage_input_ = false;       // the input restaged into staged_block_ with staged_icpg_ channels per group
  bool subsample_input_ = false;   // a strided 1x1 conv: its pixels gathered into an output-sized plane first
  int64_t staged_icpg_ = 0, staged_block_ = 0;
  int64_t blocks_ = 0;             // output channel blocks of lanes_ channels
  int64_t blocks_per_tile_ = 2;    // blocks a kernel tile computes together: work splits keep them whole
  Kernel kernel_ = nullptr;
  int64_t scratch_floats_ = 0;  // kernel_'s per-thread work area (the wide pointwise kernel's chunk), slot 1
  const char* algorithm_name_ = "";
  AlignedArray<int8_t> weights_;
  std::vector<int32_t> bias_, tap_zero_sums_;
  std::vector<float> multiplier_;
  // The rest vectors of the AVX2 w7r kernels (X86QConvArgs::rest), per output block from rest_begin_.
  std::vector<X86QRestVector> rest_;
  std::vector<int32_t> rest_begin_;
  X86QConvArgs args_;  // everything but the tensors
  // The indirect kernel (set instead of kernel_): its arguments, buffer, zero-point row and work items.
  IndirectKernel indirect_kernel_ = nullptr;
  X86QIndirectArgs indirect_args_;
  IndirectionBuffer indirection_;
  std::vector<uint8_t> tile_interior_, zero_row_;
  // Packed rows (prepare_indirect): the input staged as planes of padded_h_ x padded_w_ bytes.
  bool packed_rows_ = false;
  int64_t padded_h_ = 0, padded_w_ = 0;
  int64_t indirect_items_ = 0;
  // The first-layer kernel (set instead of kernel_): its arguments and packed weights (as int32 words).
  using FirstLayerKernel = void (*)(const X86QFirstLayerArgs&, int64_t, int64_t);
  FirstLayerKernel first_layer_kernel_ = nullptr;
  X86QFirstLayerArgs first_layer_args_;
  std::vector<int32_t> first_layer_weights_, row_zero_sums_;
  // The Winograd kernel (x86-64; set instead of kernel_): its arguments (bias_ and multiplier_ padded to its
  // blocks of 16 output channels) and transformed weights.
  using WinogradKernel = void (*)(const X86QWinogradArgs&, int64_t, int64_t, void*);
  WinogradKernel winograd_kernel_ = nullptr;
  X86QWinogradArgs winograd_args_;
  AlignedArray<int16_t> winograd_weights_;
};

}  // namespace ninegrid
