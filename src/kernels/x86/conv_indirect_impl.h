// The indirect convolution kernel (kernels/x86/conv_indirect_x86.h) for a vector type V of L = V::kLanes
// channels. Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/channel_vectors_impl.h"
#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_indirect_x86.h"

namespace ninegrid {
namespace {

// What the indirection buffer's padding entries point at: a run of at most 16 input channels of zeros.
alignas(64) const float kIndirectZeroRow[16] = {};

// The accumulation over input channels [ic_begin, ic_end) in runs that stay within one input block (for
// groups whose channels do not start or end on a block boundary).
template <class V, int MR, int NB, int PIN>
inline void indirect_channel_runs(const IndirectX86Args& a, const int32_t* entries, const float* w, int64_t ic_begin,
                                  int64_t ic_end, typename V::T (&acc)[MR][NB]) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  const int64_t icpg = ic_end - ic_begin;
  for (int64_t ic = ic_begin; ic < ic_end;) {
    // Channels ic .. ic + run - 1 sit in one input block: PIN-interleaved at every pixel.
    const int64_t run = imin(PIN - ic % PIN, ic_end - ic);
    const float* base = a.x + (ic / PIN) * a.in_plane * PIN + ic % PIN;
    for (int64_t tap = 0; tap < a.taps; ++tap) {
      const int32_t* e = entries + tap * MR;
      const float* in[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) in[r] = e[r] >= 0 ? base + e[r] * PIN : kIndirectZeroRow;
      const float* wt = w + (tap * icpg + (ic - ic_begin)) * (NB * L);
      for (int64_t i = 0; i < run; ++i) {
        T wv[NB];
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) wv[j] = V::load(wt + i * (NB * L) + j * L);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const T b = V::broadcast(in[r] + i);
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) acc[r][j] = V::fmadd(b, wv[j], acc[r][j]);
        }
      }
    }
    ic += run;
  }
}

// One register tile: output pixels [pixel0, pixel0 + MR) (entries: their tile of the indirection buffer)
// x NB vectors of output channels starting at padded channel `cp` (real channel `c`) of conv group
// `group`; w: the packed weights of those vectors. PIN: the input's channel block.
template <class V, int MR, int NB, int PIN>
inline void indirect_tile(const IndirectX86Args& a, const int32_t* entries, const float* w, int64_t group,
                          int64_t cp, int64_t c, int64_t pixel0) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  T acc[MR][NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const T bias = V::load(a.bias + cp + j * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[r][j] = bias;
  }
  const int64_t icpg = a.in_channels_per_group;
  const int64_t ic_begin = group * icpg, ic_end = ic_begin + icpg;
  if (ic_begin % PIN == 0 && icpg % PIN == 0) {
    // The group's channels fill whole input blocks (the common case): taps outermost, so the row pointers
    // are set up once per tap, then each steps from block to block (a padding row steps by 0 over its
    // zeros), the channels of a block streaming by.
    const float* x0 = a.x + (ic_begin / PIN) * a.in_plane * PIN;
    const int64_t block_step = a.in_plane * PIN;
    for (int64_t tap = 0; tap < a.taps; ++tap) {
      const int32_t* e = entries + tap * MR;
      const float* in[MR];
      int64_t step[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const bool inside = e[r] >= 0;
        in[r] = inside ? x0 + e[r] * PIN : kIndirectZeroRow;
        step[r] = inside ? block_step : 0;
      }
      const float* wt = w + tap * icpg * (NB * L);
      for (int64_t b = 0; b < icpg / PIN; ++b) {
        for (int i = 0; i < PIN; ++i) {
          T wv[NB];
#pragma GCC unroll 4
          for (int j = 0; j < NB; ++j) wv[j] = V::load(wt + i * (NB * L) + j * L);
#pragma GCC unroll 16
          for (int r = 0; r < MR; ++r) {
            const T bv = V::broadcast(in[r] + i);
#pragma GCC unroll 4
            for (int j = 0; j < NB; ++j) acc[r][j] = V::fmadd(bv, wv[j], acc[r][j]);
          }
        }
        wt += PIN * (NB * L);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) in[r] += step[r];
      }
    }
  } else {
    // Groups that split input blocks: runs of channels within one block, pointers set up per run and tap.
    indirect_channel_runs<V, MR, NB, PIN>(a, entries, w, ic_begin, ic_end, acc);
  }
  // Epilogue: residual, activation, one store per vector; pixels past the plane are not stored. (Fully
  // unrolled so the accumulators are only ever indexed by constants and stay in registers.)
  const int64_t rows = imin(MR, a.out_plane - pixel0);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) {
      T value = acc[r][j];
      const int64_t pixel = pixel0 + r;
      switch (a.out_block) {
        case 16:
          if (a.residual) value = V::add(value, load_channels<V, 16>(a.residual, a.out_channels, a.out_plane, c + j * L, pixel));
          store_channels<V, 16>(a.y, a.out_channels, a.out_plane, c + j * L, pixel,
                                activate<V>(a.epilogue, value, cp / L + j));
          break;
        case 8:
          if (a.residual) value = V::add(value, load_channels<V, 8>(a.residual, a.out_channels, a.out_plane, c + j * L, pixel));
          store_channels<V, 8>(a.y, a.out_channels, a.out_plane, c + j * L, pixel,
                               activate<V>(a.epilogue, value, cp / L + j));
          break;
        case 4:  // NCHW4c: NEON's block only
          if constexpr (L == 4) {
            if (a.residual) value = V::add(value, load_channels<V, 4>(a.residual, a.out_channels, a.out_plane, c + j * L, pixel));
            store_channels<V, 4>(a.y, a.out_channels, a.out_plane, c + j * L, pixel,
                                 activate<V>(a.epilogue, value, cp / L + j));
            break;
          }
          [[fallthrough]];
        default:
          if (a.residual) value = V::add(value, load_channels<V, 1>(a.residual, a.out_channels, a.out_plane, c + j * L, pixel));
          store_channels<V, 1>(a.y, a.out_channels, a.out_plane, c + j * L, pixel,
                               activate<V>(a.epilogue, value, cp / L + j));
          break;
      }
    }
  }
}

template <class V, int MR, int NB, int PIN>
inline void indirect_tile_vectors(int64_t vectors, const IndirectX86Args& a, const int32_t* entries, const float* w,
                                  int64_t group, int64_t cp, int64_t c, int64_t pixel0) {
  if (vectors < NB) {
    if constexpr (NB > 1) indirect_tile_vectors<V, MR, NB - 1, PIN>(vectors, a, entries, w, group, cp, c, pixel0);
  } else {
    indirect_tile<V, MR, NB, PIN>(a, entries, w, group, cp, c, pixel0);
  }
}

template <class V, int MR, int NB, int PIN>
void indirect_items(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  constexpr int L = V::kLanes;
  const int64_t group_lanes = NB * L;
  const int64_t vector_groups = (a.oc_padded_per_group + group_lanes - 1) / group_lanes;
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t tile = item % a.tiles;
    const int64_t group = item / a.tiles / vector_groups, vg = item / a.tiles % vector_groups;
    const int64_t vectors = imin(NB, (a.oc_padded_per_group - vg * group_lanes) / L);
    const int64_t cp = group * a.oc_padded_per_group + vg * group_lanes;  // padded channel
    const int64_t c = group * a.out_channels_per_group + vg * group_lanes;  // real channel
    const float* w = a.weights + cp * a.taps * a.in_channels_per_group;
    indirect_tile_vectors<V, MR, NB, PIN>(vectors, a, a.indirection + tile * a.taps * MR, w, group, cp, c, tile * MR);
  }
}

template <class V, int MR, int NB>
void indirect_conv(const IndirectX86Args& a, int64_t item_begin, int64_t item_end) {
  switch (a.in_block) {
    case 16: indirect_items<V, MR, NB, 16>(a, item_begin, item_end); break;
    case 8: indirect_items<V, MR, NB, 8>(a, item_begin, item_end); break;
    case 4:  // NCHW4c: NEON's block only
      if constexpr (V::kLanes == 4) {
        indirect_items<V, MR, NB, 4>(a, item_begin, item_end);
        break;
      }
      [[fallthrough]];
    default: indirect_items<V, MR, NB, 1>(a, item_begin, item_end); break;
  }
}

}  // namespace
}  // namespace ninegrid
