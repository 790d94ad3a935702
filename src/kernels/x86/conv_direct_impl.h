// The direct and pointwise convolution kernels for an arithmetic policy A (NeoCPU Algorithm 1 with register
// blocking): a tile of OCB output blocks x N output pixels lives in OCB * N vector accumulators while the
// input channels and kernel taps stream by; each step loads OCB weight vectors (P output channels of one
// tap of A::kDepth input channels) and, for each of the N pixels, broadcasts the kDepth input values and
// issues OCB multiply-adds. The input may have any channel block PIN that kDepth divides (1 = plain NCHW,
// the first layer of a network: Algorithm 2, fp32 only).
//
// The policy A gives the element types and the arithmetic (see FloatConvArith below, the fp32 one, and
// qconv_arith_impl.h, the int8 one):
//   Args, In, Wt            the kernel arguments (X86ConvArgs ...), input and weight element types
//   T, X, W                 accumulator, broadcast input and weight vectors
//   kLanes, kDepth          output channels per vector; input channels per multiply-add
//   Menu<OCB>               the tile widths (DirectMenu's members)
//   input(a)                the input the tiles read (Args::x; an int16 policy's staged copy of it)
//   load_weights, broadcast, madd
//   start(a, block, kh_begin, kh_end, kw_begin, kw_end)  where a tile's sums start (bias; int8 adds the
//                           zero-point sums of the taps outside [kh_begin, kh_end) x [kw_begin, kw_end))
//   store_tile<N>, store<N>, prefetch_output<N>, dense_fits  the epilogue
//   kPrefetchInputBlocks    whether the dense pointwise tile asks for its next input block's lines ahead
// Packed weights are [oc block][icpg / kDepth][kh][kw][P][kDepth].
//
// Nine-grid: the centre outputs of a row (every kernel column inside the input) run row tiles; each row
// loops over its valid kernel rows only. The border columns (some kernel columns outside) run column
// tiles: the same border column of several centre rows shares one valid kernel-column range. Corners go
// one pixel at a time. No padded copy of the input is ever made.
//
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/conv_kernels_x86.h"

namespace ninegrid {
namespace {

// ---- Tile widths ----

// The pixel counts N a kernel is instantiated for, the bulk width first (the tile that covers long rows;
// the others, in any order, make up the rest).
template <int... Ns>
struct TileWidths {};

// Per vector width and output blocks per tile: the row-tile widths, full menu (the common input blocks
// and strides) and reduced (rare combinations, to bound the code size), and the column-tile heights. The
// bulk row tile leaves room in the registers for the weights and the broadcast input: AVX-512 has 32
// (2 blocks x 12 pixels = 24 accumulators; 14 measured no faster), AVX2 16 (2 x 6 = 12 accumulators).
// AVX-512's 13 (26 accumulators) is for rests: a 7x7 plane's 49 pixels go as 12 + 12 + 12 + 13 instead
// of 12 + 12 + 12 + 10 + 3, whose 3-pixel tile takes about as long per input channel as the 10 (it pays
// on 7x7 planes and changes nothing from 14x14 up; measured: bench/REPORT.md, "Design decisions and their
// measurements").
template <int LANES, int OCB>
struct DirectMenu;
template <>
struct DirectMenu<16, 2> {
  using Full = TileWidths<12, 13, 10, 8, 6, 4, 3, 2, 1>;
  using Reduced = TileWidths<12, 4, 2, 1>;
  using Column = TileWidths<6, 4, 3, 2, 1>;
};
template <>
struct DirectMenu<16, 1> {
  using Full = TileWidths<16, 12, 8, 4, 2, 1>;
  using Reduced = TileWidths<16, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};
template <>
struct DirectMenu<8, 2> {
  using Full = TileWidths<6, 4, 3, 2, 1>;
  using Reduced = TileWidths<6, 4, 2, 1>;
  using Column = TileWidths<4, 3, 2, 1>;
};
template <>
struct DirectMenu<8, 1> {
  using Full = TileWidths<12, 8, 4, 2, 1>;
  using Reduced = TileWidths<12, 4, 2, 1>;
  using Column = TileWidths<8, 4, 2, 1>;
};

// How many tiles of each menu width cover `width` pixels (counts in menu order): bulk tiles while
// much remains, then the cheapest mix for the rest, costing a tile of N pixels x OCB blocks like its FMAs
// (at least 8 in flight per cycle pair: FMA latency 4 x 2 ports) plus a fixed overhead.
struct TilePlan {
  int64_t count[16] = {};
};

// The cheapest mix for every rest of at most 3 bulk tiles, worked out at compile time: planning runs
// once per block pair and pixel chunk, and the search at run time showed in MobileNetV2's profile
// (measured: bench/REPORT.md, "Design decisions and their measurements").
template <int OCB, int... Ns>
struct RestPlans {
  static constexpr int kCount = sizeof...(Ns);
  static constexpr int kWidths[kCount] = {Ns...};
  static constexpr int kMaxRest = 3 * kWidths[0];
  static_assert(kMaxRest <= 48 && kCount <= 16, "menu wider than the table");
  struct Table {
    unsigned char count[49][16];
  };
  static constexpr Table build() {
    Table t{};
    int cost[49] = {}, last[49] = {};
    for (int w = 1; w <= kMaxRest; ++w) {
      cost[w] = 1 << 30;
      for (int k = 0; k < kCount; ++k) {
        const int n = kWidths[k];
        if (n > w) continue;
        const int c = cost[w - n] + (n * OCB > 8 ? n * OCB : 8) + 2;
        if (c < cost[w]) cost[w] = c, last[w] = k;
      }
    }
    for (int w = 1; w <= kMaxRest; ++w)
      for (int r = w; r > 0; r -= kWidths[last[r]]) ++t.count[w][last[r]];
    return t;
  }
  static constexpr Table kTable = build();
};

template <int OCB, int... Ns>
TilePlan plan_tiles(int64_t width, TileWidths<Ns...>) {
  using Plans = RestPlans<OCB, Ns...>;
  constexpr int kBulk = Plans::kWidths[0];
  TilePlan plan;
  int64_t rest = width;
  if (rest > 3 * kBulk) {
    plan.count[0] = (rest - 2 * kBulk) / kBulk;
    rest -= plan.count[0] * kBulk;
  }
  // Exact minimum over the remaining rest <= 3 * kBulk.
  for (int k = 0; k < Plans::kCount; ++k) plan.count[k] += Plans::kTable.count[rest][k];
  return plan;
}

// ---- Direct convolution ----

// Tiles are never inlined into their loops: GCC then allocates each tile's accumulators on its own, and
// with several tiles in one function it kept AVX2 accumulators in memory (a store after every FMA).
#define NG_TILE __attribute__((noinline))

struct DirectGeometry {
  int64_t in_plane;           // in_h * in_w
  int64_t weights_per_block;  // elements of packed weights per output block: icpg * kh * kw * P
  int64_t centre_begin, centre_end;          // output columns whose kernel columns are all inside
  int64_t row_centre_begin, row_centre_end;  // output rows whose kernel rows are all inside
  bool dense_rows = false;                   // row tiles: direct_row_tile_dense (see dense_tiles_fit)
};

// Input element of channel ic at pixel `pixel` for channel block PIN.
template <int PIN, class In>
inline const In* input_at(const In* x, int64_t in_plane, int64_t ic, int64_t pixel) {
  return x + ((ic / PIN) * in_plane + pixel) * PIN + ic % PIN;
}

template <class Args>
inline int64_t first_input_channel(const Args& a, int64_t block, int P) {
  return (block * P / a.out_channels_per_group) * a.in_channels_per_group;
}

// Rest vectors. A policy whose kRest is true (int8 on AVX2 with 8-bit weights: simd_int8_avx2.h,
// QVecAvx2W7R) keeps part of a few weights out of the packed ones, as vectors listed per output block
// (X86QConvArgs::rest); each tile adds, after its packed weights, those of its blocks at the taps it covers,
// with the same multiply-add. The sum is the same in any order, so the tile's loops stay as they are.
// rest_vectors_of: a policy's (or a vector type's) kRest, else false.
template <class A>
constexpr auto rest_vectors_of(int) -> decltype(A::kRest, false) {
  return A::kRest;
}
template <class A>
constexpr bool rest_vectors_of(long) {
  return false;
}

// Adds to acc the rest vectors of blocks [block, block + OCB) whose taps lie in [kh_begin, kh_end) x
// [kw_begin, kw_end). x: the tile's first pixel at tap (kh_begin, kw_begin) in the plane's first input
// block; the blocks' group starts at input channel ic_begin; pixel i of a tap at + i * pixel_step.
template <class A, int OCB, int N, int PIN>
__attribute__((always_inline)) inline void add_rest_vectors(const typename A::Args& a, int64_t block,
                                                            const typename A::In* x, int64_t block_stride,
                                                            int64_t pixel_step, int64_t row_step, int64_t tap_step,
                                                            int64_t ic_begin, int64_t kh_begin, int64_t kh_end,
                                                            int64_t kw_begin, int64_t kw_end,
                                                            typename A::T (&acc)[OCB][N]) {
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o) {
    const auto* e = a.rest + a.rest_begin[block + o];
    const auto* const end = a.rest + a.rest_begin[block + o + 1];
    for (; e != end; ++e) {
      if (e->kh < kh_begin || e->kh >= kh_end || e->kw < kw_begin || e->kw >= kw_end) continue;
      const int64_t c = ic_begin + e->channel;
      const typename A::In* xe =
          x + (c / PIN) * block_stride + c % PIN + (e->kh - kh_begin) * row_step + (e->kw - kw_begin) * tap_step;
      const typename A::W wv = A::load_weights(e->weights);
#pragma GCC unroll 16
      for (int i = 0; i < N; ++i) acc[o][i] = A::madd(A::broadcast(xe + i * pixel_step), wv, acc[o][i]);
    }
  }
}

// The accumulation shared by all tile shapes: OCB blocks x N pixels whose inputs for tap (kh_begin,
// kw_begin) of input channel ic sit at input_at(ic, first_pixel) + i * pixel_step; kernel rows
// [kh_begin, kh_end) and columns [kw_begin, kw_end). PIXEL_STEP: the step when known at compile time, or 0.
template <class A, int OCB, int N, int PIN, int PIXEL_STEP>
inline void accumulate(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t first_pixel,
                       int64_t pixel_step_runtime, int64_t kh_begin, int64_t kh_end, int64_t kw_begin,
                       int64_t kw_end, typename A::T (&acc)[OCB][N]) {
  using T = typename A::T;
  using In = typename A::In;
  using Wt = typename A::Wt;
  constexpr int P = A::kLanes, D = A::kDepth;
  const int64_t pixel_step = PIXEL_STEP ? PIXEL_STEP : pixel_step_runtime;
  const int64_t row_step = a.dilation_h * a.in_w * PIN;
  const int64_t tap_step = a.dilation_w * PIN;
  const int64_t taps = a.kernel_h * a.kernel_w;
  const int64_t ic_begin = first_input_channel(a, block, P);
  const int64_t ic_end = ic_begin + a.in_channels_per_group;
  if (kh_begin >= kh_end || kw_begin >= kw_end) return;
  // A private copy of the accumulators, every loop over it fully unrolled: GCC keeps an array in
  // registers only when all its indices are constants; otherwise it writes it back after every FMA.
  T sum[OCB][N];
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o)
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) sum[o][i] = acc[o][i];
  const Wt* w = a.weights + block * g.weights_per_block + (kh_begin * a.kernel_w + kw_begin) * P * D;
  for (int64_t ic = ic_begin; ic < ic_end;) {
    // Channels ic .. ic + run - 1 sit in one input block: their values are PIN-interleaved (D divides
    // PIN, the group's first channel and its channel count, so runs are whole steps of D).
    const int64_t run = imin(PIN - ic % PIN, ic_end - ic);
    const In* xc = input_at<PIN>(A::input(a), g.in_plane, ic, first_pixel);
    // While this input block's channels stream by, bring the next block's lines of this tile into L1
    // (the hardware prefetchers do not guess that jump of a whole plane).
    if (PIN >= 8 && ic + run < ic_end) {
      const In* next = xc + g.in_plane * PIN;
      for (int64_t kh = kh_begin; kh < kh_end; ++kh)
        for (int64_t i = 0; i < N + (kw_end - kw_begin - 1) * a.dilation_w; ++i)
          __builtin_prefetch(next + (kh - kh_begin) * row_step + i * pixel_step);
    }
    for (int64_t j = 0; j < run; j += D, xc += D, w += taps * P * D) {
      const In* xr = xc;
      const Wt* wr = w;
      for (int64_t kh = kh_begin; kh < kh_end; ++kh, xr += row_step, wr += a.kernel_w * P * D) {
        const In* xk = xr;
        const Wt* wk = wr;
        for (int64_t kw = kw_begin; kw < kw_end; ++kw, xk += tap_step, wk += P * D) {
          typename A::W wv[OCB];
#pragma GCC unroll 8
          for (int o = 0; o < OCB; ++o) wv[o] = A::load_weights(wk + o * g.weights_per_block);
#pragma GCC unroll 16
          for (int i = 0; i < N; ++i) {
            const typename A::X xv = A::broadcast(xk + i * pixel_step);
#pragma GCC unroll 8
            for (int o = 0; o < OCB; ++o) sum[o][i] = A::madd(xv, wv[o], sum[o][i]);
          }
        }
      }
    }
    ic += run;
  }
  if constexpr (rest_vectors_of<A>(0))
    add_rest_vectors<A, OCB, N, PIN>(a, block, A::input(a) + first_pixel * PIN, g.in_plane * PIN, pixel_step, row_step,
                                     tap_step, ic_begin, kh_begin, kh_end, kw_begin, kw_end, sum);
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o)
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[o][i] = sum[o][i];
}

// ---- Pixel groups ----

// A policy may take the inputs of several neighbouring pixels from one load and multiply-add each pixel's
// kDepth values by their lane of it, instead of broadcasting every pixel's values on their own (sdot's
// indexed form, `sdot v.4s, w.16b, x.4b[i]`: one 16-byte load and one shift to signed bytes for 4 pixels
// of NCHW4c where the broadcast costs a load and a shift per pixel, shared by only the tile's OCB blocks).
// It says so with kGroupElements, the input elements of one group load, and provides
//   XG load_group(const In* p)           kGroupElements inputs from p
//   T madd_lane<L>(XG g, W w, T acc)     acc plus inputs [L * kDepth, (L + 1) * kDepth) of g times w
// A dense tile whose pixels are whole input blocks side by side (pixel step PIN: stride 1) loads
// G = kGroupElements / PIN pixels per group, all PIN channels of them; the pixels past a multiple of G take
// the broadcast. Policies without kGroupElements, or with 0 (the x86 ones whose broadcast comes from memory
// in one load), keep the broadcast everywhere and the loops as they were.
template <class A>
constexpr auto group_elements_of(int) -> decltype(A::kGroupElements, 0) {
  return A::kGroupElements;
}
template <class A>
constexpr int group_elements_of(long) {
  return 0;
}

// Pixels per group load for input block PIN and a pixel step of PIXEL_STEP elements (0: known at run time
// only), or 1: no groups.
template <class A, int PIN, int PIXEL_STEP>
constexpr int pixel_group() {
  constexpr int e = group_elements_of<A>(0);
  return e > 0 && PIXEL_STEP == PIN && e % PIN == 0 && e / PIN > 1 ? e / PIN : 1;
}

template <int... Is>
struct IntList {};
template <int N, int... Is>
struct MakeIntList : MakeIntList<N - 1, N - 1, Is...> {};
template <int... Is>
struct MakeIntList<0, Is...> {
  using type = IntList<Is...>;
};

// Pixel P of every group (pixels g * G + P), step S (input channels S * kDepth ..) of the input block.
template <class A, int OCB, int N, int PIN, int G, int S, int P>
__attribute__((always_inline)) inline void madd_group_pixel(const typename A::XG (&xg)[N / G > 0 ? N / G : 1],
                                                            const typename A::W (&wv)[OCB],
                                                            typename A::T (&acc)[OCB][N]) {
  constexpr int L = P * (PIN / A::kDepth) + S;  // the lane of pixel P's values for step S
#pragma GCC unroll 16
  for (int g = 0; g < N / G; ++g)
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o) acc[o][g * G + P] = A::template madd_lane<L>(xg[g], wv[o], acc[o][g * G + P]);
}

// Step S of the input block for all N pixels: its weights (w + o * weights_per_block + S * step_weights),
// the grouped pixels by lane, the rest by broadcast (from x + i * PIN + S * kDepth).
template <class A, int OCB, int N, int PIN, int G, int S, int... Ps>
__attribute__((always_inline)) inline void madd_group_step(const typename A::XG (&xg)[N / G > 0 ? N / G : 1],
                                                           const typename A::In* x, const typename A::Wt* w,
                                                           int64_t weights_per_block, int64_t step_weights,
                                                           typename A::T (&acc)[OCB][N], IntList<Ps...>) {
  typename A::W wv[OCB];
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o) wv[o] = A::load_weights(w + o * weights_per_block + S * step_weights);
  (madd_group_pixel<A, OCB, N, PIN, G, S, Ps>(xg, wv, acc), ...);
#pragma GCC unroll 16
  for (int i = N / G * G; i < N; ++i) {
    const typename A::X xv = A::broadcast(x + i * PIN + S * A::kDepth);
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o) acc[o][i] = A::madd(xv, wv[o], acc[o][i]);
  }
}

template <class A, int OCB, int N, int PIN, int G, int... Ss>
__attribute__((always_inline)) inline void madd_group_steps(const typename A::In* x, const typename A::Wt* w,
                                                            int64_t weights_per_block, int64_t step_weights,
                                                            typename A::T (&acc)[OCB][N], IntList<Ss...>) {
  // One load per group for all PIN / kDepth steps (at least one element so that N < G compiles).
  typename A::XG xg[N / G > 0 ? N / G : 1];
#pragma GCC unroll 16
  for (int g = 0; g < N / G; ++g) xg[g] = A::load_group(x + g * G * PIN);
  (madd_group_step<A, OCB, N, PIN, G, Ss>(xg, x, w, weights_per_block, step_weights, acc,
                                          typename MakeIntList<G>::type{}),
   ...);
}

// All channels of one input block for OCB blocks x N pixels in groups of G: pixel i's values at
// x + i * PIN, step s's weights of block o at w + o * weights_per_block + s * step_weights.
template <class A, int OCB, int N, int PIN, int G>
__attribute__((always_inline)) inline void madd_input_block_grouped(const typename A::In* x, const typename A::Wt* w,
                                                                    int64_t weights_per_block, int64_t step_weights,
                                                                    typename A::T (&acc)[OCB][N]) {
  static_assert(G > 1 && PIN % A::kDepth == 0, "groups of whole input blocks");
  madd_group_steps<A, OCB, N, PIN, G>(x, w, weights_per_block, step_weights, acc,
                                      typename MakeIntList<PIN / A::kDepth>::type{});
}

// The tile's sums start at A::start for its blocks and its valid taps (the same vector for all N pixels).
template <class A, int OCB, int N>
inline void start_sums(const typename A::Args& a, int64_t block, int64_t kh_begin, int64_t kh_end, int64_t kw_begin,
                       int64_t kw_end, typename A::T (&acc)[OCB][N]) {
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o) {
    const typename A::T start = A::start(a, block + o, kh_begin, kh_end, kw_begin, kw_end);
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[o][i] = start;
  }
}

// Row tile: output row oh, columns [ow0, ow0 + N), all centre columns; kernel rows [kh_begin, kh_end).
// SW: the stride along the width, or 0 for "read it from the args".
template <class A, int OCB, int N, int PIN, int SW>
NG_TILE void direct_row_tile(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t oh,
                             int64_t ow0, int64_t kh_begin, int64_t kh_end) {
  for (int o = 0; o < OCB; ++o) A::template prefetch_output<N>(a, block + o, oh * a.out_w + ow0);
  typename A::T acc[OCB][N];
  start_sums<A, OCB, N>(a, block, kh_begin, kh_end, 0, a.kernel_w, acc);
  const int64_t ih = oh * a.stride_h - a.pad_top + kh_begin * a.dilation_h;  // first valid input row
  const int64_t iw = ow0 * a.stride_w - a.pad_left;                           // >= 0 in the centre
  accumulate<A, OCB, N, PIN, SW * PIN>(a, g, block, ih * a.in_w + iw, a.stride_w * PIN, kh_begin, kh_end, 0,
                                       a.kernel_w, acc);
  for (int o = 0; o < OCB; ++o) A::template store_tile<N>(a, acc[o], block + o, oh * a.out_w + ow0);
}

// direct_row_tile for the common case (A::dense_fits; fp32: dense_tiles_fit below): one group, whole input
// blocks, a blocked output and a clamp activation. The accumulators stay in registers from the bias to the
// store, and no per-tile division finds the group's first input channel; the general tile keeps them in a
// stack array that it copies in and out of registers around the accumulation. That fixed cost weighs most
// on few input channels and small kernels, as in the first convs of MobileNetV2 and ResNet (measured:
// bench/REPORT.md, "Design decisions and their measurements").
template <class A, int OCB, int N, int PIN, int SW>
NG_TILE void direct_row_tile_dense(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t oh,
                                   int64_t ow0, int64_t kh_begin, int64_t kh_end) {
  using T = typename A::T;
  using In = typename A::In;
  using Wt = typename A::Wt;
  constexpr int P = A::kLanes, D = A::kDepth;
  constexpr int G = pixel_group<A, PIN, SW * PIN>();
  const int64_t pixel0 = oh * a.out_w + ow0;
  for (int o = 0; o < OCB; ++o) A::template prefetch_output<N>(a, block + o, pixel0);
  T acc[OCB][N];
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o) {
    const T start = A::start(a, block + o, kh_begin, kh_end, 0, a.kernel_w);
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[o][i] = start;
  }
  const int64_t ih = oh * a.stride_h - a.pad_top + kh_begin * a.dilation_h;  // first valid input row
  const int64_t iw = ow0 * a.stride_w - a.pad_left;                           // >= 0 in the centre
  const int64_t pixel_step = SW ? SW * PIN : a.stride_w * PIN;
  const int64_t row_step = a.dilation_h * a.in_w * PIN, tap_step = a.dilation_w * PIN;
  const int64_t kernel_w = a.kernel_w, rows = kh_end - kh_begin;
  const int64_t channel_weights = a.kernel_h * kernel_w * P * D, weights_per_block = g.weights_per_block;
  const int64_t block_stride = g.in_plane * PIN;
  const Wt* w = a.weights + block * weights_per_block + kh_begin * kernel_w * P * D;
  const In* const x_begin = A::input(a) + (ih * a.in_w + iw) * PIN;
  const In* x = x_begin;
  const In* const x_end = x + (a.in_channels / PIN) * block_stride;
  for (; x != x_end; x += block_stride) {
    // The next input block's lines of this tile, a whole plane away, which the hardware does not guess.
    if (PIN >= 8 && x + block_stride != x_end) {
      const In* next = x + block_stride;
      for (int64_t r = 0; r < rows; ++r, next += row_step)
        for (int64_t i = 0; i < N + (kernel_w - 1) * a.dilation_w; ++i)
          __builtin_prefetch(next + i * pixel_step);
    }
    if constexpr (G > 1) {
      // Each tap's pixels in groups (stride 1), one group load for all the block's channels.
      const In* xr = x;
      const Wt* wr = w;
      for (int64_t r = 0; r < rows; ++r, xr += row_step, wr += kernel_w * P * D) {
        const In* xk = xr;
        const Wt* wk = wr;
        for (int64_t kw = 0; kw < kernel_w; ++kw, xk += tap_step, wk += P * D)
          madd_input_block_grouped<A, OCB, N, PIN, G>(xk, wk, weights_per_block, channel_weights, acc);
      }
      w += PIN / D * channel_weights;
      continue;
    }
    for (int j = 0; j < PIN; j += D, w += channel_weights) {
      const In* xr = x + j;
      const Wt* wr = w;
      for (int64_t r = 0; r < rows; ++r, xr += row_step, wr += kernel_w * P * D) {
        const In* xk = xr;
        const Wt* wk = wr;
        for (int64_t kw = 0; kw < kernel_w; ++kw, xk += tap_step, wk += P * D) {
          typename A::W wv[OCB];
#pragma GCC unroll 8
          for (int o = 0; o < OCB; ++o) wv[o] = A::load_weights(wk + o * weights_per_block);
#pragma GCC unroll 16
          for (int i = 0; i < N; ++i) {
            const typename A::X xv = A::broadcast(xk + i * pixel_step);
#pragma GCC unroll 8
            for (int o = 0; o < OCB; ++o) acc[o][i] = A::madd(xv, wv[o], acc[o][i]);
          }
        }
      }
    }
  }
  if constexpr (rest_vectors_of<A>(0))
    add_rest_vectors<A, OCB, N, PIN>(a, block, x_begin, block_stride, pixel_step, row_step, tap_step, 0, kh_begin,
                                     kh_end, 0, kernel_w, acc);
#pragma GCC unroll 8
  for (int o = 0; o < OCB; ++o) A::template store_tile<N>(a, acc[o], block + o, pixel0);
}

// Column tile: output column ow of rows [oh0, oh0 + N), all centre rows (every kernel row inside).
template <class A, int OCB, int N, int PIN>
NG_TILE void direct_column_tile(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t oh0,
                                int64_t ow) {
  int64_t kw_begin, kw_end;
  valid_taps(ow, a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, &kw_begin, &kw_end);
  typename A::T acc[OCB][N];
  start_sums<A, OCB, N>(a, block, 0, a.kernel_h, kw_begin, kw_end, acc);
  const int64_t ih = oh0 * a.stride_h - a.pad_top;
  const int64_t iw = ow * a.stride_w - a.pad_left + kw_begin * a.dilation_w;
  accumulate<A, OCB, N, PIN, 0>(a, g, block, ih * a.in_w + iw, a.stride_h * a.in_w * PIN, 0, a.kernel_h, kw_begin,
                                kw_end, acc);
  for (int o = 0; o < OCB; ++o) A::template store<N>(a, acc[o], block + o, oh0 * a.out_w + ow, a.out_w);
}

// One output pixel (oh, ow) anywhere: only its valid taps.
template <class A, int OCB, int PIN>
NG_TILE void direct_pixel(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t oh, int64_t ow) {
  int64_t kh_begin, kh_end, kw_begin, kw_end;
  valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
  valid_taps(ow, a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, &kw_begin, &kw_end);
  typename A::T acc[OCB][1];
  start_sums<A, OCB, 1>(a, block, kh_begin, kh_end, kw_begin, kw_end, acc);
  if (kh_begin < kh_end && kw_begin < kw_end) {
    const int64_t ih = oh * a.stride_h - a.pad_top + kh_begin * a.dilation_h;
    const int64_t iw = ow * a.stride_w - a.pad_left + kw_begin * a.dilation_w;
    accumulate<A, OCB, 1, PIN, 0>(a, g, block, ih * a.in_w + iw, 0, kh_begin, kh_end, kw_begin, kw_end, acc);
  }
  for (int o = 0; o < OCB; ++o) A::template store<1>(a, acc[o], block + o, oh * a.out_w + ow);
}

// The centre columns of output row oh as planned: plan.count[k] tiles of the k-th menu width.
template <class A, int OCB, int PIN, int SW, int... Ns>
void direct_centre_row(const typename A::Args& a, const DirectGeometry& g, const TilePlan& plan, int64_t block,
                       int64_t oh, TileWidths<Ns...>) {
  int64_t kh_begin, kh_end;
  valid_taps(oh, a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, &kh_begin, &kh_end);
  int64_t ow = g.centre_begin;
  int k = 0;
  auto run = [&](auto n_constant) {
    constexpr int N = decltype(n_constant)::value;
    for (int64_t t = 0; t < plan.count[k]; ++t, ow += N) {
      if (g.dense_rows) direct_row_tile_dense<A, OCB, N, PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
      else direct_row_tile<A, OCB, N, PIN, SW>(a, g, block, oh, ow, kh_begin, kh_end);
    }
    ++k;
  };
  (run(IntConstant<Ns>{}), ...);
}

// One band of rows [oh0, oh0 + H), all centre rows: their centre row tiles, then the border columns
// as column tiles of height H (so the band's input rows are still in cache).
template <class A, int OCB, int PIN, int SW, class Menu, int H>
void direct_band(const typename A::Args& a, const DirectGeometry& g, const TilePlan& row_plan, int64_t block,
                 int64_t oh0) {
  for (int64_t oh = oh0; oh < oh0 + H; ++oh) direct_centre_row<A, OCB, PIN, SW>(a, g, row_plan, block, oh, Menu{});
  for (int64_t ow = 0; ow < g.centre_begin; ++ow) direct_column_tile<A, OCB, H, PIN>(a, g, block, oh0, ow);
  for (int64_t ow = g.centre_end; ow < a.out_w; ++ow) direct_column_tile<A, OCB, H, PIN>(a, g, block, oh0, ow);
}

// A row outside the centre rows (some kernel rows outside the input): centre row tiles, border pixels.
template <class A, int OCB, int PIN, int SW, class Menu>
void direct_border_row(const typename A::Args& a, const DirectGeometry& g, const TilePlan& row_plan, int64_t block,
                       int64_t oh) {
  direct_centre_row<A, OCB, PIN, SW>(a, g, row_plan, block, oh, Menu{});
  for (int64_t ow = 0; ow < g.centre_begin; ++ow) direct_pixel<A, OCB, PIN>(a, g, block, oh, ow);
  for (int64_t ow = g.centre_end; ow < a.out_w; ++ow) direct_pixel<A, OCB, PIN>(a, g, block, oh, ow);
}

// The centre rows [oh, ...) as planned: plan.count[k] bands of the k-th column-menu height.
template <class A, int OCB, int PIN, int SW, class Menu, int... Hs>
void direct_bands(const typename A::Args& a, const DirectGeometry& g, const TilePlan& row_plan,
                  const TilePlan& band_plan, int64_t block, int64_t oh, TileWidths<Hs...>) {
  int k = 0;
  auto run = [&](auto h_constant) {
    constexpr int H = decltype(h_constant)::value;
    for (int64_t t = 0; t < band_plan.count[k]; ++t, oh += H)
      direct_band<A, OCB, PIN, SW, Menu, H>(a, g, row_plan, block, oh);
    ++k;
  };
  (run(IntConstant<Hs>{}), ...);
}

// Output rows [row_begin, row_end) of output blocks [block, block + OCB): top border rows, the centre rows
// in bands, bottom border rows.
template <class A, int OCB, int PIN, int SW, class Menu>
void direct_rows(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t row_begin,
                 int64_t row_end) {
  using Column = typename A::template Menu<OCB>::Column;
  const TilePlan row_plan = plan_tiles<OCB>(g.centre_end - g.centre_begin, Menu{});
  const int64_t centre_begin = imin(imax(row_begin, g.row_centre_begin), row_end);
  const int64_t centre_end = imax(centre_begin, imin(row_end, g.row_centre_end));
  for (int64_t oh = row_begin; oh < centre_begin; ++oh) direct_border_row<A, OCB, PIN, SW, Menu>(a, g, row_plan, block, oh);
  const TilePlan band_plan = plan_tiles<OCB>(centre_end - centre_begin, Column{});
  direct_bands<A, OCB, PIN, SW, Menu>(a, g, row_plan, band_plan, block, centre_begin, Column{});
  for (int64_t oh = centre_end; oh < row_end; ++oh) direct_border_row<A, OCB, PIN, SW, Menu>(a, g, row_plan, block, oh);
}

template <class A>
using DirectRowsFn = void (*)(const typename A::Args&, const DirectGeometry&, int64_t, int64_t, int64_t);

template <class A, int OCB, int PIN>
DirectRowsFn<A> pick_direct_stride(int64_t stride_w) {
  using Menu = typename A::template Menu<OCB>;
  // Input block 8 only occurs for channel counts that are odd multiples of 8 under AVX-512: reduced menu.
  using Common = typename Menu::Full;
  using Rare = typename Menu::Reduced;
  if (stride_w == 1) return direct_rows<A, OCB, PIN, 1, typename IfThen<PIN == 8, Rare, Common>::type>;
  if (stride_w == 2) return direct_rows<A, OCB, PIN, 2, typename IfThen<PIN == 8, Rare, Common>::type>;
  return direct_rows<A, OCB, PIN, 0, Rare>;
}

template <class A, int OCB>
DirectRowsFn<A> pick_direct(int64_t in_block, int64_t stride_w) {
  // Input blocks a multiple of kDepth: int8 reads NCHW16c, NCHW8c or NCHW4c (others are staged into one
  // of these by the caller); 4-lane fp32 vectors (NEON) read NCHW4c or plain NCHW; the x86 fp32 ones
  // NCHW16c, NCHW8c or plain NCHW.
  if constexpr (A::kDepth > 1) {
    if (in_block == 16) return pick_direct_stride<A, OCB, 16>(stride_w);
    if (in_block == 8) return pick_direct_stride<A, OCB, 8>(stride_w);
    return pick_direct_stride<A, OCB, 4>(stride_w);
  } else if constexpr (A::kLanes == 4) {
    if (in_block == 4) return pick_direct_stride<A, OCB, 4>(stride_w);
    return pick_direct_stride<A, OCB, 1>(stride_w);
  } else {
    if (in_block == 16) return pick_direct_stride<A, OCB, 16>(stride_w);
    if (in_block == 8) return pick_direct_stride<A, OCB, 8>(stride_w);
    return pick_direct_stride<A, OCB, 1>(stride_w);
  }
}

// Whether output blocks b and b + 1 read the same input channels (so one tile can hold both).
template <class Args>
inline bool same_group(const Args& a, int64_t b, int P) {
  return a.groups == 1 || (b * P) / a.out_channels_per_group == ((b + 1) * P) / a.out_channels_per_group;
}

template <class A>
void direct_conv_tiles(const typename A::Args& a, const X86ConvRange& r) {
  constexpr int P = A::kLanes;
  DirectGeometry g;
  g.in_plane = a.in_h * a.in_w;
  g.weights_per_block = a.in_channels_per_group * a.kernel_h * a.kernel_w * P;
  centre_outputs(a.stride_w, a.pad_left, a.dilation_w, a.kernel_w, a.in_w, a.out_w, &g.centre_begin, &g.centre_end);
  centre_outputs(a.stride_h, a.pad_top, a.dilation_h, a.kernel_h, a.in_h, a.out_h, &g.row_centre_begin,
                 &g.row_centre_end);
  g.dense_rows = A::dense_fits(a);
  const DirectRowsFn<A> pair = pick_direct<A, 2>(a.in_block, a.stride_w);
  const DirectRowsFn<A> single = pick_direct<A, 1>(a.in_block, a.stride_w);
  for (int64_t b = r.oc_block_begin; b < r.oc_block_end;) {
    if (a.oc_blocks_per_tile > 1 && b + 1 < r.oc_block_end && same_group(a, b, P)) {
      pair(a, g, b, r.row_begin, r.row_end);
      b += 2;
    } else {
      single(a, g, b, r.row_begin, r.row_end);
      b += 1;
    }
  }
}

// ---- Pointwise convolution ----

// 1x1, stride 1, no padding: output pixel p reads input pixel p, so the plane is one row and tiles run
// across row ends. Pixels [p0, p0 + N) of output blocks [block, block + OCB).
template <class A, int OCB, int N, int PIN>
NG_TILE void pointwise_tile(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t p0) {
  for (int o = 0; o < OCB; ++o) A::template prefetch_output<N>(a, block + o, p0);
  typename A::T acc[OCB][N];
  start_sums<A, OCB, N>(a, block, 0, 1, 0, 1, acc);
  accumulate<A, OCB, N, PIN, PIN>(a, g, block, p0, PIN, 0, 1, 0, 1, acc);
  for (int o = 0; o < OCB; ++o) A::template store_tile<N>(a, acc[o], block + o, p0);
}

// pointwise_tile for the common case (A::dense_fits): one group, whole input blocks, a blocked
// output layout, and an activation that is a clamp (None, Relu, Clip). Its input-channel loop
// has no per-channel bookkeeping, and its epilogue is store_tile_pixels' clamp path, so the accumulators
// stay in registers from the bias to the store; the general tile spilled them to the stack for its
// epilogue. That fixed cost per tile weighs most with few input channels (measured: bench/REPORT.md,
// "Design decisions and their measurements").
// prefetch_next: also bring the next OCB blocks' weights into L2 (see pointwise_pixels).
//
// The vectors of a half block: V::Half (8 lanes) where HALF, else V itself (unused).
template <class V, bool HALF>
struct HalfVector {
  using type = V;
};
template <class V>
struct HalfVector<V, true> {
  using type = typename V::Half;
};

// HALF (16-lane fp32 vectors writing NCHW8c only): the last of the OCB blocks holds 8 real channels (output
// channels 24, 40, 56, ... = 8 mod 16) and runs 8-lane (256-bit) FMAs on the low halves instead of
// 16-lane ones half on padding. On Zen 4 a 256-bit FMA takes half a 512-bit one's issue slots, so the
// real channels run at the full rate where the 16-lane tile wasted a quarter of a 24-channel layer's
// FMAs (measured on MobileNetV2's 24-channel layers: bench/REPORT.md, "Design decisions and their
// measurements").
template <class A, int OCB, int N, int PIN, bool HALF>
__attribute__((always_inline)) inline void pointwise_tile_dense(const typename A::Args& a, const DirectGeometry& g,
                                                                int64_t block, int64_t p0, bool prefetch_next) {
  static_assert(!HALF || A::kHalfBlocks, "a half block is 8 lanes of a 16-lane fp32 block");
  using V = typename A::Vec;
  using T = typename A::T;
  using In = typename A::In;
  using Wt = typename A::Wt;
  // The half block's vectors (V::Half); A itself when there is none (only its T is named then).
  using HV = typename IfThen<HALF, typename HalfVector<V, HALF>::type, A>::type;
  using H = typename HV::T;
  constexpr int P = A::kLanes, D = A::kDepth;
  constexpr int FULL = HALF ? OCB - 1 : OCB;  // blocks of whole vectors
  constexpr int G = HALF ? 1 : pixel_group<A, PIN, PIN>();
  // Output (and residual) lines asked for ahead only when the tile is short: with more input channels the
  // FMAs give the hardware time to fetch them at the store, and the prefetches cost more than they save;
  // with 16 (MobileNetV2's 16->96 at 112x112) they still pay (measured in models: bench/REPORT.md,
  // "Design decisions and their measurements").
  constexpr int64_t kPrefetchOutputMaxChannels = 16;
  if (a.in_channels <= kPrefetchOutputMaxChannels)
    for (int o = 0; o < FULL; ++o) A::template prefetch_output<N>(a, block + o, p0);
  T acc[FULL > 0 ? FULL : 1][N];
  H half[HALF ? N : 1];
#pragma GCC unroll 8
  for (int o = 0; o < FULL; ++o) {
    const T start = A::start(a, block + o, 0, 1, 0, 1);
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) acc[o][i] = start;
  }
  if constexpr (HALF) {
    const H bias = HV::load(a.bias + (block + FULL) * P);
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) half[i] = bias;
  }
  // Pixels per cache line of one input block (prefetching one address per line).
  constexpr int kLinePixels = 64 / int(sizeof(In)) / PIN > 0 ? 64 / int(sizeof(In)) / PIN : 1;
  const int64_t weights_per_block = g.weights_per_block, block_stride = g.in_plane * PIN;
  const Wt* w = a.weights + block * weights_per_block;
  const In* const x_begin = A::input(a) + p0 * PIN;
  const In* x = x_begin;
  const In* const x_end = x + (a.in_channels / PIN) * block_stride;
  for (; x != x_end; x += block_stride) {
    // The next input block's lines of this tile, a whole plane away, which the hardware does not guess
    // (where the policy asks for it: see kPrefetchInputBlocks).
    if (A::kPrefetchInputBlocks && PIN >= 8 && x + block_stride != x_end) {
#pragma GCC unroll 32
      for (int i = 0; i < N; i += kLinePixels)
        __builtin_prefetch(x + block_stride + i * PIN);
    }
    if constexpr (G > 1) {
      // The pixels in groups, one group load for all the block's channels.
      if (prefetch_next) {
        for (int j = 0; j < PIN; j += D)
#pragma GCC unroll 8
          for (int o = 0; o < OCB; ++o) __builtin_prefetch(w + j * P + (o + OCB) * weights_per_block, 0, 2);
      }
      madd_input_block_grouped<A, OCB, N, PIN, G>(x, w, weights_per_block, P * D, acc);
      w += PIN * P;
      continue;
    }
    for (int j = 0; j < PIN; j += D, w += P * D) {
      typename A::W wv[FULL > 0 ? FULL : 1];
      if (prefetch_next) {
#pragma GCC unroll 8
        for (int o = 0; o < OCB; ++o)
          __builtin_prefetch(w + (o + OCB) * weights_per_block, 0, 2);
      }
#pragma GCC unroll 8
      for (int o = 0; o < FULL; ++o) wv[o] = A::load_weights(w + o * weights_per_block);
      H wh;
      if constexpr (HALF) wh = HV::load(w + FULL * weights_per_block);
#pragma GCC unroll 32
      for (int i = 0; i < N; ++i) {
        const typename A::X xv = A::broadcast(x + i * PIN + j);
#pragma GCC unroll 8
        for (int o = 0; o < FULL; ++o) acc[o][i] = A::madd(xv, wv[o], acc[o][i]);
        if constexpr (HALF) half[i] = HV::fmadd(V::low_half(xv), wh, half[i]);
      }
    }
  }
  if constexpr (rest_vectors_of<A>(0)) {
    static_assert(!HALF, "half blocks are fp32's");
    add_rest_vectors<A, OCB, N, PIN>(a, block, x_begin, block_stride, PIN, 0, 0, 0, 0, 1, 0, 1, acc);
  }
#pragma GCC unroll 8
  for (int o = 0; o < FULL; ++o) A::template store_tile<N>(a, acc[o], block + o, p0);
  if constexpr (HALF) {
    // 8-channel block 2 * (block + FULL) of the NCHW8c output, clamped as in store_tile_pixels (max and
    // min return the value when it is NaN).
    const ClampBounds bounds = clamp_bounds(a);
    const H lo = HV::set1(bounds.lo), hi = HV::set1(bounds.hi);
    const int64_t offset = (2 * (block + FULL) * a.out_h * a.out_w + p0) * 8;
    float* const y = a.y + offset;
    const float* const residual = a.residual ? a.residual + offset : nullptr;
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) {
      H v = half[i];
      if (residual) v = HV::add(v, HV::load(residual + i * 8));
      HV::store(y + i * 8, HV::min(hi, HV::max(lo, v)));
    }
  }
}

// `count` dense tiles side by side from pixel p0, the first asking for the next blocks' weights if
// prefetch_next. One call for a row of tiles rather than one per tile: the call's fixed cost had been a
// measurable part of a tile's time with 16 input channels (measured: bench/REPORT.md, "Design decisions
// and their measurements").
template <class A, int OCB, int N, int PIN, bool HALF = false>
NG_TILE void pointwise_tiles_dense(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t p0,
                                   int64_t count, bool prefetch_next) {
  for (int64_t t = 0; t < count; ++t, p0 += N)
    pointwise_tile_dense<A, OCB, N, PIN, HALF>(a, g, block, p0, prefetch_next && t == 0);
}

// Pixels [p_begin, p_end) of output blocks [block, block + OCB); HALF: the last block is a half block
// (see pointwise_tile_dense).
template <class A, int OCB, int PIN, bool HALF, int... Ns>
void pointwise_pixels(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t p_begin,
                      int64_t p_end, TileWidths<Ns...> menu) {
  const TilePlan plan = plan_tiles<OCB>(p_end - p_begin, menu);
  const bool dense = A::dense_fits(a);
  // On small planes a block pair's pixels take little longer than fetching its weights from L3: the
  // first tile asks for the next pair's weights, so they are in L2 when it starts (it pays on
  // MobileNetV2's 7x7 layers and leaves the other models unchanged; measured: bench/REPORT.md, "Design
  // decisions and their measurements").
  constexpr int64_t kPrefetchNextMaxPlane = 14 * 14;
  const bool prefetch_next = g.in_plane <= kPrefetchNextMaxPlane;
  int64_t p = p_begin;
  int k = 0;
  auto run = [&](auto n_constant) {
    constexpr int N = decltype(n_constant)::value;
    if (plan.count[k] > 0) {
      if constexpr (HALF) {
        pointwise_tiles_dense<A, OCB, N, PIN, true>(a, g, block, p, plan.count[k], false);
      } else if (dense) {
        pointwise_tiles_dense<A, OCB, N, PIN>(a, g, block, p, plan.count[k], prefetch_next && p == p_begin);
      } else {
        for (int64_t t = 0; t < plan.count[k]; ++t) pointwise_tile<A, OCB, N, PIN>(a, g, block, p + t * N);
      }
      p += plan.count[k] * N;
    }
    ++k;
  };
  (run(IntConstant<Ns>{}), ...);
}

template <class A, int OCB, int PIN, bool HALF = false>
void pointwise_blocks(const typename A::Args& a, const DirectGeometry& g, int64_t block, int64_t p_begin,
                      int64_t p_end) {
  using Menu = typename A::template Menu<OCB>;
  pointwise_pixels<A, OCB, PIN, HALF>(a, g, block, p_begin, p_end,
                                      typename IfThen<PIN == 8, typename Menu::Reduced, typename Menu::Full>::type{});
}

template <class A>
using PointwiseFn = void (*)(const typename A::Args&, const DirectGeometry&, int64_t, int64_t, int64_t);

template <class A, int OCB>
PointwiseFn<A> pick_pointwise(int64_t in_block) {
  // Input blocks as in pick_direct.
  if constexpr (A::kDepth > 1) {
    if (in_block == 16) return pointwise_blocks<A, OCB, 16>;
    if (in_block == 8) return pointwise_blocks<A, OCB, 8>;
    return pointwise_blocks<A, OCB, 4>;
  } else if constexpr (A::kLanes == 4) {
    if (in_block == 4) return pointwise_blocks<A, OCB, 4>;
    return pointwise_blocks<A, OCB, 1>;
  } else {
    if (in_block == 16) return pointwise_blocks<A, OCB, 16>;
    if (in_block == 8) return pointwise_blocks<A, OCB, 8>;
    return pointwise_blocks<A, OCB, 1>;
  }
}

// The tiles whose last block is a half block, when this conv has one: 16-lane fp32 vectors, NCHW8c output
// with 8 mod 16 channels, the dense tile's conditions, input blocks of 8 or 16. Null otherwise.
template <class A, int OCB>
PointwiseFn<A> pick_pointwise_half(const typename A::Args& a) {
  if constexpr (A::kHalfBlocks) {
    if (a.out_block != 8 || a.out_channels % 16 != 8 || !A::dense_fits(a)) return nullptr;
    if (a.in_block == 16) return pointwise_blocks<A, OCB, 16, true>;
    if (a.in_block == 8) return pointwise_blocks<A, OCB, 8, true>;
  }
  return nullptr;
}

// Output blocks [block_begin, block_end) over pixels [p_begin, p_end) of the plane g describes: two blocks per
// tile where they share a group and the args allow pairs, else one.
template <class A>
void pointwise_block_range(const typename A::Args& a, const DirectGeometry& g, int64_t block_begin,
                           int64_t block_end, int64_t p_begin, int64_t p_end) {
  constexpr int P = A::kLanes;
  const PointwiseFn<A> pair = pick_pointwise<A, 2>(a.in_block);
  const PointwiseFn<A> single = pick_pointwise<A, 1>(a.in_block);
  // The half block, if any, is the last one; it pairs with the block before it when the range has both.
  const PointwiseFn<A> pair_half = pick_pointwise_half<A, 2>(a), single_half = pick_pointwise_half<A, 1>(a);
  const int64_t half_block = pair_half ? a.out_channels / P : -1;
  for (int64_t b = block_begin; b < block_end;) {
    if (a.oc_blocks_per_tile > 1 && b + 1 < block_end && same_group(a, b, P)) {
      (b + 1 == half_block ? pair_half : pair)(a, g, b, p_begin, p_end);
      b += 2;
    } else {
      (b == half_block ? single_half : single)(a, g, b, p_begin, p_end);
      b += 1;
    }
  }
}

template <class A>
void pointwise_conv_tiles(const typename A::Args& a, const X86ConvRange& r) {
  constexpr int P = A::kLanes;
  DirectGeometry g;
  g.in_plane = a.in_h * a.in_w;
  g.weights_per_block = a.in_channels_per_group * P;
  const int64_t p_begin = r.row_begin * a.out_w, p_end = r.row_end * a.out_w;
  // When the range's weights fit in L1 beside a chunk of input, the pixels go in chunks whose input (all
  // input channels) stays in L1 while every output block of the range reads it: with few input channels
  // the whole plane would otherwise come from L2 once per block pair. Otherwise each block pair sweeps
  // the whole range, its own weights staying in L1.
  constexpr int64_t kChunkInputBytes = 12 * 1024, kWeightBytes = 16 * 1024;
  constexpr int64_t kInBytes = sizeof(typename A::In), kWeightElementBytes = sizeof(typename A::Wt);
  const int64_t range_weight_bytes = (r.oc_block_end - r.oc_block_begin) * g.weights_per_block * kWeightElementBytes;
  const int64_t chunk_pixels = range_weight_bytes > kWeightBytes
                                   ? p_end - p_begin
                                   : imax(96, kChunkInputBytes / (a.in_channels_per_group * kInBytes) / 12 * 12);
  for (int64_t c_begin = p_begin; c_begin < p_end; c_begin += chunk_pixels) {
    const int64_t c_end = imin(p_end, c_begin + chunk_pixels);
    pointwise_block_range<A>(a, g, r.oc_block_begin, r.oc_block_end, c_begin, c_end);
  }
}

// ---- The fp32 policy ----

// Whether the dense tiles (direct_row_tile_dense, pointwise_tile_dense) compute this fp32 conv: one group,
// whole input blocks, a blocked output (the vector's own block, or NCHW8c from 16 lanes), a clamp.
template <class V>
bool dense_tiles_fit(const X86ConvArgs& a) {
  const bool common_layout = a.out_block == V::kLanes || (V::kLanes == 16 && a.out_block == 8);
  return a.groups == 1 && common_layout && a.in_channels % a.in_block == 0 && clamp_activation(a);
}

// fp32 on vector type V (simd_avx512.h, simd_avx2.h, simd_neon.h): one input channel per FMA, the bias
// where sums start (the taps outside the input contribute nothing), the epilogue of conv_epilogue_impl.h.
template <class V>
struct FloatConvArith {
  using Vec = V;
  using Args = X86ConvArgs;
  using In = float;
  using Wt = float;
  using T = typename V::T;
  using X = T;
  using W = T;
  static constexpr int kLanes = V::kLanes;
  static constexpr int kDepth = 1;
  static constexpr bool kHalfBlocks = V::kLanes == 16;
  // 8-lane (AVX2) tiles leave the next input block's lines to the hardware: the dense pointwise tile ran
  // faster without the prefetches on Zen 3 (measured: bench/REPORT.md, "The AVX2 pointwise tile without
  // input prefetches"); 16-lane tiles keep them, not measured without them on the CPUs they run on.
  static constexpr bool kPrefetchInputBlocks = V::kLanes != 8;
  template <int OCB>
  using Menu = DirectMenu<V::kLanes, OCB>;

  __attribute__((always_inline)) static const In* input(const Args& a) { return a.x; }
  __attribute__((always_inline)) static W load_weights(const Wt* p) { return V::load(p); }
  __attribute__((always_inline)) static X broadcast(const In* p) { return V::broadcast(p); }
  __attribute__((always_inline)) static T madd(X x, W w, T acc) { return V::fmadd(x, w, acc); }
  __attribute__((always_inline)) static T start(const Args& a, int64_t block, int64_t, int64_t, int64_t, int64_t) {
    return V::load(a.bias + block * kLanes);
  }
  static bool dense_fits(const Args& a) { return dense_tiles_fit<V>(a); }
  template <int N>
  __attribute__((always_inline)) static void prefetch_output(const Args& a, int64_t block, int64_t pixel) {
    ninegrid::prefetch_output<V, N>(a, block, pixel);
  }
  template <int N>
  __attribute__((always_inline)) static void store_tile(const Args& a, T* acc, int64_t block, int64_t pixel,
                                                        int64_t pixel_stride = 1) {
    store_tile_pixels<V, N>(a, acc, block, pixel, pixel_stride);
  }
  template <int N>
  __attribute__((always_inline)) static void store(const Args& a, T* acc, int64_t block, int64_t pixel,
                                                   int64_t pixel_stride = 1) {
    store_pixels<V, N>(a, acc, block, pixel, pixel_stride);
  }
};

template <class V>
void direct_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  direct_conv_tiles<FloatConvArith<V>>(a, r);
}

template <class V>
void pointwise_conv(const X86ConvArgs& a, const X86ConvRange& r) {
  pointwise_conv_tiles<FloatConvArith<V>>(a, r);
}

#undef NG_TILE

}  // namespace
}  // namespace ninegrid
