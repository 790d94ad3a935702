// The AArch64 int8 direct and pointwise kernels: qconv_arith_impl.h's policy (QuantConvArith) on the tiles of
// conv_direct_impl.h, as on x86, for a 4-lane NEON int32 vector type (simd_int8_neon.h, simd_int8_dotprod.h).
// This header adds what differs on Arm: the tile widths for 4 lanes, and only one input block (NCHW4c, the
// layout planner's int8 block on Arm; FastQConv2d stages other inputs into it), so each file instantiates
// the tiles of one input block instead of x86's three.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/arm/qconv_kernels_arm.h"
#include "kernels/x86/qconv_arith_impl.h"

namespace ninegrid {
namespace {

// Tile widths for 4 int32 lanes, within AArch64's 32 vector registers. The dense stride-1 and pointwise
// tiles take their pixels in groups of 4 (one 16-byte load each, conv_direct_impl.h's pixel groups); the
// others broadcast each pixel (a load and an eor, simd_int8_neon.h), and GCC issues a step's N broadcasts
// before its multiply-adds, so such a tile of OCB blocks x N pixels holds OCB * N accumulators, N inputs,
// OCB weight vectors, the eor constant and (without sdot) the 16-bit products: 2 x 8 (27 and 2 products)
// and 1 x 12 (26). The fp32 kernels' 2 x 12 (conv_direct_neon.cpp) spilled accumulators to the stack in
// every step here. With groups a dotprod 2 x 12 would fit, but its eor per sdot is the 2 x 8's, and the
// neon tile's per-pixel dups already spill a few accumulators at 2 x 8 (llvm-mca, bench/REPORT.md "Arm64").
template <>
struct QDirectMenu<4, 2> {
  using Full = TileWidths<8, 6, 4, 3, 2, 1>;
  using Reduced = TileWidths<8, 4, 2, 1>;
  using Column = TileWidths<6, 4, 2, 1>;
};
template <>
struct QDirectMenu<4, 1> {
  using Full = TileWidths<12, 8, 4, 2, 1>;
  using Reduced = TileWidths<12, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};

}  // namespace
}  // namespace ninegrid

// The input block choice of conv_direct_impl.h (pick_direct, pick_pointwise) for policy A reduced to NCHW4c:
// explicit specialisations, in the ISA file's own (anonymous) namespace, before the kernels are instantiated.
#define NINEGRID_ARM_INT8_NCHW4C_ONLY(A)                                                                     \
  template <>                                                                                               \
  DirectRowsFn<A> pick_direct<A, 1>(int64_t, int64_t stride_w) {                                            \
    return pick_direct_stride<A, 1, 4>(stride_w);                                                            \
  }                                                                                                         \
  template <>                                                                                               \
  DirectRowsFn<A> pick_direct<A, 2>(int64_t, int64_t stride_w) {                                            \
    return pick_direct_stride<A, 2, 4>(stride_w);                                                            \
  }                                                                                                         \
  template <>                                                                                               \
  PointwiseFn<A> pick_pointwise<A, 1>(int64_t) {                                                            \
    return pointwise_blocks<A, 1, 4>;                                                                        \
  }                                                                                                         \
  template <>                                                                                               \
  PointwiseFn<A> pick_pointwise<A, 2>(int64_t) {                                                            \
    return pointwise_blocks<A, 2, 4>;                                                                        \
  }
