// The fast 2-D convolution behind the Conv op: runs the kernel its ConvPlan names (first-layer,
// depthwise, pointwise or the general direct conv; kernels/x86/conv_kernels_x86.h), prepacks the weights
// once, and runs the kernel split over the thread pool as the plan says. On x86-64 the input may be in any channel block (1, 8, 16); the output is
// written in the requested block (16 with the AVX-512 kernels, 8 with the AVX2 ones, or 1 = plain NCHW).
// On AArch64 the NEON kernels read blocks 1 and 4 (depthwise: any) and write 4 or 1.
//
//   ConvPlan plan = fast_conv_plan(p, in_block, out_block, isa);   // the rules (ops/conv_select.h)
//   FastConv2d conv(p, w, b, act, plan);                            // at load time
//   conv.run(x, y, residual, pool);                                 // per inference
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/pack_weights.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "core/cpu_features.h"
#include "ops/conv_plan.h"

namespace ninegrid {

class ThreadPool;

// Shape classes of the direct family (conv_fast.cpp).
bool conv_is_depthwise(const Conv2dParams& p);  // groups == in_channels == out_channels > 1
bool conv_is_pointwise(const Conv2dParams& p);  // 1x1, stride 1, no padding
// 1x1 with stride > 1 and every pixel read inside the input: gathered, then run as a pointwise conv.
bool conv_is_strided_pointwise(const Conv2dParams& p);
// Positive sizes, strides and dilations, non-negative pads, groups dividing the channels.
bool fast_conv_shape_ok(const Conv2dParams& p);
// Whether the `kernel`'s vector kernels with `lanes` channels per register compute this conv (the
// channel constraints only; FastConv2d::fits adds the ISA's and the blocks').
bool fast_kernel_fits(const Conv2dParams& p, int64_t lanes, ConvKernel kernel);
// The kernel a conv of this shape runs in the direct family (the first-layer kernel aside).
ConvKernel fast_kernel_by_shape(const Conv2dParams& p);
// The row chunks of a direct-family split whose rows are outermost (the image outweighs the weights),
// given the count the split wants: rounded up to a multiple of the threads, so that each thread owns a
// band of rows across all channels, as the convs and element-wise ops around it do (on one image whose
// output has more pixels than channels: where it has fewer, the dense convs around it split by output
// channels, and a depthwise layer keeps to channel groups as they do). Used by FastConv2d and QConv.
int64_t row_band_chunks(const Conv2dParams& p, int64_t row_chunks, int threads);

class FastConv2d {
 public:
  // Whether the kernels of exactly `isa` run this conv as `kernel` (FirstLayer, Direct, Pointwise or
  // Depthwise) with the given input/output blocks:
  //  - out_block 16 needs the AVX-512 kernels, 8 the AVX2 ones or the AVX-512 ones storing vector halves
  //    (from 16 output channels on); either ISA's kernels read input blocks 1, 8 and 16; NEON's write
  //    blocks 4 or 1 and read 1 and 4 (no first-layer kernel);
  //  - dense convs: any channel counts; grouped convs: output channels per group a multiple of the
  //    vector width; depthwise (groups == in == out channels): any channel count and input block (an
  //    input not in the vector width's block is restaged per run); the first layer: a plain image, one
  //    group, stride 1 or 2 along the width;
  //  - positive strides and dilations, non-negative pads; an ISA this CPU runs.
  // Which kernel a conv should use is the policy's choice (ops/conv_select.h), not this class's.
  static bool fits(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa, ConvKernel kernel);

  // Prepacks `weights` (OIHW) and `bias` (out_channels values, or null) for the plan's kernel, ISA and
  // blocks. A PRelu activation's slopes are copied (one per output channel). Throws Error when the plan
  // does not fit (see fits) or asks for a register tile or split this driver lacks.
  FastConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
             const ConvPlan& plan);

  // y = activation(conv(x) + bias + residual) for the whole batch: x in the input block, y and the
  // optional residual (may be y itself) in the output block. `pool` may be null (one thread).
  void run(const float* x, float* y, const float* residual, ThreadPool* pool) const;

  // "direct", "pointwise", "pointwise-strided" (1x1 with stride > 1), "first-layer", "depthwise3x3",
  // "depthwise5x5" or "depthwise" (any other depthwise shape).
  const char* algorithm() const { return algorithm_name_; }
  // The instruction set of the kernels in use: "avx512", "avx2" or "neon".
  const char* isa() const { return isa_name(kernel_isa_); }
  const Conv2dParams& params() const { return params_; }

 private:
  using Kernel = void (*)(const X86ConvArgs&, const X86ConvRange&);

  // Runs the kernel on x in args_.in_block (`in_image` floats per image), split over the pool.
  void run_kernel(const float* x, int64_t in_image, float* y, const float* residual, ThreadPool* pool) const;

  Conv2dParams params_;
  Isa kernel_isa_ = Isa::Ref;
  int64_t lanes_ = 1;
  int64_t in_block_ = 1;       // the caller's input block
  ConvSplit split_ = ConvSplit::Auto;
  bool stage_input_ = false;   // depthwise input restaged into lanes_ blocks before the kernel runs
  int64_t scratch_floats_ = 0;  // per-thread work area of the kernel (the first-layer kernel's window)
  bool subsample_input_ = false;  // strided 1x1: the pixels read gathered into an output-sized plane first
  int64_t blocks_ = 0;          // output channel blocks of lanes_ channels (first-layer: of 8 channels)
  int64_t blocks_per_tile_ = 1;  // blocks a kernel tile computes together: work splits keep them whole
  Kernel kernel_ = nullptr;
  const char* algorithm_name_ = "";
  AlignedFloats weights_, bias_, slope_;
  X86ConvArgs args_;  // everything but the tensors
};

}  // namespace ninegrid
