// Entry points of the x86 Winograd F(m x m, 3 x 3) kernels (m = 2, 4 or 6; kernels/ref/winograd_ref.h has
// the math), one set per instruction set: ninegrid::avx512 (16 channels per zmm) and ninegrid::avx2
// (8 per ymm). ops/conv_winograd.h drives them; call an ISA's functions only when the CPU has it.
//
// One image is processed in chunks of consecutive tiles (tile t covers output rows [ty * m, ty * m + m)
// and columns [tx * m, tx * m + m) with ty = t / tiles_w, tx = t % tiles_w). Per chunk, three phases,
// each split freely across threads:
//   1. input transform:  x -> v[pos][tile][ic]        (pos = one of the alpha^2 transform positions)
//   2. multiply:         mm[pos][tile][oc] = sum_ic v[pos][tile][ic] * u[pos][ic][oc]
//                        alpha^2 independent GEMMs, register-blocked: kWinogradTileRows tiles x
//                        kWinogradOcVectors vectors of output channels in registers (or, for chunks of
//                        at most kWinogradTallRows tiles, all of them x one vector), the input channels
//                        streaming by.
//   3. output transform: mm -> y, with bias, residual and activation fused at the single store.
//
// Layouts. x is NCHW[in_block]c and y (and the residual) NCHW[out_block]c, blocks 1, 8 or 16 with any
// ISA. Channel counts are padded to whole vectors (L = the ISA's lane count) inside v, mm and u:
//   u: [alpha^2][oc groups][ic_padded][group lanes], a group being u_group_vectors * L output channels
//      (the last group may be narrower), zeros past the real channels; prepared once from the weights.
//      u_group_vectors is 1 when every chunk has at most kWinogradTallRows tiles (the "tall" register
//      tile: all tiles x one vector), else kWinogradOcVectors.
// Plain data only: the ISA files must not share inline or template code with generic code (CMakeLists.txt).
#pragma once

#include <cstdint>

#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {

struct WinogradX86Args {
  int64_t m = 4;  // output tile side (2, 4 or 6); alpha = m + 2
  int64_t in_channels = 0, in_h = 0, in_w = 0, in_block = 1;
  int64_t out_channels = 0, out_h = 0, out_w = 0, out_block = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_w = 0;                    // tiles per tile row
  int64_t ic_padded = 0, oc_padded = 0;   // channel counts rounded up to whole vectors
  int64_t chunk_capacity = 0;             // tile slots in v and mm
  // Floats between consecutive transform positions in v and mm: at least chunk_capacity * ic_padded
  // (oc_padded), plus a cache line so the alpha^2 positions of one tile do not all fall in the same L1
  // set (a multiple of 4 KiB would make the transforms' alpha^2 loads/stores thrash one set).
  int64_t v_pos_stride = 0, mm_pos_stride = 0;

  const float* u = nullptr;     // transformed weights (layout above)
  int64_t u_group_vectors = 1;  // vectors of output channels per group of u
  const float* bias = nullptr;  // oc_padded values, never null
  // The fused activation: only activation, alpha, beta, clip_min, clip_max and slope (oc_padded values)
  // are read, as the direct kernels' epilogue does.
  X86ConvArgs epilogue;

  // One image (the residual may be y itself) and the per-run scratch.
  const float* x = nullptr;
  float* y = nullptr;
  const float* residual = nullptr;
  float* v = nullptr;   // [alpha^2][v_pos_stride]: position pos, tile t at pos * v_pos_stride + t * ic_padded
  float* mm = nullptr;  // [alpha^2][mm_pos_stride], the same with oc_padded
};

#define NINEGRID_X86_WINOGRAD_KERNELS                                                                        \
  /* Phase 1 for the tiles [first + t_begin, first + t_end) of the chunk starting at tile `first`. */        \
  void winograd_input_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end);    \
  /* Phase 2 for the chunk's `tiles` tiles and work items [item_begin, item_end) of                         \
     alpha^2 * ceil(oc_padded / (u_group_vectors * L)), item = pos * groups + group. */                     \
  void winograd_multiply(const WinogradX86Args& a, int64_t tiles, int64_t item_begin, int64_t item_end);     \
  /* Phase 3, tiles as in phase 1. */                                                                       \
  void winograd_output_transform(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end);

namespace avx512 {
constexpr int kWinogradOcVectors = 2;  // output-channel vectors per register tile
constexpr int kWinogradTileRows = 12;  // tiles per register tile
constexpr int kWinogradTallRows = 16;  // tiles per register tile of one vector
NINEGRID_X86_WINOGRAD_KERNELS
}  // namespace avx512

namespace avx2 {
constexpr int kWinogradOcVectors = 2;
constexpr int kWinogradTileRows = 6;
constexpr int kWinogradTallRows = 12;
NINEGRID_X86_WINOGRAD_KERNELS
}  // namespace avx2

namespace neon {  // AArch64 (src/kernels/arm/neon/), 4 lanes
// 32 registers, as AVX-512: the same register tiles.
constexpr int kWinogradOcVectors = 2;
constexpr int kWinogradTileRows = 12;
constexpr int kWinogradTallRows = 16;
NINEGRID_X86_WINOGRAD_KERNELS
}  // namespace neon

#undef NINEGRID_X86_WINOGRAD_KERNELS

}  // namespace ninegrid
