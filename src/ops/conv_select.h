// The per-layer choice of a 2-D convolution algorithm (DESIGN.md techniques 4-8). Every candidate has the
// same interface (prepack at load time, run per inference, output written once with bias, activation and
// residual fused), so the Conv op holds one Conv2dKernel and does not care which it is:
//
//   winograd   3x3 stride-1 dense convs with enough channels, when the Winograd cost model expects it to
//              beat the direct kernel by a clear margin (ops/conv_winograd.h);
//   strassen   large 1x1 convs where one level of Strassen's recursion pays (ops/conv_strassen.h);
//   indirect   dense strided convs past the first layer and dense convs on small planes, where it
//              measured faster than the direct kernel (ops/conv_indirect.h);
//   direct     the register-blocked direct, pointwise and depthwise kernels (ops/conv_fast.h);
//   indirect   again, for what the direct kernels cannot do (grouped convs with few channels per group).
// When none applies the caller runs the reference kernel.
//
// ExecSettings::conv_algorithms (Options::conv_algorithms) restricts the choice: a wrong answer can be
// bisected to an algorithm, and benchmarks can compare them; ExecSettings::winograd_tile forces a tile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "ops/exec_settings.h"

namespace ninegrid {

class ThreadPool;

class Conv2dKernel {
 public:
  virtual ~Conv2dKernel() = default;
  // y = activation(conv(x) + bias + residual) for the whole batch, x in the input block, y and the optional
  // residual (may be y itself) in the output block. `pool` may be null (one thread).
  virtual void run(const float* x, float* y, const float* residual, ThreadPool* pool) const = 0;
  // E.g. "winograd43/avx512", "pointwise/avx2", "indirect/avx512".
  virtual std::string name() const = 0;
};

// Chooses and builds the kernel for one conv (weights OIHW, bias out_channels values or null; a PRelu
// activation's slopes are copied), or returns null when no vector kernel among the settings' algorithms
// handles this shape, layout and ISA.
std::unique_ptr<Conv2dKernel> select_conv2d_kernel(const Conv2dParams& p, const float* weights, const float* bias,
                                                   const Activation& activation, int64_t in_block, int64_t out_block,
                                                   const ExecSettings& settings);

}  // namespace ninegrid
