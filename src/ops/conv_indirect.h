// Indirect convolution on x86 (QNNPACK's algorithm; kernels/indirection.h, kernels/x86/conv_indirect_x86.h)
// for the general case: any kernel size, stride, dilation and padding, grouped convs included, on plain or
// blocked layouts, with no border special cases (padding taps read a zero row) and no im2col copy. The
// same shape of interface as FastConv2d (ops/conv_fast.h) and WinogradConv2d (ops/conv_winograd.h):
//
//   ConvPlan plan = indirect_plan(p, in_block, out_block, isa);   // ops/conv_select.h
//   IndirectConv2d conv(p, w, b, act, plan);                       // load time
//   conv.run(x, y, residual, pool);                                // per inference
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/indirection.h"
#include "kernels/pack_weights.h"
#include "core/cpu_features.h"
#include "ops/conv_plan.h"

namespace ninegrid {

class ThreadPool;

// How the indirect convs (this one and the int8 one, ops/qconv_fast.h) share an image among `threads` > 1
// threads. By rows (true): each thread one band of consecutive tiles through all output channels, so that
// it reads the input rows the layer before wrote in its own core's cache, and writes the rows the next
// layer reads there. By channels (false): each thread a range of output-channel groups over the whole
// plane, reading only its share of the weights. Auto takes rows wherever every thread gets 4 tiles or more,
// which keeps the bands' imbalance small (measured: bench/REPORT.md, "Two threads: the indirect convs by
// rows").
bool indirect_splits_rows(ConvSplit split, int64_t tiles, int64_t threads);

// The kernel arguments `a` (of the whole image's tiles) restricted to band `band` of `bands`, split as
// evenly as whole tiles allow.
template <class Args>
Args indirect_band(Args a, int64_t band, int64_t bands) {
  const int64_t first = band * a.tiles / bands, end = (band + 1) * a.tiles / bands;
  a.first_tile += first;
  a.tiles = end - first;
  return a;
}

class IndirectConv2d {
 public:
  // Whether the kernels compute this conv: a vector ISA (AVX-512 or AVX2, capped by the CPU), blocks 1, 8
  // or 16 dividing their channel counts, positive strides and dilations, non-negative pads, a non-empty
  // output, an input plane under 2^31 pixels, and one group or output channels per group a multiple of 8
  // (16 for the AVX-512 kernels; a multiple of 8 only runs the AVX2 ones).
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // The widest kernels' ISA that supports this conv under the cap `isa` (Ref when none).
  static Isa best_isa(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // Whether the kernels of exactly `isa` compute this conv (AVX2's on an AVX-512 CPU, say).
  static bool fits(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);

  // Builds the indirection buffer for p's input shape and packs the weights (OIHW) once; `bias` has
  // out_channels values or is null; a PRelu activation's slopes are copied. The plan gives the blocks, the
  // kernels' ISA and the split (Auto, Serial, Channels or Rows: indirect_splits_rows below). Throws Error
  // when !fits(p, blocks, plan.isa) or the split is Tiles.
  IndirectConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
                 const ConvPlan& plan);

  // y = activation(conv(x) + bias + residual) for the whole batch: x in the input block, y and the
  // optional residual (may be y itself) in the output block. `pool` may be null (one thread).
  void run(const float* x, float* y, const float* residual, ThreadPool* pool) const;

  const char* algorithm() const { return "indirect"; }
  const char* isa() const { return isa_name(isa_); }
  const Conv2dParams& params() const { return params_; }

 private:
  Conv2dParams params_;
  Isa isa_ = Isa::Ref;
  int64_t lanes_ = 16;
  int64_t in_block_ = 1, out_block_ = 1;
  ConvSplit split_ = ConvSplit::Auto;  // Serial, Channels, Rows or Auto (the rule in run())
  int64_t oc_padded_per_group_ = 0;
  IndirectionBuffer indirection_;
  AlignedFloats weights_, bias_, slope_;
  Activation activation_;
};

}  // namespace ninegrid
