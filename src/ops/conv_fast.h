// The fast 2-D convolution behind the Conv op: chooses a kernel by shape (depthwise, pointwise or the
// general direct conv; kernels/x86/conv_kernels_x86.h), prepacks the weights once, and runs the kernel
// split over the thread pool. On x86-64 the input may be in any channel block (1, 8, 16); the output is
// written in the requested block (16 with the AVX-512 kernels, 8 with the AVX2 ones, or 1 = plain NCHW).
// On AArch64 the NEON kernels read blocks 1 and 4 (depthwise: any) and write 4 or 1.
//
//   if (FastConv2d::supports(p, in_block, out_block, preferred_isa())) {
//     FastConv2d conv(p, w, b, act, preferred_isa(), in_block, out_block);   // at load time
//     conv.run(x, y, residual, pool);                                          // per inference
//   }
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/pack_weights.h"
#include "kernels/x86/conv_kernels_x86.h"
#include "core/cpu_features.h"

namespace ninegrid {

class ThreadPool;

// Which kernel to use. Auto picks by shape; the others force one (tests and benchmarks).
enum class ConvAlgorithm { Auto, Direct, Pointwise, Depthwise, FirstLayer };

class FastConv2d {
 public:
  // Whether a fast kernel handles this conv with the given input/output blocks using at most `isa`:
  //  - out_block 16 needs AVX-512, 8 AVX2 (or AVX-512's kernels storing vector halves, chosen from 16
  //    output channels on); either ISA's kernels read input blocks 1, 8 and 16; out_block 4 needs NEON,
  //    whose kernels read input blocks 1 and 4 (no first-layer kernel);
  //  - dense convs: any channel counts; grouped convs: output channels per group a multiple of the
  //    vector width; depthwise (groups == in == out channels): any channel count and input block (an
  //    input not in the vector width's block is restaged per run);
  //  - positive strides and dilations, non-negative pads.
  // Otherwise the caller falls back to the reference kernels.
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa,
                       ConvAlgorithm algorithm = ConvAlgorithm::Auto);

  // Prepacks `weights` (OIHW) and `bias` (out_channels values, or null). A PRelu activation's slopes are
  // copied (one per output channel). Throws Error when !supports(...).
  FastConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation, Isa isa,
             int64_t in_block, int64_t out_block, ConvAlgorithm algorithm = ConvAlgorithm::Auto);

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
