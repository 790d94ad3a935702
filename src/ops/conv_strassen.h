// Strassen's algorithm for large 1x1 convolutions (the MNN article in ../shared/seeds). A 1x1 stride-1
// conv is the GEMM Y[oc][pixel] = W[oc][ic] X[ic][pixel]; one level of Strassen splits oc, ic and the
// pixels in halves and forms the result from 7 half-size products instead of 8 (1/8 fewer
// multiply-adds), at the price of element-wise sums: the five of W's sub-matrices are made once at load
// time, the five of X's per run, and the products update the output quadrants up to four times each. A
// cost model (ops/conv_cost_model.h) weighs the multiply-adds saved against that extra memory traffic, per
// layer, as MNN does; otherwise the layer runs as one plain register-blocked GEMM.
//
//   ConvPlan plan = strassen_plan(p, in_block, out_block, isa, levels);   // ops/conv_select.h
//   StrassenConv1x1 conv(p, w, b, act, plan);                              // load time
//   conv.run(x, y, residual, pool);                                        // per inference
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/pack_weights.h"
#include "core/cpu_features.h"
#include "ops/conv_plan.h"

namespace ninegrid {

class ThreadPool;

class StrassenConv1x1 {
 public:
  // 1x1, stride 1, no padding, one group; input block 8 or 16; output block 16 (AVX-512 kernels) or 8
  // (AVX2 kernels), the ISA capped by `isa` and the CPU.
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // The kernels' ISA for these blocks under the cap `isa` (the output block's: avx512 for 16, avx2 for 8),
  // Ref when !supports.
  static Isa kernel_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // Whether one level of recursion can run: the channel halves fill whole blocks (in_channels a multiple
  // of 2 in_block, out_channels of 2 out_block) and there are at least 2 pixels.
  static bool splittable(const Conv2dParams& p, int64_t in_block, int64_t out_block);
  // Packs the weights (OIHW, here [oc][ic]) once, with the W-side sums when recursing. The plan gives the
  // blocks, the ISA (the output block's: avx512 for 16, avx2 for 8), the levels (0: one GEMM, 1: one level
  // of Strassen; the cost model is in ops/conv_cost_model.h) and the split (Auto or Serial). Throws Error
  // when !supports, the ISA is not the blocks' one, levels == 1 and !splittable, or a PRelu activation has
  // no slopes.
  StrassenConv1x1(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
                  const ConvPlan& plan);

  // y = activation(conv(x) + bias + residual) for the whole batch; the residual may be y itself.
  void run(const float* x, float* y, const float* residual, ThreadPool* pool) const;

  int levels() const { return levels_; }
  const char* algorithm() const { return levels_ ? "strassen1" : "gemm"; }
  const char* isa() const { return isa_name(isa_); }

 private:
  Conv2dParams params_;
  Isa isa_ = Isa::Ref;
  int64_t lanes_ = 16, in_block_ = 16;
  int levels_ = 0;
  bool serial_ = false;  // run on the calling thread only
  AlignedFloats full_;     // W packed for the kernel (level 0, and the odd last pixel when recursing)
  AlignedFloats half_[7];  // the 7 packed W-side operands of the level-1 products
  AlignedFloats bias_, slope_;
  Activation activation_;
};

}  // namespace ninegrid
