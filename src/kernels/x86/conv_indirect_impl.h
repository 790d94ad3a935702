// The indirect convolution kernel (kernels/x86/conv_indirect_x86.h) for an arithmetic policy A, as the
// direct kernels have (conv_direct_impl.h): FloatIndirectArith<V> below (fp32, L = V::kLanes channels per
// vector) and QuantIndirectArith<QV> (qconv_indirect_impl.h: uint8 x int8, requantising epilogue). The policy
// gives
//   Args, In, Wt, T, X, W   the kernel arguments, input and weight element types, accumulator, broadcast
//                           input and weight vectors
//   kLanes, kDepth          output channels per vector; input channels per multiply-add (fp32: 1)
//   kInteriorTiles, interior(a, tile)  whether the kernel has a path for tiles without padding entries, and
//                           whether tile `tile` is one
//   kPackedRows             whether Args may ask for packed rows (a.packed_rows; qconv_indirect_impl.h)
//   zero_row(a)             what the indirection buffer's padding entries read: at least 16 inputs whose
//                           products vanish from the result (fp32: zeros; int8: the input zero point, which
//                           the folded bias cancels)
//   load_weights, broadcast, madd, start(a, cp)   (start: where the sums of padded channel cp's vector begin)
//   store_tile<MR, NB>(a, acc, cp, c, pixel0, rows)  the tile's sums of padded channels [cp, cp + NB L)
//                           (real channels from c, all in one conv group) at its first `rows` pixels
// Weights are packed per conv group and vector group [tap][icpg / kDepth][lanes of the vector group][kDepth].
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/channel_vectors_impl.h"
#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_indirect_x86.h"

namespace ninegrid {
namespace {

// What the indirection buffer's padding entries point at: a run of at most 16 input channels of zeros.
alignas(64) const float kIndirectZeroRow[16] = {};

// fp32: one input channel per FMA, the fused activation and residual in the epilogue.
template <class V>
struct FloatIndirectArith {
  using Args = IndirectX86Args;
  using In = float;
  using Wt = float;
  using T = typename V::T;
  using X = T;
  using W = T;
  static constexpr int kLanes = V::kLanes;
  static constexpr int kDepth = 1;
  static const float* zero_row(const Args&) { return kIndirectZeroRow; }
  static constexpr bool kInteriorTiles = false;  // (one path for every tile, as before the int8 policy)
  static constexpr bool kPackedRows = false;
  static bool interior(const Args&, int64_t) { return false; }
  __attribute__((always_inline)) static W load_weights(const float* p) { return V::load(p); }
  __attribute__((always_inline)) static X broadcast(const float* p) { return V::broadcast(p); }
  __attribute__((always_inline)) static T madd(X x, W w, T acc) { return V::fmadd(x, w, acc); }
  __attribute__((always_inline)) static T start(const Args& a, int64_t cp) { return V::load(a.bias + cp); }
  // One store per vector. (Fully unrolled so the accumulators are only ever indexed by constants and stay
  // in registers.)
  template <int MR, int NB>
  __attribute__((always_inline)) static void store_tile(const Args& a, T (&acc)[MR][NB], int64_t cp, int64_t c,
                                                        int64_t pixel0, int64_t rows) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) store(a, acc[r][j], cp + j * kLanes, c + j * kLanes, pixel0 + r);
    }
  }
  // Residual, activation, one store in the output's block.
  __attribute__((always_inline)) static void store(const Args& a, T value, int64_t cp, int64_t c, int64_t pixel) {
    constexpr int L = kLanes;
    switch (a.out_block) {
      case 16:
        if (a.residual) value = V::add(value, load_channels<V, 16>(a.residual, a.out_channels, a.out_plane, c, pixel));
        store_channels<V, 16>(a.y, a.out_channels, a.out_plane, c, pixel, activate<V>(a.epilogue, value, cp / L));
        break;
      case 8:
        if (a.residual) value = V::add(value, load_channels<V, 8>(a.residual, a.out_channels, a.out_plane, c, pixel));
        store_channels<V, 8>(a.y, a.out_channels, a.out_plane, c, pixel, activate<V>(a.epilogue, value, cp / L));
        break;
      case 4:  // NCHW4c: NEON's block only
        if constexpr (L == 4) {
          if (a.residual) value = V::add(value, load_channels<V, 4>(a.residual, a.out_channels, a.out_plane, c, pixel));
          store_channels<V, 4>(a.y, a.out_channels, a.out_plane, c, pixel, activate<V>(a.epilogue, value, cp / L));
          break;
        }
        [[fallthrough]];
      default:
        if (a.residual) value = V::add(value, load_channels<V, 1>(a.residual, a.out_channels, a.out_plane, c, pixel));
        store_channels<V, 1>(a.y, a.out_channels, a.out_plane, c, pixel, activate<V>(a.epilogue, value, cp / L));
        break;
    }
  }
};

// The accumulation over input channels [ic_begin, ic_end) in runs that stay within one input block (for
// groups whose channels do not start or end on a block boundary; runs are whole steps of kDepth).
template <class A, int MR, int NB, int PIN, int PS>
inline void indirect_channel_runs(const typename A::Args& a, const int32_t* entries, const typename A::Wt* w,
                                  int64_t ic_begin, int64_t ic_end, typename A::T (&acc)[MR][NB]) {
  using In = typename A::In;
  using Wt = typename A::Wt;
  constexpr int L = A::kLanes, D = A::kDepth;
  const int64_t icpg = ic_end - ic_begin;
  const In* const zero = A::zero_row(a);
  for (int64_t ic = ic_begin; ic < ic_end;) {
    // Channels ic .. ic + run - 1 sit in one input block: PIN-interleaved at every pixel.
    const int64_t run = imin(PIN - ic % PIN, ic_end - ic);
    const In* base = a.x + (ic / PIN) * a.in_plane * PS + ic % PIN;
    for (int64_t tap = 0; tap < a.taps; ++tap) {
      const int32_t* e = entries + tap * MR;
      const In* in[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) in[r] = e[r] >= 0 ? base + e[r] * PS : zero;
      const Wt* wt = w + (tap * icpg + (ic - ic_begin)) * (NB * L);
      for (int64_t i = 0; i < run; i += D) {
        typename A::W wv[NB];
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) wv[j] = A::load_weights(wt + i * (NB * L) + j * L * D);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const typename A::X b = A::broadcast(in[r] + i);
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) acc[r][j] = A::madd(b, wv[j], acc[r][j]);
        }
      }
    }
    ic += run;
  }
}

// One tap of an interior tile whose group has exactly K multiply-add steps per tap (K * kDepth input
// channels; few, as a first layer's): the K weight vectors stay in registers while each pixel's row pointer,
// set up once, feeds its K broadcasts, where the general order (steps outermost) sets up or reloads every
// pixel's pointer once per step. With a first layer's 3 steps that is 12 + 3 + 36 loads per tile and tap
// instead of 12 + 3 x (1 + 12 + 12): the loads, not the multiply-adds, bound such a tile. One vector of
// output channels only (K + MR accumulators and weights fit the registers).
template <class A, int MR, int PIN, int PS, int K>
__attribute__((always_inline)) inline void indirect_tap_few_steps(const int32_t* e, const typename A::Wt* wt,
                                                                  const typename A::In* x0, int64_t block_step,
                                                                  typename A::T (&acc)[MR][1]) {
  constexpr int L = A::kLanes, D = A::kDepth;
  typename A::W wv[K];
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) wv[k] = A::load_weights(wt + k * D * L);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const typename A::In* p = x0 + static_cast<int64_t>(e[r]) * PS;
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) {
      const typename A::X bv = A::broadcast(p + (k * D / PIN) * block_step + (k * D) % PIN);
      acc[r][0] = A::madd(bv, wv[k], acc[r][0]);
    }
  }
}

// The accumulation over a group whose channels fill whole input blocks (the common case): taps outermost,
// so the row pointers are set up once per tap, then each steps from block to block, the channels of a block
// streaming by. INTERIOR: no entry of the tile is padding (A::interior), so the pointers need no test and
// step together (one offset in the addressing, not MR additions): with few channels per tap (a first
// layer's 4) the setup is most of the work per tap. Otherwise a padding row reads A::zero_row and steps by 0.
template <class A, int MR, int NB, int PIN, int PS, bool INTERIOR>
__attribute__((always_inline)) inline void indirect_blocks(const typename A::Args& a, const int32_t* entries,
                                                           const typename A::Wt* w, const typename A::In* x0,
                                                           int64_t icpg, typename A::T (&acc)[MR][NB]) {
  using In = typename A::In;
  using Wt = typename A::Wt;
  constexpr int L = A::kLanes, D = A::kDepth;
  const int64_t block_step = a.in_plane * PS;
  for (int64_t tap = 0; tap < a.taps; ++tap) {
    const int32_t* e = entries + tap * MR;
    const Wt* wt = w + tap * icpg * (NB * L);
    if constexpr (INTERIOR) {
      if constexpr (NB == 1) {
        switch (icpg / D) {  // the group's multiply-add steps per tap
          case 1: indirect_tap_few_steps<A, MR, PIN, PS, 1>(e, wt, x0, block_step, acc); continue;
          case 2: indirect_tap_few_steps<A, MR, PIN, PS, 2>(e, wt, x0, block_step, acc); continue;
          case 3: indirect_tap_few_steps<A, MR, PIN, PS, 3>(e, wt, x0, block_step, acc); continue;
          case 4: indirect_tap_few_steps<A, MR, PIN, PS, 4>(e, wt, x0, block_step, acc); continue;
          default: break;
        }
      }
      const In* in[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) in[r] = x0 + static_cast<int64_t>(e[r]) * PS;
      for (int64_t offset = 0; offset < icpg / PIN * block_step; offset += block_step) {
        for (int i = 0; i < PIN; i += D) {
          typename A::W wv[NB];
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) wv[j] = A::load_weights(wt + i * (NB * L) + j * L * D);
#pragma GCC unroll 16
          for (int r = 0; r < MR; ++r) {
            const typename A::X bv = A::broadcast(in[r] + offset + i);
#pragma GCC unroll 4
            for (int j = 0; j < NB; ++j) acc[r][j] = A::madd(bv, wv[j], acc[r][j]);
          }
        }
        wt += PIN * (NB * L);
      }
    } else {
      const In* const zero = A::zero_row(a);
      const In* in[MR];
      int64_t step[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const bool inside = e[r] >= 0;
        in[r] = inside ? x0 + e[r] * PS : zero;
        step[r] = inside ? block_step : 0;
      }
      for (int64_t b = 0; b < icpg / PIN; ++b) {
        for (int i = 0; i < PIN; i += D) {
          typename A::W wv[NB];
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) wv[j] = A::load_weights(wt + i * (NB * L) + j * L * D);
#pragma GCC unroll 16
          for (int r = 0; r < MR; ++r) {
            const typename A::X bv = A::broadcast(in[r] + i);
#pragma GCC unroll 4
            for (int j = 0; j < NB; ++j) acc[r][j] = A::madd(bv, wv[j], acc[r][j]);
          }
        }
        wt += PIN * (NB * L);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) in[r] += step[r];
      }
    }
  }
}

// One register tile: output pixels [pixel0, pixel0 + MR) (entries: their tile of the indirection buffer)
// x NB vectors of output channels starting at padded channel `cp` (real channel `c`) of conv group
// `group`; w: the packed weights of those vectors. PIN: the input's channel block. interior: no entry of
// the tile is padding (only ever true for policies with kInteriorTiles).
template <class A, int MR, int NB, int PIN, int PS>
inline void indirect_tile(const typename A::Args& a, const int32_t* entries, const typename A::Wt* w, int64_t group,
                          int64_t cp, int64_t c, int64_t pixel0, bool interior) {
  using T = typename A::T;
  using In = typename A::In;
  constexpr int L = A::kLanes;
  T acc[MR][NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const T bias = A::start(a, cp + j * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][j] = bias;
  }
  const int64_t icpg = a.in_channels_per_group;
  const int64_t ic_begin = group * icpg, ic_end = ic_begin + icpg;
  if (ic_begin % PIN == 0 && icpg % PIN == 0) {
    const In* x0 = a.x + (ic_begin / PIN) * a.in_plane * PS;
    if (A::kInteriorTiles && interior)
      indirect_blocks<A, MR, NB, PIN, PS, A::kInteriorTiles>(a, entries, w, x0, icpg, acc);
    else
      indirect_blocks<A, MR, NB, PIN, PS, false>(a, entries, w, x0, icpg, acc);
  } else {
    // Groups that split input blocks: runs of channels within one block, pointers set up per run and tap.
    indirect_channel_runs<A, MR, NB, PIN, PS>(a, entries, w, ic_begin, ic_end, acc);
  }
  // Epilogue: the tile's first `rows` pixels (those inside the plane) stored.
  A::template store_tile<MR, NB>(a, acc, cp, c, pixel0, imin(MR, a.out_plane - pixel0));
}

template <class A, int MR, int NB, int PIN, int PS>
inline void indirect_tile_vectors(int64_t vectors, const typename A::Args& a, const int32_t* entries,
                                  const typename A::Wt* w, int64_t group, int64_t cp, int64_t c, int64_t pixel0,
                                  bool interior) {
  if (vectors < NB) {
    if constexpr (NB > 1)
      indirect_tile_vectors<A, MR, NB - 1, PIN, PS>(vectors, a, entries, w, group, cp, c, pixel0, interior);
  } else {
    indirect_tile<A, MR, NB, PIN, PS>(a, entries, w, group, cp, c, pixel0, interior);
  }
}

// Work items [item_begin, item_end) on an input whose channel blocks hold PIN channels and whose
// indirection entries count pixels of PS elements (PS = PIN: the blocked layout; A::kPackedRows' rows: PS 1).
template <class A, int MR, int NB, int PIN, int PS>
void indirect_items(const typename A::Args& a, int64_t item_begin, int64_t item_end) {
  constexpr int L = A::kLanes;
  const int64_t group_lanes = NB * L;
  const int64_t vector_groups = (a.oc_padded_per_group + group_lanes - 1) / group_lanes;
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t tile = a.first_tile + item % a.tiles;
    const int64_t group = item / a.tiles / vector_groups, vg = item / a.tiles % vector_groups;
    const int64_t vectors = imin(NB, (a.oc_padded_per_group - vg * group_lanes) / L);
    const int64_t cp = group * a.oc_padded_per_group + vg * group_lanes;  // padded channel
    const int64_t c = group * a.out_channels_per_group + vg * group_lanes;  // real channel
    const typename A::Wt* w = a.weights + cp * a.taps * a.in_channels_per_group;
    indirect_tile_vectors<A, MR, NB, PIN, PS>(vectors, a, a.indirection + tile * a.taps * MR, w, group, cp, c, tile * MR,
                                          A::interior(a, tile));
  }
}

// The kernel for the policy A, on the input blocks its Args can hold (16 and 8; 4 for NEON's 4 lanes and
// for int8; 1, plain NCHW, for fp32), or on packed rows where A::kPackedRows and the arguments say so.
template <class A, int MR, int NB>
void indirect_conv_tiles(const typename A::Args& a, int64_t item_begin, int64_t item_end) {
  if constexpr (A::kPackedRows) {
    if (a.packed_rows) {
      indirect_items<A, MR, NB, 4, 1>(a, item_begin, item_end);
      return;
    }
  }
  switch (a.in_block) {
    case 16: indirect_items<A, MR, NB, 16, 16>(a, item_begin, item_end); break;
    case 8: indirect_items<A, MR, NB, 8, 8>(a, item_begin, item_end); break;
    case 4:  // NCHW4c: NEON's block, and int8's staged inputs
      if constexpr (A::kLanes == 4 || A::kDepth > 1) {
        indirect_items<A, MR, NB, 4, 4>(a, item_begin, item_end);
        break;
      }
      [[fallthrough]];
    default:
      if constexpr (A::kDepth == 1) indirect_items<A, MR, NB, 1, 1>(a, item_begin, item_end);
      break;
  }
}

// The fp32 kernel on vectors V.
template <class V, int MR, int NB>
void indirect_conv(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  indirect_conv_tiles<FloatIndirectArith<V>, MR, NB>(a, item_begin, item_end);
}

}  // namespace
}  // namespace ninegrid
