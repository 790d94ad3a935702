// Depthwise convolution (one input channel per output channel) on NCHW[P]c input, for a vector type V
// (paper Algorithm 4): a vector holds P channels of one pixel, so every tap is one vector load and one FMA
// with that tap's P weights. 3x3 and 5x5 (stride 1 or 2) run unrolled tiles of ROWS x COLS outputs that
// load each input vector once and feed every output that reads it, the K x K weights held in registers.
// Nine-grid: centre tiles read the image directly; border tiles (whose input window crosses the padding)
// read a small zero-padded copy of their window, so they run the same unrolled code. Other shapes loop
// over each output's valid taps.
//
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {
namespace {

// Output (oh, ow) of the channel block whose input starts at xb and packed weights at wb: any position,
// any kernel, stride and dilation.
template <class V>
inline typename V::T depthwise_pixel(const X86ConvArgs& a, const float* xb, const float* wb, typename V::T bias,
                                     int64_t oh, int64_t ow) {
  constexpr int P = V::kLanes;
  int64_t kh_begin, kh_end, kw_begin, kw_end;
  valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
  valid_taps(ow, a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, &kw_begin, &kw_end);
  typename V::T acc = bias;
  for (int64_t kh = kh_begin; kh < kh_end; ++kh) {
    const int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
    for (int64_t kw = kw_begin; kw < kw_end; ++kw) {
      const int64_t iw = ow * a.stride_w - a.pad_left + kw * a.dilation_w;
      acc = V::fmadd(V::load(xb + (ih * a.in_w + iw) * P), V::load(wb + (kh * a.kernel_w + kw) * P), acc);
    }
  }
  return acc;
}

template <class V>
void depthwise_pixels(const X86ConvArgs& a, const float* xb, const float* wb, typename V::T bias, int64_t block,
                      int64_t oh, int64_t ow_begin, int64_t ow_end) {
  for (int64_t ow = ow_begin; ow < ow_end; ++ow) {
    typename V::T v = depthwise_pixel<V>(a, xb, wb, bias, oh, ow);
    store_pixels_inline<V, 1>(a, &v, block, oh * a.out_w + ow);
  }
}

// With 32 vector registers (AVX-512's, NEON's) a tile's accumulators, its K x K weights and the input vector all
// fit, and two things keep them there: each input vector is pinned to a register once loaded (otherwise
// GCC folds the load into every FMA that uses it, 144 loads a 2x8 tile instead of 40, and spills), and
// the store is store_tile_pixels' inline clamp, so the accumulators' address never escapes. With
// AVX2's 16 registers the same changes are slower (weights then live in memory operands anyway).
// Measured: bench/REPORT.md, "Design decisions and their measurements".
template <class V>
constexpr bool kWideRegisterFile = V::kRegisters == 32;

// Accumulates output rows [0, ROWS) x columns [0, COLS) of a tile, kernel K x K, stride S, dilation 1, into
// acc (which holds the bias). The input window is (ROWS - 1) * S + K rows by (COLS - 1) * S + K columns, rows
// row_stride floats apart (the image itself, or a zero-padded copy at the borders); its first SKIP_LEFT
// and last SKIP_RIGHT columns, and first skip_top and last skip_bottom rows, are padding, never read (their
// taps add nothing), and x0 points at its first row and column that are read.
// Input row r and column c of the window feed output (ro, co) through tap (r - ro * S, c - co * S) when
// that tap exists; the unrolled loops resolve those conditions at compile time, so each input vector is
// loaded once.
// OPAQUE_ROWS: each window row's pointer is made opaque to the compiler, so that the row's loads address
// it with constant offsets; otherwise, in a loop over tiles (depthwise_centre_run), GCC keeps every row
// and column offset of the window as a separate loop invariant, more than x86 has registers for, and
// reloads them from the stack around the loads.
template <class V, int K, int S, int ROWS, int COLS, int SKIP_LEFT = 0, int SKIP_RIGHT = 0, bool OPAQUE_ROWS = false>
__attribute__((always_inline)) inline void depthwise_window_accumulate(const float* x0, int64_t row_stride,
                                                                       const typename V::T* w,
                                                                       typename V::T (&acc)[ROWS][COLS],
                                                                       int skip_top = 0, int skip_bottom = 0) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  constexpr int kInRows = (ROWS - 1) * S + K, kInCols = (COLS - 1) * S + K;
#pragma GCC unroll 16
  for (int r = 0; r < kInRows; ++r) {
    if (r < skip_top || r >= kInRows - skip_bottom) continue;
    const float* row = x0 + (r - skip_top) * row_stride;
    if constexpr (OPAQUE_ROWS) __asm__("" : "+r"(row));
#pragma GCC unroll 32
    for (int c = SKIP_LEFT; c < kInCols - SKIP_RIGHT; ++c) {
      T v = V::load(row + (c - SKIP_LEFT) * P);
      if constexpr (kWideRegisterFile<V>) V::pin(v);  // keep v in a register: see above
#pragma GCC unroll 4
      for (int ro = 0; ro < ROWS; ++ro) {
        const int kh = r - ro * S;
        if (kh < 0 || kh >= K) continue;
#pragma GCC unroll 16
        for (int co = 0; co < COLS; ++co) {
          const int kw = c - co * S;
          if (kw < 0 || kw >= K) continue;
          acc[ro][co] = V::fmadd(v, w[kh * K + kw], acc[ro][co]);
        }
      }
    }
  }
}

// Outputs rows [oh, oh + ROWS) x columns [ow0, ow0 + COLS) from the window at x0 (depthwise_window_accumulate
// says how it is read), with the whole epilogue (any output layout and activation).
template <class V, int K, int S, int ROWS, int COLS, int SKIP_LEFT = 0, int SKIP_RIGHT = 0>
inline void depthwise_window_tile(const X86ConvArgs& a, const float* x0, int64_t row_stride, const typename V::T* w,
                                  typename V::T bias, int64_t block, int64_t oh, int64_t ow0, int skip_top = 0,
                                  int skip_bottom = 0) {
  using T = typename V::T;
  T acc[ROWS][COLS];
#pragma GCC unroll 4
  for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 16
    for (int co = 0; co < COLS; ++co) acc[ro][co] = bias;
  depthwise_window_accumulate<V, K, S, ROWS, COLS, SKIP_LEFT, SKIP_RIGHT>(x0, row_stride, w, acc, skip_top,
                                                                          skip_bottom);
#pragma GCC unroll 4
  for (int ro = 0; ro < ROWS; ++ro) {
    if (kWideRegisterFile<V>) store_tile_pixels<V, COLS>(a, acc[ro], block, (oh + ro) * a.out_w + ow0);
    else store_pixels_inline<V, COLS>(a, acc[ro], block, (oh + ro) * a.out_w + ow0);
  }
}

// The clamp activations (None, Relu, Clip) of the centre runs below: max and min that keep a NaN lane NaN,
// as the reference does, but may return either zero for +0 against -0 (the reference's Relu keeps -0).
// V::max and V::min by default (one instruction each on x86); an ISA file may specialise this before it
// instantiates the kernels (NEON: FMAX/FMIN, one instruction each where V::max is a compare and a select).
template <class V>
struct DepthwiseClamp {
  using T = typename V::T;
  static T lower(T v, T lo) { return V::max(lo, v); }  // V::max returns its second operand, v, when NaN
  static T upper(T v, T hi) { return V::min(hi, v); }
};

// The centre tiles of output rows [oh, oh + ROWS): `tiles` tiles of COLS columns, the first one's input
// window at x0, every window inside the image (no padding read, no window checks), written to the
// blocked output (out_block == P) at y, the residual (or null) at the same offset, with a clamp to
// [lo, hi] (UPPER: a Clip; else only lo: Relu with 0, None with -inf). One call per row: the K x K
// weights, the bias and the bounds stay in registers across the row's tiles, and the tile loop carries
// only its pointers (the Cortex-A72 analysis in bench/REPORT.md, section Arm64, says what the call per
// tile, its window checks and its epilogue had cost).
template <class V, int K, int S, int ROWS, int COLS, bool UPPER>
__attribute__((noinline)) void depthwise_centre_run(const float* x0, int64_t in_row, const typename V::T* weights,
                                                    typename V::T bias, float* y, const float* residual,
                                                    int64_t out_row, int64_t tiles, typename V::T lo,
                                                    typename V::T hi) {
  using T = typename V::T;
  using Clamp = DepthwiseClamp<V>;
  constexpr int P = V::kLanes;
  T w[K * K];
#pragma GCC unroll 32
  for (int t = 0; t < K * K; ++t) w[t] = weights[t];
  for (int64_t tile = 0; tile < tiles; ++tile) {
    T acc[ROWS][COLS];
#pragma GCC unroll 4
    for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 16
      for (int co = 0; co < COLS; ++co) acc[ro][co] = bias;
    depthwise_window_accumulate<V, K, S, ROWS, COLS, 0, 0, true>(x0, in_row, w, acc);
#pragma GCC unroll 4
    for (int ro = 0; ro < ROWS; ++ro)
#pragma GCC unroll 16
      for (int co = 0; co < COLS; ++co) {
        T v = acc[ro][co];
        if (residual) v = V::add(v, V::load(residual + ro * out_row + co * P));
        v = Clamp::lower(v, lo);
        if (UPPER) v = Clamp::upper(v, hi);
        V::store(y + ro * out_row + co * P, v);
      }
    x0 += COLS * S * P;
    y += COLS * P;
    if (residual) residual += COLS * P;
  }
}

enum class TileColumns { Inside, LeftEdge, RightEdge, BothEdges, Copy };

// How a tile whose window starts at input column iw0 and spans `cols` columns reads the image: inside it,
// across the left or right padding or both by `edge` columns (skipped), or neither (a window copy). Both
// edges: a 7- or 8-wide plane's one tile per row, faster skipping both than reading the padded plane copy
// on either ISA (measured: bench/REPORT.md, "Design decisions and their measurements").
inline TileColumns tile_columns(int64_t iw0, int64_t cols, int64_t in_w, int64_t edge) {
  const int64_t right = iw0 + cols - in_w;  // window columns past the right edge
  if (iw0 >= 0 && right <= 0) return TileColumns::Inside;
  if (iw0 == -edge && right <= 0) return TileColumns::LeftEdge;
  if (iw0 >= 0 && right == edge) return TileColumns::RightEdge;
  if (iw0 == -edge && right == edge) return TileColumns::BothEdges;
  return TileColumns::Copy;
}

// The tile of outputs rows [oh, oh + ROWS) x columns [ow0, ow0 + COLS): straight from the image when its
// input window lies inside, or crosses the top or bottom padding (those rows skipped), or the left or
// right padding by the usual K / 2 columns (those columns skipped); else from a copy of the window with
// zeros where it leaves the image (the padding taps then add nothing, as skipping them would). The
// first and last tiles of every row are such edge tiles: a quarter to a half of the tiles on 28- to
// 56-wide planes had copied their window. Skipping the top and bottom rows as well paid again (both
// measured: bench/REPORT.md, "Design decisions and their measurements").
template <class V, int K, int S, int ROWS, int COLS>
void depthwise_tile(const X86ConvArgs& a, const float* xb, const typename V::T* w, typename V::T bias, int64_t block,
                    int64_t oh, int64_t ow0) {
  constexpr int P = V::kLanes;
  constexpr int kInRows = (ROWS - 1) * S + K, kInCols = (COLS - 1) * S + K, kEdge = K / 2;
  const int64_t ih0 = oh * S - a.pad_top, iw0 = ow0 * S - a.pad_left;
  // Window rows above and below the image, skipped (at the run time cost of a branch per window row).
  const int top = static_cast<int>(imax(0, -ih0)), bottom = static_cast<int>(imax(0, ih0 + kInRows - a.in_h));
  if (top + bottom < kInRows) {
    const float* const row = xb + (ih0 + top) * a.in_w * P;  // the first row read, at the image's column 0
    switch (tile_columns(iw0, kInCols, a.in_w, kEdge)) {
      case TileColumns::Inside:
        return depthwise_window_tile<V, K, S, ROWS, COLS>(a, row + iw0 * P, a.in_w * P, w, bias, block, oh, ow0, top,
                                                          bottom);
      case TileColumns::LeftEdge:
        return depthwise_window_tile<V, K, S, ROWS, COLS, kEdge, 0>(a, row, a.in_w * P, w, bias, block, oh, ow0, top,
                                                                    bottom);
      case TileColumns::RightEdge:
        return depthwise_window_tile<V, K, S, ROWS, COLS, 0, kEdge>(a, row + iw0 * P, a.in_w * P, w, bias, block, oh,
                                                                    ow0, top, bottom);
      case TileColumns::BothEdges:
        return depthwise_window_tile<V, K, S, ROWS, COLS, kEdge, kEdge>(a, row, a.in_w * P, w, bias, block, oh, ow0,
                                                                        top, bottom);
      case TileColumns::Copy: break;
    }
  }
  alignas(64) float window[kInRows][kInCols][P];
  for (int r = 0; r < kInRows; ++r) {
    const int64_t ih = ih0 + r;
    for (int c = 0; c < kInCols; ++c) {
      const int64_t iw = iw0 + c;
      const bool inside = ih >= 0 && ih < a.in_h && iw >= 0 && iw < a.in_w;
      V::store(window[r][c], inside ? V::load(xb + (ih * a.in_w + iw) * P) : V::zero());
    }
  }
  depthwise_window_tile<V, K, S, ROWS, COLS>(a, &window[0][0][0], kInCols * P, w, bias, block, oh, ow0);
}

// The tiles of one output row: visit(IntConstant<W>{}, ow0) for each tile of W columns at column ow0.
// Tiles of COLS (8 or 4) columns, then 7 (COLS 8 only), 4, 2 and 1 for the rest; 7 + 7 for a 14-wide
// plane. (8 + 4 + 1 + 1 had run a quarter of the 14-wide planes' outputs, and three of the 7-wide ones',
// in single-column tiles.) full_row_tiles: how many COLS-wide tiles lead the row; rest_row_tiles: the
// tiles after them, from column ow on.
template <int COLS>
inline int64_t full_row_tiles(int64_t out_w) {
  static_assert(COLS == 8 || COLS == 4, "rest widths for 8- and 4-column tiles");
  return COLS == 8 && out_w == 14 ? 0 : out_w / COLS;
}

template <int COLS, class Visit>
inline void rest_row_tiles(int64_t out_w, int64_t ow, Visit visit) {
  if (COLS == 8 && out_w == 14) {
    visit(IntConstant<(COLS == 8 ? 7 : 1)>{}, 0);
    visit(IntConstant<(COLS == 8 ? 7 : 1)>{}, 7);
    return;
  }
  if (COLS == 8 && out_w - ow == 7) return visit(IntConstant<(COLS == 8 ? 7 : 1)>{}, ow);
  if (COLS == 8 && ow + 4 <= out_w) {
    visit(IntConstant<(COLS == 8 ? 4 : 1)>{}, ow);
    ow += 4;
  }
  if (ow + 2 <= out_w) {
    visit(IntConstant<2>{}, ow);
    ow += 2;
  }
  if (ow < out_w) visit(IntConstant<1>{}, ow);
}

template <int COLS, class Visit>
inline void for_each_row_tile(int64_t out_w, Visit visit) {
  const int64_t full = full_row_tiles<COLS>(out_w);
  for (int64_t t = 0; t < full; ++t) visit(IntConstant<COLS>{}, t * COLS);
  rest_row_tiles<COLS>(out_w, full * COLS, visit);
}

// The row's leading COLS-wide tiles [*begin, *end) whose input windows lie inside the image's columns
// (the nine-grid centre of the row; *begin == *end when none does), within [0, full_row_tiles]. Args: the
// fp32 or the int8 kernels' arguments (in_w, pad_left, out_w).
template <int K, int S, int COLS, class Args>
inline void centre_row_tiles(const Args& a, int64_t* begin, int64_t* end) {
  constexpr int64_t kInCols = (COLS - 1) * S + K, kStep = COLS * S;
  const int64_t last = a.in_w - kInCols + a.pad_left;  // a centre tile's ow0 * S is at most this
  const int64_t full = full_row_tiles<COLS>(a.out_w);
  *begin = imin((a.pad_left + kStep - 1) / kStep, full);
  *end = imax(*begin, last < 0 ? 0 : imin(full, last / kStep + 1));
}

// The centre tiles of every row: [begin, end) of the row's COLS-wide tiles, empty unless the output is
// blocked and the activation a clamp (what depthwise_centre_run writes).
struct CentreTiles {
  int64_t begin = 0, end = 0;
};

template <class V, int K, int S, int COLS>
inline CentreTiles centre_tiles(const X86ConvArgs& a) {
  CentreTiles t;
  if (a.out_block == V::kLanes && clamp_activation(a)) centre_row_tiles<K, S, COLS>(a, &t.begin, &t.end);
  return t;
}

// Output rows [oh, oh + ROWS), every column. When the rows' input windows lie inside the image and the row
// has centre tiles, those run in one depthwise_centre_run; the border tiles (and every tile of other rows
// and cases) take depthwise_tile.
template <class V, int K, int S, int ROWS, int COLS>
__attribute__((always_inline)) inline void depthwise_tile_rows(const X86ConvArgs& a, const float* xb,
                                                               const typename V::T* w, typename V::T bias,
                                                               int64_t block, int64_t oh, CentreTiles centre) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  constexpr int kInRows = (ROWS - 1) * S + K;
  auto tile = [&](auto width, int64_t ow) {
    depthwise_tile<V, K, S, ROWS, decltype(width)::value>(a, xb, w, bias, block, oh, ow);
  };
  const int64_t ih0 = oh * S - a.pad_top;
  if (centre.end == centre.begin || ih0 < 0 || ih0 + kInRows > a.in_h) return for_each_row_tile<COLS>(a.out_w, tile);
  for (int64_t t = 0; t < centre.begin; ++t) tile(IntConstant<COLS>{}, t * COLS);
  const int64_t ow0 = centre.begin * COLS, offset = (block * a.out_h * a.out_w + oh * a.out_w + ow0) * P;
  const float* x0 = xb + (ih0 * a.in_w + ow0 * S - a.pad_left) * P;
  const ClampBounds bounds = clamp_bounds(a);
  const T lo = V::set1(bounds.lo), hi = V::set1(bounds.hi);
  const float* residual = a.residual ? a.residual + offset : nullptr;
  if (a.activation == ActivationKind::Clip)
    depthwise_centre_run<V, K, S, ROWS, COLS, true>(x0, a.in_w * P, w, bias, a.y + offset, residual, a.out_w * P,
                                                    centre.end - centre.begin, lo, hi);
  else
    depthwise_centre_run<V, K, S, ROWS, COLS, false>(x0, a.in_w * P, w, bias, a.y + offset, residual, a.out_w * P,
                                                     centre.end - centre.begin, lo, hi);
  const int64_t full = full_row_tiles<COLS>(a.out_w);
  for (int64_t t = centre.end; t < full; ++t) tile(IntConstant<COLS>{}, t * COLS);
  rest_row_tiles<COLS>(a.out_w, full * COLS, tile);
}

// The tile shape of K x K kernels: the ISA's for 3x3, one row of four columns for 5x5.
template <class V, int K>
constexpr int kDepthwiseTileRows = K == 3 ? V::kDepthwiseRows3x3 : 1;
template <class V, int K>
constexpr int kDepthwiseTileCols = K == 3 ? V::kDepthwiseCols3x3 : 4;

// Channel blocks [block_begin, block_end), output rows [row_begin, row_end), the tiles reading each
// block's plane at xb(block) with the geometry of `a` (the image itself, or a padded copy of it).
template <class V, int K, int S, class PlaneOf>
inline void depthwise_kxk_blocks(const X86ConvArgs& a, const X86ConvRange& r, PlaneOf xb_of) {
  using T = typename V::T;
  constexpr int P = V::kLanes;
  constexpr int ROWS = kDepthwiseTileRows<V, K>, COLS = kDepthwiseTileCols<V, K>;
  const CentreTiles centre = centre_tiles<V, K, S, COLS>(a);
  for (int64_t block = r.oc_block_begin; block < r.oc_block_end; ++block) {
    const float* xb = xb_of(block);
    const float* wb = a.weights + block * K * K * P;
    T w[K * K];
#pragma GCC unroll 32
    for (int t = 0; t < K * K; ++t) w[t] = V::load(wb + t * P);
    const T bias = V::load(a.bias + block * P);
    int64_t oh = r.row_begin;
    if (ROWS == 2)
      for (; oh + 2 <= r.row_end; oh += 2)
        depthwise_tile_rows<V, K, S, (ROWS == 2 ? 2 : 1), COLS>(a, xb, w, bias, block, oh, centre);
    for (; oh < r.row_end; ++oh) depthwise_tile_rows<V, K, S, 1, COLS>(a, xb, w, bias, block, oh, centre);
  }
}

// Input rows (or columns) of the plane with its padding as far as the outputs read it.
inline int64_t padded_extent(int64_t in, int64_t pad_begin, int64_t out, int64_t stride, int64_t kernel) {
  return imax(in + pad_begin, (out - 1) * stride + kernel);
}

constexpr int64_t kDepthwisePaddedPlaneBytes = 32 * 1024;

// depthwise_kxk on small padded planes: each channel block is first copied into a zero-bordered plane,
// so that every tile reads it directly. Where tiles would copy their windows (depthwise_tile) that costs
// more than one copy of the plane. Up to the L1's size: the 28x28 planes' 58 KB copies (AVX-512) made
// them slower (measured: bench/REPORT.md, "Design decisions and their measurements").
// Its own function, so that the copy's stack frame is not set up for the large planes.
template <class V, int K, int S>
__attribute__((noinline)) void depthwise_kxk_padded(const X86ConvArgs& a, const X86ConvRange& r, int64_t padded_h,
                                                    int64_t padded_w) {
  constexpr int P = V::kLanes;
  alignas(64) float padded[kDepthwisePaddedPlaneBytes / 4];
  std::fill_n(padded, padded_h * padded_w * P, 0.f);
  X86ConvArgs pa = a;
  pa.in_h = padded_h, pa.in_w = padded_w, pa.pad_top = 0, pa.pad_left = 0;
  const int64_t in_plane = a.in_h * a.in_w;
  depthwise_kxk_blocks<V, K, S>(pa, r, [&](int64_t block) {
    const float* xb = a.x + block * in_plane * P;
    for (int64_t ih = 0; ih < a.in_h; ++ih)
      std::copy_n(xb + ih * a.in_w * P, a.in_w * P, padded + ((ih + a.pad_top) * padded_w + a.pad_left) * P);
    return static_cast<const float*>(padded);
  });
}

// Whether some tile of a row would copy its window (tile_columns: both edges in one tile, or an edge
// crossed by other than K / 2 columns); rows are skipped at the top and bottom whatever they cross.
template <int K, int S, int COLS>
bool row_tiles_copy(const X86ConvArgs& a) {
  bool copy = false;
  for_each_row_tile<COLS>(a.out_w, [&](auto width, int64_t ow) {
    constexpr int64_t kInCols = (decltype(width)::value - 1) * S + K;
    copy |= tile_columns(ow * S - a.pad_left, kInCols, a.in_w, K / 2) == TileColumns::Copy;
  });
  return copy;
}

// K x K, stride S (both axes), dilation 1.
template <class V, int K, int S>
void depthwise_kxk(const X86ConvArgs& a, const X86ConvRange& r) {
  constexpr int P = V::kLanes;
  constexpr int COLS = kDepthwiseTileCols<V, K>;
  const int64_t padded_h = padded_extent(a.in_h, a.pad_top, a.out_h, S, K);
  const int64_t padded_w = padded_extent(a.in_w, a.pad_left, a.out_w, S, K);
  const bool has_padding = padded_h > a.in_h || padded_w > a.in_w || a.pad_top > 0 || a.pad_left > 0;
  // The padded copy only pays where some tiles would otherwise copy their windows (5x5 stride 2 on
  // 16x16, whose last tile crosses the right edge by one column); elsewhere the tiles are faster reading
  // the image directly (measured: bench/REPORT.md, "Design decisions and their measurements").
  if (has_padding && padded_h * padded_w * P * 4 <= kDepthwisePaddedPlaneBytes && row_tiles_copy<K, S, COLS>(a))
    return depthwise_kxk_padded<V, K, S>(a, r, padded_h, padded_w);
  const int64_t in_plane = a.in_h * a.in_w;
  depthwise_kxk_blocks<V, K, S>(a, r, [&](int64_t block) { return a.x + block * in_plane * P; });
}

// Any kernel, stride and dilation: every output over its valid taps.
template <class V>
void depthwise_generic(const X86ConvArgs& a, const X86ConvRange& r) {
  constexpr int P = V::kLanes;
  const int64_t in_plane = a.in_h * a.in_w;
  for (int64_t block = r.oc_block_begin; block < r.oc_block_end; ++block) {
    const float* xb = a.x + block * in_plane * P;
    const float* wb = a.weights + block * a.kernel_h * a.kernel_w * P;
    const typename V::T bias = V::load(a.bias + block * P);
    for (int64_t oh = r.row_begin; oh < r.row_end; ++oh) depthwise_pixels<V>(a, xb, wb, bias, block, oh, 0, a.out_w);
  }
}

template <class V>
void depthwise_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  const bool square = a.kernel_h == a.kernel_w && a.stride_h == a.stride_w && a.dilation_h == 1 && a.dilation_w == 1;
  if (square && a.kernel_h == 3 && a.stride_h == 1) return depthwise_kxk<V, 3, 1>(a, r);
  if (square && a.kernel_h == 3 && a.stride_h == 2) return depthwise_kxk<V, 3, 2>(a, r);
  if (square && a.kernel_h == 5 && a.stride_h == 1) return depthwise_kxk<V, 5, 1>(a, r);
  if (square && a.kernel_h == 5 && a.stride_h == 2) return depthwise_kxk<V, 5, 2>(a, r);
  depthwise_generic<V>(a, r);
}

}  // namespace
}  // namespace ninegrid
