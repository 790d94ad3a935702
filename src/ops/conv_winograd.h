// Winograd F(m x m, 3 x 3) convolution on x86 (kernels/x86/winograd_x86.h; the math in
// kernels/ref/winograd_ref.h) for dense 3x3 stride-1 convs: 2.25x (m = 2), 4x (m = 4) or 5x (m = 6)
// fewer multiplications than the direct conv, at the price of transforms, transformed weights
// (alpha^2 / 9 times the direct conv's) and a little more rounding. The same
// shape of interface as FastConv2d (ops/conv_fast.h), so a conv layer can pick either:
//
//   ConvPlan plan = winograd_plan(p, in_block, out_block, isa, tile);   // ops/conv_select.h
//   WinogradConv2d conv(p, w, b, act, plan);                             // load time
//   conv.run(x, y, residual, pool);                                      // per inference
#pragma once

#include <cstdint>

#include "kernels/activation.h"
#include "kernels/conv_params.h"
#include "kernels/pack_weights.h"
#include "core/cpu_features.h"
#include "ops/conv_plan.h"

namespace ninegrid {

class ThreadPool;

// The register tiles of an ISA's Winograd kernels (kernels/x86/winograd_x86.h). `wide`: AVX-512's 16
// lanes, which the cost model's constants describe (ops/conv_cost_model.h); the narrower vectors (AVX2's,
// NEON's) take its AVX2 figures.
struct WinogradVectors {
  int64_t lanes, tile_rows, tall_rows, oc_vectors;
  bool wide;
};
WinogradVectors winograd_vectors(Isa isa);

// How the driver walks one image's tiles: in chunks whose scratch stays in L2 (conv_winograd.cpp).
struct WinogradChunks {
  int64_t tiles = 0;        // tiles of one image
  int64_t chunk_tiles = 0;  // tiles per chunk
  int64_t chunks = 0;
};
WinogradChunks winograd_chunks(const Conv2dParams& p, int m, const WinogradVectors& vectors);

// Whether F(m x m)'s chunks on this conv have at most winograd_vectors(isa).tall_rows tiles, so that the
// "tall" register tile (all of a chunk's tiles x one vector) can run them.
bool winograd_fits_tall_tile(const Conv2dParams& p, int m, Isa isa);

// Vectors of output channels per group of the transformed weights, which picks the multiply's register
// tile (kernels/x86/winograd_x86.h): 1 runs chunks that fit the tall tile "tall" (each weight loaded once
// per chunk), oc_vectors runs them "wide" (row blocks x oc_vectors vectors: fewer loads per FMA, the
// weights read once per row block); winograd_vectors(isa) has both counts. oc_tile is the plan's: 1 or 2
// forces one, 0 takes the rule.
int64_t winograd_group_vectors(const Conv2dParams& p, Isa isa, int m, int oc_tile);

class WinogradConv2d {
 public:
  // Whether the Winograd kernels compute this conv correctly: 3x3, stride 1, dilation 1, one group,
  // non-negative pads (any channel counts and plane sizes).
  static bool applicable(const Conv2dParams& p);
  // applicable(p) and enough channels (>= 16 in and out) for the transforms to pay: the shape test a
  // per-layer algorithm choice should use.
  static bool supports(const Conv2dParams& p);
  // applicable(p), blocks 1, 8 or 16 dividing their channel counts, and a vector ISA (AVX2 or AVX-512,
  // capped by what the CPU has): what the constructor accepts. Either ISA reads and writes any of those blocks.
  static bool runs(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // supports(p) and runs(p, in_block, out_block, isa): the policy's test.
  static bool supports(const Conv2dParams& p, int64_t in_block, int64_t out_block, Isa isa);
  // Transforms the weights (OIHW) once; `bias` has out_channels values or is null; a PRelu activation's
  // slopes are copied. The plan gives the ISA, the blocks, the output tile m (2, 4 or 6) and the thread
  // split (Auto, Serial, Tiles or Channels). Throws Error when the conv is not applicable, a block is
  // invalid, or the CPU does not run the plan's ISA.
  WinogradConv2d(const Conv2dParams& p, const float* weights, const float* bias, const Activation& activation,
                 const ConvPlan& plan);

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
  ConvSplit split_ = ConvSplit::Auto;
  int64_t lanes_ = 16;
  int64_t ic_padded_ = 0, oc_padded_ = 0;
  int64_t tiles_h_ = 0, tiles_w_ = 0;
  int64_t chunk_tiles_ = 0;  // tiles per chunk (the scratch holds one chunk's v and mm)
  int64_t u_group_vectors_ = 1;  // output-channel vectors per group of the transformed weights
  AlignedFloats u_, bias_, slope_;
  Activation activation_;
};

}  // namespace ninegrid
