// Int8 depthwise convolution (groups == channels) on uint8 NCHW[B]c input, for an ISA policy DW (defined
// in each instantiation file), bit for bit the arithmetic of kernels/ref/qconv2d_ref (kernels/quantized.h).
//
// One lane per channel, so the instruction that sums several products per lane (vpdpbusd: 4 byte
// products, vpmaddwd: 2 16-bit products) must find in each lane several taps of that lane's channel: G
// consecutive input pixels of one row, interleaved channel by channel (a "group"; DW::kTaps = G). Building
// a group costs shuffles, so a register tile of ROWS x COLS outputs builds each group of its input window
// once and feeds it to every output that reads it: every output row whose kernel meets that input row,
// every output column whose window covers the group, each with the weights of the group's offset from the
// output's first tap (kernels/qpack_depthwise.h: one weight vector per kernel row and offset). Groups
// start every SP columns of the window: SP = G builds the fewest groups, and an output then needs one or
// two of them per kernel row (3x3: 1.5 on average for G = 4); SP = 2 builds twice as many and a 3x3 output
// then needs exactly one (stride 1: its three taps always fall in the 4-pixel group starting at or just
// before it). Each ISA picks SP per kernel and stride (measured: bench/REPORT.md, "Int8 depthwise").
//
// Nine-grid borders without a padded copy: a tile whose window lies inside the image loads its groups
// directly; a border tile loads them with a mask, the pixels outside reading as the input zero point, and
// uses a group of zero points for a window row outside. A padding tap then adds zero_point x weight, which
// the bias' correction (X86QConvArgs::bias: bias - zero_point x the sum of all weights) cancels exactly, as
// the reference skips it. So border tiles run the same unrolled code as the centre.
//
// Other kernels, strides and dilations, and input blocks narrower than the vector (gathered pixel by
// pixel): every output over its kernel rows, a group of G taps at a time.
//
// Include only from ISA files (after the int8 simd header); internal linkage throughout.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/x86/conv_depthwise_impl.h"  // for_each_row_tile, padded_extent: as the fp32 kernel
#include "kernels/x86/conv_kernels_x86.h"
#include "kernels/x86/qconv_epilogue_impl.h"
#include "kernels/x86/qconv_kernels_x86.h"

namespace ninegrid {
namespace {

// The tile's loop bodies (lambdas below) inlined into one function: GCC otherwise outlines them and the
// accumulators go through memory around every multiply-add. Not in the sanitizer builds (GCC defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__): there the forced inlining of every tile instantiation
// made these files several times slower to compile (bench/REPORT.md, "CI time"), and those builds test the
// arithmetic, which inlining does not change.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NINEGRID_QDW_INLINE_BODY
#else
#define NINEGRID_QDW_INLINE_BODY __attribute__((always_inline))
#endif

// f(IntConstant<I>{}) for I in [B, E): unrolled with I a constant expression, so the tile's conditions
// on tap, group and output indices are resolved at compile time (`if constexpr`), not left to the unroller.
template <int B, int E, class F>
__attribute__((always_inline)) inline void static_for(F&& f) {
  if constexpr (B < E) {
    f(IntConstant<B>{});
    static_for<B + 1, E>(f);
  }
}

// Which groups an output uses. Output column co's taps are window columns [co * S, co * S + K); group g
// covers columns [g * SP, g * SP + G). The output takes the group starting at or before its first tap and
// every (G / SP)-th after it while they start before its last tap: consecutive, disjoint, covering all its
// taps (SP divides G). Its weights for group g are those of offset g * SP - co * S.
template <int K, int S, int SP, int G>
struct QDwGroups {
  static_assert(G % SP == 0, "groups must tile the row");
  static constexpr int first(int co) { return co * S / SP; }
  static constexpr bool uses(int co, int g) {
    return g >= first(co) && (g - first(co)) % (G / SP) == 0 && g * SP < co * S + K;
  }
  static constexpr int offset(int co, int g) { return g * SP - co * S; }
  static constexpr bool used(int g, int cols) {
    for (int co = 0; co < cols; ++co)
      if (uses(co, g)) return true;
    return false;
  }
};

// One channel block (DW::kLanes channels) and what its tiles read.
template <class DW>
struct QDwBlock {
  const X86QConvArgs* a;
  const uint8_t* x;      // the block's first channel at input pixel (0, 0); pixels DW::kPixelStride apart
  const int8_t* w;       // its packed weights
  typename DW::QV::Acc bias;
  RequantizeBlock<typename DW::QV> k;
  RequantizePacked<typename DW::QV> packed;
  typename DW::Taps fill;  // a group of zero-point pixels
  alignas(64) uint8_t fill_pixel[64];  // one pixel of zero points (policies that load pixel by pixel)
  int64_t block;
  // The leading full-width tiles [centre_begin, centre_end) of each row whose windows lie inside the image's
  // columns, run by qdw_centre_run when the block's outputs take the packed store (centre_run).
  bool centre_run;
  int64_t centre_begin, centre_end;
};

// Whether the policy's centre run holds the tile's weight vectors in registers (DW::kHoldWeights, where
// the register file has room: 32 vector registers); otherwise each multiply-add reads its weights from
// the packed weights, as the other tiles do.
template <class DW, class = void>
struct QDwHoldWeights : std::false_type {};
template <class DW>
struct QDwHoldWeights<DW, std::void_t<decltype(DW::kHoldWeights)>> : std::bool_constant<DW::kHoldWeights> {};

template <class DW>
inline void init_block(QDwBlock<DW>& b, const X86QConvArgs& a, int64_t block) {
  constexpr int P = DW::kLanes;
  const uint8_t zp = static_cast<uint8_t>(a.x_zero_point);
  b.a = &a;
  b.block = block;
  const int64_t c0 = block * P, in_plane = a.in_h * a.in_w;
  // (Blocks that are a multiple of the lanes only; the gathering path does not read x.)
  b.x = a.in_block >= P ? a.x + (c0 / a.in_block) * in_plane * a.in_block + c0 % a.in_block : a.x;
  const int64_t offsets = a.kernel_w + DW::kTaps - 1;
  b.w = a.weights + block * a.kernel_h * offsets * P * DW::kTaps * DW::kWeightBytes;
  b.bias = DW::QV::load_acc(a.bias + c0);
  b.k = requantize_block<typename DW::QV>(a.requantize, block);
  b.packed = requantize_packed_block<typename DW::QV>(a.requantize, block, a.out_channels);
  b.fill = DW::fill(zp);
  for (int i = 0; i < 64; ++i) b.fill_pixel[i] = zp;
  b.centre_run = a.in_block == DW::kPixelStride && a.out_block == P && b.packed.usable && !a.requantize.residual;
  b.centre_begin = b.centre_end = 0;
}

// The centre tiles of a row (QDwBlock::centre_begin, centre_end) for tiles of COLS columns, kernel K, stride
// S: a tile's window spans (COLS - 1) * S + K input columns from ow0 * S - pad_left, and the groups read
// none past it (the last group loads only the pixels some output reads).
template <class DW, int K, int S, int COLS>
inline void set_centre_tiles(QDwBlock<DW>& b) {
  centre_row_tiles<K, S, COLS>(*b.a, &b.centre_begin, &b.centre_end);
}

// The weight vector of kernel row kh at group offset o (-(G-1) <= o < kernel_w).
template <class DW>
__attribute__((always_inline)) inline typename DW::W qdw_weights(const QDwBlock<DW>& b, int64_t kernel_w, int64_t kh,
                                                                  int64_t o) {
  const int64_t offsets = kernel_w + DW::kTaps - 1;
  return DW::weights(b.w + ((kh * offsets + o + DW::kTaps - 1) * DW::kLanes * DW::kTaps) * DW::kWeightBytes);
}

// N accumulators by value: the out-of-line stores take a copy, so that the tile's accumulators never have
// their address taken (they would be kept in memory for the whole tile). By value rather than as a local
// array passed by pointer (QuantConvArith::store_scattered's form): with the array, GCC kept these tiles'
// accumulators on the stack (about ten times the stack references over the AVX2 file's tiles).
template <class DW, int N>
struct QDwAccRow {
  typename DW::QV::Acc v[N];
};

// The stores other than the packed one (a residual, an output block wider than the vector, or one the
// vector's lanes do not fill): out of line, since unrolled in every tile shape they were most of the code
// these files compiled to, and those layers are rare.
template <class DW, int N>
__attribute__((noinline)) void qdw_store_row_unpacked(const QDwBlock<DW>& b, QDwAccRow<DW, N> acc, int64_t pixel) {
  using QV = typename DW::QV;
  constexpr int P = QV::kLanes;
  const X86QConvArgs& a = *b.a;
  const int64_t plane = a.out_h * a.out_w, ob = a.out_block;
  if (ob % P == 0) {
    // The vector's P channels lie together in the output block: one store per pixel.
    const int64_t c0 = b.block * P;
    const int64_t at = ((c0 / ob) * plane + pixel) * ob + c0 % ob;
    const uint8_t* const residual = a.requantize.residual ? a.requantize.residual + at : nullptr;
    requantize_store_run<QV, N>(b.k, acc.v, a.y + at, residual, ob);
    return;
  }
  for (int i = 0; i < N; ++i)
    requantize_store<QV>(a.requantize, b.k, acc.v[i], a.y, a.out_channels, plane, ob, b.block, pixel + i);
}

// Requantises and stores N outputs of the block along a row from output pixel `pixel` on.
template <class DW, int N>
__attribute__((always_inline)) inline void qdw_store_row(const QDwBlock<DW>& b, typename DW::QV::Acc* acc,
                                                         int64_t pixel) {
  using QV = typename DW::QV;
  constexpr int P = QV::kLanes;
  const X86QConvArgs& a = *b.a;
  if (a.out_block == P && b.packed.usable && !a.requantize.residual) {
    // The N pixels' bytes lie together: packed, 4 at a time.
    uint8_t* const y = a.y + ((b.block * a.out_h * a.out_w) + pixel) * P;
#pragma GCC unroll 4
    for (int i = 0; i < N; i += 4)
      requantize_store_packed<QV>(b.k, b.packed, acc + i, N - i < 4 ? N - i : 4, y + i * P, nullptr);
    return;
  }
  QDwAccRow<DW, N> row;
#pragma GCC unroll 16
  for (int i = 0; i < N; ++i) row.v[i] = acc[i];
  qdw_store_row_unpacked<DW, N>(b, row, pixel);
}

// Outputs rows [oh, oh + ROWS) x columns [ow0, ow0 + COLS); kernel K x K, stride S, dilation 1, groups
// every SP window columns. EDGES: some of the window lies outside the image (masked loads).
template <class DW, int K, int S, int SP, int ROWS, int COLS, bool EDGES>
__attribute__((always_inline)) inline void qdw_tile(const QDwBlock<DW>& b, int64_t oh, int64_t ow0) {
  using Acc = typename DW::QV::Acc;
  using Taps = typename DW::Taps;
  using Groups = QDwGroups<K, S, SP, DW::kTaps>;
  constexpr int G = DW::kTaps, IB = DW::kPixelStride;
  constexpr int kInRows = (ROWS - 1) * S + K, kInCols = (COLS - 1) * S + K;
  constexpr int kGroups = (kInCols - 1) / SP + 1;
  const X86QConvArgs& a = *b.a;
  const int64_t ih0 = oh * S - a.pad_top, iw0 = ow0 * S - a.pad_left;

  Acc acc[ROWS][COLS];
#pragma GCC unroll 4
  for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 16
    for (int co = 0; co < COLS; ++co) acc[ro][co] = b.bias;

  // Border tiles: the pixels [first, end) of each group lie inside the image's columns; a group with all its
  // pixels inside loads as in the centre.
  typename DW::Mask inside[kGroups];
  bool whole[kGroups];
  if constexpr (EDGES) {
    static_for<0, kGroups>([&](auto g_) NINEGRID_QDW_INLINE_BODY {
      constexpr int g = decltype(g_)::value, n = kInCols - g * SP < G ? kInCols - g * SP : G;
      const int64_t iw = iw0 + g * SP;
      const int first = static_cast<int>(imin(imax(-iw, 0), n)), end = static_cast<int>(imin(imax(a.in_w - iw, 0), n));
      whole[g] = first == 0 && end == n;
      inside[g] = DW::mask(first, end);
    });
  }

  static_for<0, kInRows>([&](auto r_) NINEGRID_QDW_INLINE_BODY {
    constexpr int r = decltype(r_)::value;
    const int64_t ih = ih0 + r;
    const bool row_inside = !EDGES || (ih >= 0 && ih < a.in_h);
    // Window column 0 of this row (left of the image in a left border tile: only masked loads read there).
    const uint8_t* const row = b.x + (row_inside ? ih * a.in_w + iw0 : 0) * IB;
    static_for<0, kGroups>([&](auto g_) NINEGRID_QDW_INLINE_BODY {
      constexpr int g = decltype(g_)::value;
      if constexpr (Groups::used(g, COLS)) {
        constexpr int n = kInCols - g * SP < G ? kInCols - g * SP : G;  // pixels some output reads
        Taps t;
        if constexpr (!EDGES) t = DW::template load<n>(row + g * SP * IB);
        else if (!row_inside) t = b.fill;
        else if (whole[g]) t = DW::template load<n>(row + g * SP * IB);
        else t = DW::template load_masked<n>(row + g * SP * IB, inside[g], b);
        static_for<0, ROWS>([&](auto ro_) NINEGRID_QDW_INLINE_BODY {
          constexpr int ro = decltype(ro_)::value, kh = r - ro * S;
          if constexpr (kh >= 0 && kh < K) {
            // The columns as an unrolled loop rather than a static_for: Groups::uses folds once it is
            // unrolled (the same instructions), and a lambda per column was most of these files' compile time.
#pragma GCC unroll 16
            for (int co = 0; co < COLS; ++co)
              if (Groups::uses(co, g))
                acc[ro][co] = DW::madd(t, qdw_weights<DW>(b, K, kh, Groups::offset(co, g)), acc[ro][co]);
          }
        });
      }
    });
  });

#pragma GCC unroll 4
  for (int ro = 0; ro < ROWS; ++ro) qdw_store_row<DW, COLS>(b, acc[ro], (oh + ro) * a.out_w + ow0);
}

// qdw_tile out of line: one copy per tile shape, called from every place a row walks its tiles (inlined at
// each, the tiles made these files the longest compiles of the build; bench/REPORT.md, "CI time"). The
// centre run, where most tiles of the large planes go, keeps its tile inline.
template <class DW, int K, int S, int SP, int ROWS, int COLS, bool EDGES>
__attribute__((noinline)) void qdw_tile_call(const QDwBlock<DW>& b, int64_t oh, int64_t ow0) {
  qdw_tile<DW, K, S, SP, ROWS, COLS, EDGES>(b, oh, ow0);
}

// `tiles` tiles of ROWS x COLS outputs along a row band, every window inside the image: the first window's
// top left pixel at x0, window rows in_row bytes apart; outputs packed (out_block == P, the packed store)
// from y on, output rows out_row bytes apart. One call per row band, so that the bias, the requantisation
// constants and (QDwHoldWeights) the weights stay in registers across its tiles, and the tile loop carries
// only its pointers: per tile, qdw_tile's call, its window checks and its loads of the block's constants
// were a large share of the time (bench/REPORT.md, "The int8 depthwise centre run"). The tile is qdw_tile's
// without EDGES: the same groups, the same sums.
template <class DW, int K, int S, int SP, int ROWS, int COLS>
__attribute__((noinline)) void qdw_centre_run(const QDwBlock<DW>& b, const uint8_t* x0, int64_t in_row, uint8_t* y,
                                              int64_t out_row, int64_t tiles) {
  using QV = typename DW::QV;
  using Acc = typename QV::Acc;
  using Taps = typename DW::Taps;
  using Groups = QDwGroups<K, S, SP, DW::kTaps>;
  constexpr int G = DW::kTaps, IB = DW::kPixelStride, P = DW::kLanes;
  constexpr int kInRows = (ROWS - 1) * S + K, kInCols = (COLS - 1) * S + K;
  constexpr int kGroups = (kInCols - 1) / SP + 1, kOffsets = K + G - 1;
  constexpr bool kHold = QDwHoldWeights<DW>::value;
  const int64_t kernel_w = K;
  // The weight vectors the tile uses (offsets o + G - 1 of every kernel row), copied out of the packed
  // weights when held in registers.
  typename DW::W w[kHold ? K : 1][kHold ? kOffsets : 1];
  if constexpr (kHold) {
    static_for<0, K>([&](auto kh_) NINEGRID_QDW_INLINE_BODY {
      constexpr int kh = decltype(kh_)::value;
      static_for<0, COLS>([&](auto co_) NINEGRID_QDW_INLINE_BODY {
        constexpr int co = decltype(co_)::value;
        static_for<0, kGroups>([&](auto g_) NINEGRID_QDW_INLINE_BODY {
          constexpr int g = decltype(g_)::value;
          if constexpr (Groups::uses(co, g))
            w[kh][Groups::offset(co, g) + G - 1] = qdw_weights<DW>(b, kernel_w, kh, Groups::offset(co, g));
        });
      });
    });
  }
  const Acc bias = b.bias;
  const RequantizeBlock<QV> k = b.k;
  const RequantizePacked<QV> packed = b.packed;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    Acc acc[ROWS][COLS];
#pragma GCC unroll 4
    for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 16
      for (int co = 0; co < COLS; ++co) acc[ro][co] = bias;
    static_for<0, kInRows>([&](auto r_) NINEGRID_QDW_INLINE_BODY {
      constexpr int r = decltype(r_)::value;
      // Opaque, so that the row's loads address it with constant offsets (as depthwise_window_accumulate's
      // OPAQUE_ROWS: GCC otherwise keeps an invariant per row and group, more than x86 has registers for).
      const uint8_t* row = x0 + r * in_row;
      __asm__("" : "+r"(row));
      static_for<0, kGroups>([&](auto g_) NINEGRID_QDW_INLINE_BODY {
        constexpr int g = decltype(g_)::value;
        if constexpr (Groups::used(g, COLS)) {
          constexpr int n = kInCols - g * SP < G ? kInCols - g * SP : G;  // pixels some output reads
          const Taps t = DW::template load<n>(row + g * SP * IB);
          static_for<0, ROWS>([&](auto ro_) NINEGRID_QDW_INLINE_BODY {
            constexpr int ro = decltype(ro_)::value, kh = r - ro * S;
            if constexpr (kh >= 0 && kh < K) {
              static_for<0, COLS>([&](auto co_) NINEGRID_QDW_INLINE_BODY {
                constexpr int co = decltype(co_)::value;
                if constexpr (Groups::uses(co, g)) {
                  constexpr int o = Groups::offset(co, g);
                  if constexpr (kHold)
                    acc[ro][co] = DW::madd(t, w[kh][o + G - 1], acc[ro][co]);
                  else
                    acc[ro][co] = DW::madd(t, qdw_weights<DW>(b, kernel_w, kh, o), acc[ro][co]);
                }
              });
            }
          });
        }
      });
    });
#pragma GCC unroll 4
    for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 4
      for (int i = 0; i < COLS; i += 4)
        requantize_store_packed<QV>(k, packed, acc[ro] + i, COLS - i < 4 ? COLS - i : 4, y + ro * out_row + i * P,
                                    nullptr);
    x0 += COLS * S * IB;
    y += COLS * P;
  }
}

// Output rows [oh, oh + ROWS), every column; rows_inside: the tiles' windows lie inside the image's rows.
// The row band's centre tiles (b.centre_begin, centre_end) in one qdw_centre_run where the block allows.
template <class DW, int K, int S, int SP, int ROWS, int COLS>
void qdw_tile_rows(const QDwBlock<DW>& b, int64_t oh, bool rows_inside) {
  constexpr int P = DW::kLanes, IB = DW::kPixelStride;
  const X86QConvArgs& a = *b.a;
  auto tile = [&](auto width, int64_t ow) {
    constexpr int W = decltype(width)::value;
    const int64_t iw0 = ow * S - a.pad_left;
    if (rows_inside && iw0 >= 0 && iw0 + (W - 1) * S + K <= a.in_w)
      qdw_tile_call<DW, K, S, SP, ROWS, W, false>(b, oh, ow);
    else
      qdw_tile_call<DW, K, S, SP, ROWS, W, true>(b, oh, ow);
  };
  // Only the policy's main tile shape has a centre run (compile time: the rows left at the end of a range,
  // and the narrow shape of planes up to 14 wide, are border rows or have no centre tiles in the models).
  using Tile = typename DW::template Tile<K, S>;
  if constexpr (ROWS != Tile::kRows || COLS != Tile::kCols) {
    return for_each_row_tile<COLS>(a.out_w, tile);
  } else {
  if (!rows_inside || !b.centre_run || b.centre_begin == b.centre_end) return for_each_row_tile<COLS>(a.out_w, tile);
  for (int64_t t = 0; t < b.centre_begin; ++t) tile(IntConstant<COLS>{}, t * COLS);
  const int64_t ow0 = b.centre_begin * COLS;
  const uint8_t* const x0 = b.x + ((oh * S - a.pad_top) * a.in_w + ow0 * S - a.pad_left) * IB;
  uint8_t* const y = a.y + (b.block * a.out_h * a.out_w + oh * a.out_w + ow0) * P;
  qdw_centre_run<DW, K, S, SP, ROWS, COLS>(b, x0, a.in_w * IB, y, a.out_w * P, b.centre_end - b.centre_begin);
  const int64_t full = full_row_tiles<COLS>(a.out_w);
  for (int64_t t = b.centre_end; t < full; ++t) tile(IntConstant<COLS>{}, t * COLS);
  rest_row_tiles<COLS>(a.out_w, full * COLS, tile);
  }
}

// Channel blocks and output rows of r in tiles of ROWS x COLS (then 2 and 1 rows for the last ones), reading
// each block's input at b.x with the geometry of `a` (the image, or a padded copy: prepare(b) is called once
// per block after init_block).
template <class DW, int K, int S, int SP, int ROWS, int COLS, class Prepare>
void qdw_kxk_blocks(const X86QConvArgs& a, const X86ConvRange& r, Prepare prepare) {
  QDwBlock<DW> b;
  auto rows_inside = [&](int64_t oh, int rows) {
    const int64_t ih0 = oh * S - a.pad_top;
    return ih0 >= 0 && ih0 + (rows - 1) * S + K <= a.in_h;
  };
  for (int64_t block = r.oc_block_begin; block < r.oc_block_end; ++block) {
    init_block(b, a, block);
    set_centre_tiles<DW, K, S, COLS>(b);
    prepare(b);
    int64_t oh = r.row_begin;
    if constexpr (ROWS > 1)
      for (; oh + ROWS <= r.row_end; oh += ROWS) qdw_tile_rows<DW, K, S, SP, ROWS, COLS>(b, oh, rows_inside(oh, ROWS));
    if constexpr (ROWS > 2)
      for (; oh + 2 <= r.row_end; oh += 2) qdw_tile_rows<DW, K, S, SP, 2, COLS>(b, oh, rows_inside(oh, 2));
    for (; oh < r.row_end; ++oh) qdw_tile_rows<DW, K, S, SP, 1, COLS>(b, oh, rows_inside(oh, 1));
  }
}

// The policy's tile shape DW::Tile<K, S>; on planes up to 14 outputs wide its narrow shape, 8 columns wide,
// so that a 7- or 14-wide row is one or two tiles of 7 (not 4 + 2 + 1: measured, bench/REPORT.md).
template <class DW, int K, int S, class Prepare>
void qdw_kxk_tiles(const X86QConvArgs& a, const X86ConvRange& r, Prepare prepare) {
  using Tile = typename DW::template Tile<K, S>;
  if (Tile::kCols < 8 && a.out_w <= 14)
    return qdw_kxk_blocks<DW, K, S, Tile::kSpacing, Tile::kNarrowRows, 8>(a, r, prepare);
  qdw_kxk_blocks<DW, K, S, Tile::kSpacing, Tile::kRows, Tile::kCols>(a, r, prepare);
}

constexpr int64_t kQDwPaddedPlaneBytes = 16 * 1024;

// Small planes: each channel block is first copied into a plane bordered with zero points, so that every
// tile reads inside it (on 28x28 planes and smaller, most tiles would touch the border: measured:
// bench/REPORT.md, "Int8 depthwise"). Its own function, so that large planes do not set up its frame.
template <class DW, int K, int S>
__attribute__((noinline)) void qdw_kxk_padded(const X86QConvArgs& a, const X86ConvRange& r, int64_t padded_h,
                                              int64_t padded_w) {
  constexpr int P = DW::kLanes, IB = DW::kPixelStride;
  alignas(64) uint8_t padded[kQDwPaddedPlaneBytes];
  X86QConvArgs pa = a;
  pa.in_h = padded_h, pa.in_w = padded_w, pa.pad_top = 0, pa.pad_left = 0;
  const uint8_t zp = static_cast<uint8_t>(a.x_zero_point);
  qdw_kxk_tiles<DW, K, S>(pa, r, [&](QDwBlock<DW>& b) {
    const int64_t c0 = b.block * P;  // the image's block
    const uint8_t* const x = a.x + (c0 / a.in_block) * a.in_h * a.in_w * a.in_block + c0 % a.in_block;
    for (int64_t i = 0; i < padded_h * padded_w * IB; ++i) padded[i] = zp;
    for (int64_t ih = 0; ih < a.in_h; ++ih) {
      uint8_t* const to = padded + ((ih + a.pad_top) * padded_w + a.pad_left) * IB;
      const uint8_t* const from = x + ih * a.in_w * IB;
      if (IB == P) {
        __builtin_memcpy(to, from, static_cast<size_t>(a.in_w * IB));
      } else {
        for (int64_t iw = 0; iw < a.in_w; ++iw) __builtin_memcpy(to + iw * IB, from + iw * IB, P);
      }
    }
    b.x = padded;
  });
}

// K x K, stride S (both axes), dilation 1.
template <class DW, int K, int S>
void qdw_kxk(const X86QConvArgs& a, const X86ConvRange& r) {
  const int64_t padded_h = padded_extent(a.in_h, a.pad_top, a.out_h, S, K);
  const int64_t padded_w = padded_extent(a.in_w, a.pad_left, a.out_w, S, K);
  const bool padding = padded_h > a.in_h || padded_w > a.in_w || a.pad_top > 0 || a.pad_left > 0;
  if (padding && padded_h * padded_w * DW::kPixelStride <= kQDwPaddedPlaneBytes)
    return qdw_kxk_padded<DW, K, S>(a, r, padded_h, padded_w);
  qdw_kxk_tiles<DW, K, S>(a, r, [](QDwBlock<DW>&) {});
}

// Any kernel, stride, dilation and input block: each output over its kernel rows, G taps at a time, the
// group gathered pixel by pixel (taps outside the image, and past the kernel, read zero points).
// GATHER: the input block is narrower than the vector, so each pixel's channels are first collected.
template <class DW, bool GATHER>
void qdw_generic(const X86QConvArgs& a, const X86ConvRange& r) {
  using Acc = typename DW::QV::Acc;
  constexpr int P = DW::kLanes, G = DW::kTaps;
  const int64_t in_plane = a.in_h * a.in_w;
  QDwBlock<DW> b;
  alignas(64) uint8_t gathered[G][P];
  for (int64_t block = r.oc_block_begin; block < r.oc_block_end; ++block) {
    init_block(b, a, block);
    const int64_t c0 = block * P;
    for (int64_t oh = r.row_begin; oh < r.row_end; ++oh)
      for (int64_t ow = 0; ow < a.out_w; ++ow) {
        Acc acc = b.bias;
        for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
          const int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
          const bool row_inside = ih >= 0 && ih < a.in_h;
          for (int64_t kw0 = 0; kw0 < a.kernel_w; kw0 += G) {
            const uint8_t* pixels[G];
            for (int j = 0; j < G; ++j) {
              const int64_t kw = kw0 + j, iw = ow * a.stride_w - a.pad_left + kw * a.dilation_w;
              pixels[j] = b.fill_pixel;
              if (!row_inside || kw >= a.kernel_w || iw < 0 || iw >= a.in_w) continue;
              const int64_t pixel = ih * a.in_w + iw;
              if constexpr (GATHER) {
                for (int l = 0; l < P; ++l)
                  gathered[j][l] = c0 + l < a.in_channels
                                       ? a.x[int8_blocked_offset(c0 + l, pixel, in_plane, a.in_block)]
                                       : b.fill_pixel[0];
                pixels[j] = gathered[j];
              } else {
                pixels[j] = b.x + pixel * DW::kPixelStride;
              }
            }
            acc = DW::madd(DW::gather(pixels), qdw_weights<DW>(b, a.kernel_w, kh, kw0), acc);
          }
        }
        qdw_store_row<DW, 1>(b, &acc, oh * a.out_w + ow);
      }
  }
}

// The entry point for one policy: DW::kPixelStride must be the input block (a multiple of DW::kLanes)
// for the tiles, or any block with GATHER.
template <class DW>
void qdepthwise_conv(const X86QConvArgs& a, const X86ConvRange& r) {
  const bool tiles = a.in_block == DW::kPixelStride && a.kernel_h == a.kernel_w && a.stride_h == a.stride_w &&
                     a.dilation_h == 1 && a.dilation_w == 1 && (a.stride_h == 1 || a.stride_h == 2) &&
                     (a.kernel_h == 3 || a.kernel_h == 5);
  if (tiles) {
    if (a.kernel_h == 3) return a.stride_h == 1 ? qdw_kxk<DW, 3, 1>(a, r) : qdw_kxk<DW, 3, 2>(a, r);
    return a.stride_h == 1 ? qdw_kxk<DW, 5, 1>(a, r) : qdw_kxk<DW, 5, 2>(a, r);
  }
  if (a.in_block == DW::kPixelStride) return qdw_generic<DW, false>(a, r);
  qdw_generic<DW, true>(a, r);
}

}  // namespace
}  // namespace ninegrid
