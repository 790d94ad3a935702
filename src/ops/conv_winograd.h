// Winograd F(m x m, 3 x 3) convolution on x86 (kernels/x86/winograd_x86.h; the math in
// kernels/ref/winograd_ref.h) for dense 3x3 stride-1 convs: 2.25x (m = 2), 4x (m = 4) or 5x (m = 6)
// fewer multiplications than the direct conv, at the price of transforms, transformed weights
// (alpha^2 / 9 times the direct conv's) and a little more rounding. The same
// shape of interface as FastConv2d (ops/conv_fast.h), so a conv layer can pick either:
//
//   if (WinogradConv2d::supports(p, in_block, out_block, preferred_isa())) {
//     WinogradConv2d conv(p, w, b, act, preferred_isa(), in_block, out_block);  // load time
//     conv.run(x, y, residual, pool);                                          // per inference
//   }
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/pack_weights.h"
#include "core/cpu_features.h"

namespace ninegrid {

class ThreadPool;

// The kinds of core the Winograd cost model has constants for (conv_winograd.cpp): full-rate 512-bit
// FMAs (Intel's AVX-512 Xeons) or half-rate (AMD's Zen 4).
enum class WinogradCore { FullRate512, HalfRate512 };

class WinogradConv2d {
 public:
  // Whether the Winograd kernels compute this conv correctly: 3x3, stride 1, dilation 1, one group,
  // non-negative pads (any channel counts and plane sizes).
  static bool applicable(const Conv2dParams& p);
  // applicable(p) and enough channels (>= 16 in and out) for the transforms to pay: the shape test a
  // per-layer algorithm choice should use.
  static bool supports(const Conv2dParams& p);
  // supports(p), blocks 1, 8 or 16 dividing their channel counts, and a vector ISA (AVX2 or AVX-512,
  // capped by what the CPU has). Either ISA reads and writes any of those blocks.
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // The output tile the constructor picks when given tile = 0: 4 or 2, whichever a cost model of the
  // kernels (GEMM rate, streaming of the transformed weights, transforms; conv_winograd.cpp) finds faster.
  // (6 is never chosen on its own: it rounds worse than 4, past the optimiser tests' tolerance; see
  // conv_winograd.cpp. The constructor's `tile` forces it, from ExecSettings::winograd_tile.)
  static int default_tile(const Conv2dParams& p, Isa isa);
  // The same for a given kind of core (the choices above use this_core()).
  static int default_tile(const Conv2dParams& p, Isa isa, WinogradCore core);
  // The kind of core this process runs on, as the cost model sees it.
  static WinogradCore this_core();
  // The same model's estimate of (direct conv time) / (Winograd time with the default tile) for one image
  // (0 when not applicable): Winograd pays on planes large enough to reuse its alpha^2 / 9 times larger
  // transformed weights, e.g. about 2.5 for ResNet's 64-channel 56x56 layers, about 1.2 at 512 channels
  // 7x7, where the weights' streaming from memory bounds both. A per-layer choice can require > 1.
  static double estimated_speedup(const Conv2dParams& p, Isa isa);
  static double estimated_speedup(const Conv2dParams& p, Isa isa, WinogradCore core);

  // Transforms the weights (OIHW) once; `bias` has out_channels values or is null; a PRelu activation's
  // slopes are copied. `tile` is the output tile side m: 2, 4, 6, or 0 for default_tile(p, isa). Throws Error when
  // the conv is not applicable, a block is invalid, or the ISA (capped by the CPU) is not AVX2/AVX-512.
  WinogradConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
                 Isa isa, int64_t in_block, int64_t out_block, int tile = 0);

  // y = activation(conv(x) + bias + residual) for the whole batch: x in the input block, y and the
  // optional residual (may be y itself) in the output block. `pool` may be null (one thread). Safe to
  // call from several threads at once (the scratch is per calling thread).
  void run(const float* x, float* y, const float* residual, ThreadPool* pool) const;

  // "winograd23" (F(2x2, 3x3)), "winograd43" or "winograd63".
  const char* algorithm() const { return tile_ == 2 ? "winograd23" : tile_ == 6 ? "winograd63" : "winograd43"; }
  const char* isa() const { return isa_name(isa_); }
  int tile() const { return tile_; }
  const Conv2dParams& params() const { return params_; }

 private:
  Conv2dParams params_;
  Isa isa_ = Isa::Ref;
  int tile_ = 4;
  int64_t in_block_ = 1, out_block_ = 1;
  int64_t lanes_ = 16;
  int64_t ic_padded_ = 0, oc_padded_ = 0;
  int64_t tiles_h_ = 0, tiles_w_ = 0;
  int64_t chunk_tiles_ = 0;  // tiles per chunk (the scratch holds one chunk's v and mm)
  int64_t u_group_vectors_ = 1;  // output-channel vectors per group of the transformed weights
  AlignedFloats u_, bias_, slope_;
  Activation activation_;
};

}  // namespace ninegrid
