// The Winograd F(m x m, 3 x 3) kernels (kernels/x86/winograd_x86.h) for a vector type V of L = V::kLanes
// channels: every vector holds one pixel (or one transform position) of L consecutive channels, so the
// transforms are the scalar formulas applied lane-wise and need no shuffles.
//
// The 1-D transforms are the matrices of kernels/ref/winograd_ref.h factored by hand (common
// subexpressions of the +-p point pairs); 2-D = columns first, then rows.
//
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/channel_vectors_impl.h"
#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/winograd_x86.h"

namespace ninegrid {
namespace {

// ---- 1-D transforms (s: stride between the elements, in vectors) ----

// r = B^T d: F(2, 3) (points 0, +-1) maps 4 values to 4, F(4, 3) (0, +-1, +-2) 6 to 6, F(6, 3)
// (0, +-1, +-2, +-1/2) 8 to 8.
template <class V, int M>
inline void winograd_input_1d(const typename V::T* d, int s, typename V::T* r, int rs) {
  using T = typename V::T;
  if constexpr (M == 2) {
    r[0] = V::sub(d[2 * s], d[0]);
    r[rs] = V::add(d[s], d[2 * s]);
    r[2 * rs] = V::sub(d[2 * s], d[s]);
    r[3 * rs] = V::sub(d[3 * s], d[s]);
  } else if constexpr (M == 4) {
    const T d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
    const T four = V::set1(4.f), minus4 = V::set1(-4.f), minus5 = V::set1(-5.f), two = V::set1(2.f),
            minus2 = V::set1(-2.f);
    const T d4_minus_d2 = V::sub(d4, d2), d3_minus_d1 = V::sub(d3, d1);
    r[0] = V::fmadd(four, d0, V::fmadd(minus5, d2, d4));
    r[rs] = V::fmadd(minus4, V::add(d1, d2), V::add(d3, d4));
    r[2 * rs] = V::fmadd(four, V::sub(d1, d2), V::sub(d4, d3));
    r[3 * rs] = V::fmadd(two, d3_minus_d1, d4_minus_d2);
    r[4 * rs] = V::fmadd(minus2, d3_minus_d1, d4_minus_d2);
    r[5 * rs] = V::fmadd(four, d1, V::fmadd(minus5, d3, d5));
  } else {
    static_assert(M == 6, "F(2, 3), F(4, 3) or F(6, 3)");
    const T d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s], d6 = d[6 * s],
            d7 = d[7 * s];
    const T c525 = V::set1(5.25f), cm425 = V::set1(-4.25f), c025 = V::set1(0.25f), cm125 = V::set1(-1.25f),
            c05 = V::set1(0.5f), cm25 = V::set1(-2.5f), c2 = V::set1(2.f), c4 = V::set1(4.f), cm5 = V::set1(-5.f);
    r[0] = V::fmadd(c525, V::sub(d2, d4), V::sub(d6, d0));
    const T e1 = V::fmadd(cm425, d4, V::add(d2, d6)), o1 = V::fmadd(cm425, d3, V::add(d1, d5));
    r[rs] = V::add(e1, o1);
    r[2 * rs] = V::sub(e1, o1);
    const T e3 = V::fmadd(c025, d2, V::fmadd(cm125, d4, d6));
    const T o3 = V::fmadd(c05, d1, V::fmadd(cm25, d3, V::mul(c2, d5)));
    r[3 * rs] = V::add(e3, o3);
    r[4 * rs] = V::sub(e3, o3);
    const T e5 = V::fmadd(c4, d2, V::fmadd(cm5, d4, d6));
    const T o5 = V::fmadd(c2, d1, V::fmadd(cm25, d3, V::mul(c05, d5)));
    r[5 * rs] = V::add(e5, o5);
    r[6 * rs] = V::sub(e5, o5);
    r[7 * rs] = V::fmadd(c525, V::sub(d3, d5), V::sub(d7, d1));
  }
}

// r = A^T mv: F(2, 3) maps 4 values to 2, F(4, 3) 6 to 4, F(6, 3) 8 to 6. With a, b, c, ... the sums and
// differences of the +-p pairs, output i is a + p^i c + ... for even i and b + p^i d + ... for odd i.
template <class V, int M>
inline void winograd_output_1d(const typename V::T* mv, int s, typename V::T* r, int rs) {
  using T = typename V::T;
  const T a = V::add(mv[s], mv[2 * s]), b = V::sub(mv[s], mv[2 * s]);
  if constexpr (M == 2) {
    r[0] = V::add(mv[0], a);
    r[rs] = V::add(b, mv[3 * s]);
  } else if constexpr (M == 4) {
    const T c = V::add(mv[3 * s], mv[4 * s]), d = V::sub(mv[3 * s], mv[4 * s]);
    r[0] = V::add(V::add(mv[0], a), c);
    r[rs] = V::fmadd(V::set1(2.f), d, b);
    r[2 * rs] = V::fmadd(V::set1(4.f), c, a);
    r[3 * rs] = V::add(V::fmadd(V::set1(8.f), d, b), mv[5 * s]);
  } else {
    static_assert(M == 6, "F(2, 3), F(4, 3) or F(6, 3)");
    const T c = V::add(mv[3 * s], mv[4 * s]), d = V::sub(mv[3 * s], mv[4 * s]);
    const T e = V::add(mv[5 * s], mv[6 * s]), f = V::sub(mv[5 * s], mv[6 * s]);
    r[0] = V::add(V::add(mv[0], a), V::add(c, e));
    r[rs] = V::fmadd(V::set1(2.f), d, V::fmadd(V::set1(0.5f), f, b));
    r[2 * rs] = V::fmadd(V::set1(4.f), c, V::fmadd(V::set1(0.25f), e, a));
    r[3 * rs] = V::fmadd(V::set1(8.f), d, V::fmadd(V::set1(0.125f), f, b));
    r[4 * rs] = V::fmadd(V::set1(16.f), c, V::fmadd(V::set1(0.0625f), e, a));
    r[5 * rs] = V::add(V::fmadd(V::set1(32.f), d, V::fmadd(V::set1(0.03125f), f, b)), mv[7 * s]);
  }
}

// ---- Phase 1: input transform ----

// Row i of the patch of tile (ih0, iw0), channels [c0, c0 + L): zeros outside the input unless INSIDE.
template <class V, int N, int BIN, bool INSIDE>
inline void load_patch_row(const WinogradX86Args& a, int64_t plane, int64_t c0, int64_t ih, int64_t iw0,
                           typename V::T* row) {
  if (INSIDE) {
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) row[j] = load_channels<V, BIN>(a.x, a.in_channels, plane, c0, ih * a.in_w + iw0 + j);
    return;
  }
  const bool row_inside = ih >= 0 && ih < a.in_h;
  for (int j = 0; j < N; ++j) {
    const int64_t iw = iw0 + j;
    row[j] = row_inside && iw >= 0 && iw < a.in_w ? load_channels<V, BIN>(a.x, a.in_channels, plane, c0, ih * a.in_w + iw)
                                                  : V::zero();
  }
}

// V = B^T d B for one tile and the channels [c0, c0 + L): each patch row is transformed as it is loaded
// (d B), then each column of that (B^T (d B)) is transformed and stored, so few values are live at once.
template <class V, int M, int BIN, bool INSIDE>
inline void input_tile_vector(const WinogradX86Args& a, int64_t plane, int64_t c0, int64_t ih0, int64_t iw0,
                              float* vt) {
  using T = typename V::T;
  constexpr int N = M + 2;
  T rows[N][N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    T row[N];
    load_patch_row<V, N, BIN, INSIDE>(a, plane, c0, ih0 + i, iw0, row);
    winograd_input_1d<V, M>(row, 1, rows[i], 1);
  }
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    T column[N];
    winograd_input_1d<V, M>(&rows[0][j], N, column, 1);
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) V::store(vt + (i * N + j) * a.v_pos_stride + c0, column[i]);
  }
}

template <class V, int M, int BIN>
void winograd_input_tiles(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  constexpr int L = V::kLanes;
  constexpr int N = M + 2;
  const int64_t plane = a.in_h * a.in_w;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t tile = first + t;
    const int64_t ih0 = (tile / a.tiles_w) * M - a.pad_top, iw0 = (tile % a.tiles_w) * M - a.pad_left;
    const bool inside = ih0 >= 0 && iw0 >= 0 && ih0 + N <= a.in_h && iw0 + N <= a.in_w;
    float* vt = a.v + t * a.ic_padded;
    if (inside) {
      for (int64_t c0 = 0; c0 < a.ic_padded; c0 += L) input_tile_vector<V, M, BIN, true>(a, plane, c0, ih0, iw0, vt);
    } else {
      for (int64_t c0 = 0; c0 < a.ic_padded; c0 += L) input_tile_vector<V, M, BIN, false>(a, plane, c0, ih0, iw0, vt);
    }
  }
}

// ---- Phase 2: the alpha^2 GEMMs ----

// out[r][j * L ...] = sum_k v[r * v_stride + k] * u[k * u_stride + j * L ...] for R rows (tiles) and NB
// vectors of output channels, all R * NB sums in registers. KMAJOR: v is transposed, v[k * v_stride + r],
// so the R broadcasts of one step share one pointer at constant offsets (with R row pointers the tall
// tile ran out of general registers and reloaded them from vector registers every step).
template <class V, int R, int NB, bool KMAJOR>
inline void multiply_tile(const float* v, int64_t v_stride, const float* u, int64_t u_stride, int64_t k_count,
                          float* out, int64_t out_stride) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  T acc[R][NB];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = V::zero();
  // The weights stream through once per chunk (from L3 or memory on small planes, where each weight
  // serves few tiles): fetch them kPrefetchBytes ahead into L1, every cache line of a row of u, and
  // kFarPrefetchBytes ahead into L2. One tall tile consumes a line every 16 FMAs, which needs more lines in
  // flight from memory than the L1 prefetch alone keeps (it pays with cold caches, changes nothing with warm
  // ones; measured: bench/REPORT.md, "Design decisions and their measurements").
  // Prefetches never fault, so running past the end of u is harmless.
  constexpr int64_t kPrefetchBytes = 2048, kFarPrefetchBytes = 8192;
  const int64_t prefetch_offset = kPrefetchBytes / static_cast<int64_t>(sizeof(float));
  const int64_t far_offset = kFarPrefetchBytes / static_cast<int64_t>(sizeof(float));
  for (int64_t k = 0; k < k_count; ++k) {
    const char* ahead = reinterpret_cast<const char*>(u + k * u_stride + prefetch_offset);
    const char* far = reinterpret_cast<const char*>(u + k * u_stride + far_offset);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      if (j * L * sizeof(float) % 64 == 0) {
        __builtin_prefetch(ahead + j * L * sizeof(float));
        __builtin_prefetch(far + j * L * sizeof(float), 0, 2);
      }
    T w[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) w[j] = V::load(u + k * u_stride + j * L);
    const float* vk = KMAJOR ? v + k * v_stride : v + k;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const T b = V::broadcast(KMAJOR ? vk + r : vk + r * v_stride);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) acc[r][j] = V::fmadd(b, w[j], acc[r][j]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) V::store(out + r * out_stride + j * L, acc[r][j]);
}

// multiply_tile with `rows` (1 .. R) rows and `vectors` (1 .. NB) vectors.
template <class V, int R, int NB, bool KMAJOR = false>
inline void multiply_block(int64_t rows, int64_t vectors, const float* v, int64_t v_stride, const float* u,
                           int64_t u_stride, int64_t k_count, float* out, int64_t out_stride) {
  if (vectors < NB) {
    if constexpr (NB > 1)
      multiply_block<V, R, NB - 1, KMAJOR>(rows, vectors, v, v_stride, u, u_stride, k_count, out, out_stride);
  } else if (rows < R) {
    if constexpr (R > 1)
      multiply_block<V, R - 1, NB, KMAJOR>(rows, vectors, v, v_stride, u, u_stride, k_count, out, out_stride);
  } else {
    multiply_tile<V, R, NB, KMAJOR>(v, v_stride, u, u_stride, k_count, out, out_stride);
  }
}

// The tall tile's v of one position transposed to k-major (packed[k * tiles + t]) on the stack, up to
// this many input channels (64 KiB for 16 tiles); wider layers use the row-major v as it is.
constexpr int64_t kMaxPackedChannels = 1024;

// Phase 2 with two register-tile shapes. With u packed one vector per group (u_group_vectors == 1, the
// chunks have at most RT tiles) it runs "tall": all the chunk's tiles x one vector of output channels, so
// each weight vector is loaded once for every tile (small planes, where streaming the transformed
// weights is the cost). Otherwise "wide": RW tiles x NB vectors, fewer broadcasts per FMA, the rows
// split as evenly as possible (16 tiles as 8 + 8).
template <class V, int RW, int NB, int RT>
void winograd_multiply_items(const WinogradX86Args& a, int64_t tiles, int64_t item_begin, int64_t item_end) {
  constexpr int L = V::kLanes;
  const bool tall = a.u_group_vectors == 1 && tiles <= RT;
  const int64_t group_lanes = a.u_group_vectors * L;
  const int64_t groups = (a.oc_padded + group_lanes - 1) / group_lanes;
  const int64_t row_blocks = (tiles + RW - 1) / RW;
  const int64_t rows = tall ? tiles : row_blocks > 0 ? (tiles + row_blocks - 1) / row_blocks : 0;
  alignas(64) float packed[kMaxPackedChannels * RT];
  int64_t packed_pos = -1;
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t pos = item / groups, group = item % groups;
    const int64_t vectors = imin(a.u_group_vectors, (a.oc_padded - group * group_lanes) / L);
    const float* u = a.u + pos * a.ic_padded * a.oc_padded + group * a.ic_padded * group_lanes;
    const int64_t u_stride = vectors * L;  // the group's lanes per input channel
    const float* v = a.v + pos * a.v_pos_stride;
    float* out = a.mm + pos * a.mm_pos_stride + group * group_lanes;
    if (tall && a.ic_padded <= kMaxPackedChannels) {
      if (pos != packed_pos) {
        for (int64_t t = 0; t < tiles; ++t)
          for (int64_t k = 0; k < a.ic_padded; ++k) packed[k * tiles + t] = v[t * a.ic_padded + k];
        packed_pos = pos;
      }
      multiply_block<V, RT, 1, true>(tiles, 1, packed, tiles, u, u_stride, a.ic_padded, out, a.oc_padded);
      continue;
    }
    if (tall) {
      multiply_block<V, RT, 1>(tiles, 1, v, a.ic_padded, u, u_stride, a.ic_padded, out, a.oc_padded);
      continue;
    }
    for (int64_t t0 = 0; t0 < tiles; t0 += rows) {
      multiply_block<V, RW, NB>(imin(rows, tiles - t0), vectors, v + t0 * a.ic_padded, a.ic_padded, u, u_stride,
                                a.ic_padded, out + t0 * a.oc_padded, a.oc_padded);
    }
  }
}

// ---- Phase 3: output transform and epilogue ----

// Bias, residual and activation on one output vector, then its single store.
template <class V, int BOUT>
inline void store_output(const WinogradX86Args& a, int64_t plane, int64_t c0, int64_t pixel, typename V::T value) {
  if (a.residual) value = V::add(value, load_channels<V, BOUT>(a.residual, a.out_channels, plane, c0, pixel));
  store_channels<V, BOUT>(a.y, a.out_channels, plane, c0, pixel, activate<V>(a.epilogue, value, c0 / V::kLanes));
}

// Y = A^T M A for one tile and the output channels [c0, c0 + L), stored with the epilogue: each row of M
// is transformed as it is loaded (M A), then each column of that; only the rows x cols pixels inside
// the output are stored (FULL: all M x M).
template <class V, int M, int BOUT, bool FULL>
inline void output_tile_vector(const WinogradX86Args& a, int64_t plane, int64_t c0, const float* mt, int64_t oh0,
                               int64_t ow0, int64_t rows, int64_t cols) {
  using T = typename V::T;
  constexpr int N = M + 2;
  T half[N][M];  // M A
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    T row[N];
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) row[j] = V::load(mt + (i * N + j) * a.mm_pos_stride + c0);
    winograd_output_1d<V, M>(row, 1, half[i], 1);
  }
  const T bias = V::load(a.bias + c0);
#pragma GCC unroll 8
  for (int j = 0; j < M; ++j) {
    if (!FULL && j >= cols) break;
    T column[M];
    winograd_output_1d<V, M>(&half[0][j], M, column, 1);
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      if (!FULL && i >= rows) break;
      store_output<V, BOUT>(a, plane, c0, (oh0 + i) * a.out_w + ow0 + j, V::add(column[i], bias));
    }
  }
}

template <class V, int M, int BOUT>
void winograd_output_tiles(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  constexpr int L = V::kLanes;
  const int64_t plane = a.out_h * a.out_w;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t tile = first + t;
    const int64_t oh0 = (tile / a.tiles_w) * M, ow0 = (tile % a.tiles_w) * M;
    const int64_t rows = imin(M, a.out_h - oh0), cols = imin(M, a.out_w - ow0);
    const float* mt = a.mm + t * a.oc_padded;
    if (rows == M && cols == M) {
      for (int64_t c0 = 0; c0 < a.oc_padded; c0 += L)
        output_tile_vector<V, M, BOUT, true>(a, plane, c0, mt, oh0, ow0, rows, cols);
    } else {
      for (int64_t c0 = 0; c0 < a.oc_padded; c0 += L)
        output_tile_vector<V, M, BOUT, false>(a, plane, c0, mt, oh0, ow0, rows, cols);
    }
  }
}

// ---- Dispatch on the tile size and the blocks ----

template <class V, int M>
void winograd_input_m(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  switch (a.in_block) {
    case 16: winograd_input_tiles<V, M, 16>(a, first, t_begin, t_end); break;
    case 8: winograd_input_tiles<V, M, 8>(a, first, t_begin, t_end); break;
    case 4:  // NCHW4c: NEON's block only
      if constexpr (V::kLanes == 4) {
        winograd_input_tiles<V, M, 4>(a, first, t_begin, t_end);
        break;
      }
      [[fallthrough]];
    default: winograd_input_tiles<V, M, 1>(a, first, t_begin, t_end); break;
  }
}

template <class V>
void winograd_input(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  switch (a.m) {
    case 2: winograd_input_m<V, 2>(a, first, t_begin, t_end); break;
    case 6: winograd_input_m<V, 6>(a, first, t_begin, t_end); break;
    default: winograd_input_m<V, 4>(a, first, t_begin, t_end); break;
  }
}

template <class V, int M>
void winograd_output_m(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  switch (a.out_block) {
    case 16: winograd_output_tiles<V, M, 16>(a, first, t_begin, t_end); break;
    case 8: winograd_output_tiles<V, M, 8>(a, first, t_begin, t_end); break;
    case 4:  // NCHW4c: NEON's block only
      if constexpr (V::kLanes == 4) {
        winograd_output_tiles<V, M, 4>(a, first, t_begin, t_end);
        break;
      }
      [[fallthrough]];
    default: winograd_output_tiles<V, M, 1>(a, first, t_begin, t_end); break;
  }
}

template <class V>
void winograd_output(const WinogradX86Args& a, int64_t first, int64_t t_begin, int64_t t_end) {
  switch (a.m) {
    case 2: winograd_output_m<V, 2>(a, first, t_begin, t_end); break;
    case 6: winograd_output_m<V, 6>(a, first, t_begin, t_end); break;
    default: winograd_output_m<V, 4>(a, first, t_begin, t_end); break;
  }
}

}  // namespace
}  // namespace ninegrid
