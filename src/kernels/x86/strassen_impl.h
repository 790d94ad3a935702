// The Strassen GEMM and combine kernels (kernels/x86/strassen_x86.h) for a vector type V of L lanes.
// Include only from ISA files (after the simd header); internal linkage throughout.
#pragma once

#include <cstdint>

#include "kernels/x86/conv_epilogue_impl.h"
#include "kernels/x86/strassen_x86.h"

namespace ninegrid {
namespace {

// Writes one product vector to a target (see StrassenTarget).
template <class V>
inline void strassen_store(const StrassenGemmArgs& a, const StrassenTarget& t, int64_t vector, int64_t pixel,
                           typename V::T product) {
  constexpr int L = V::kLanes;
  const int64_t offset = vector * t.block_stride + pixel * L;
  float* p = t.base + offset;
  typename V::T v = t.sign < 0 ? V::sub(V::zero(), product) : product;
  if (t.accumulate) v = V::add(V::load(p), v);
  if (t.final) {
    const int64_t c = t.first_channel + vector * L;
    v = V::add(v, V::load(a.bias + c));
    if (t.residual) v = V::add(v, V::load(t.residual + offset));
    v = activate<V>(a.epilogue, v, c / L);
  }
  V::store(p, v);
}

// Pixels [pixel0, pixel0 + rows) x NB output vectors from `vector`; w: their packed weights [k][NB * L].
template <class V, int MR, int NB, int B>
inline void strassen_tile(const StrassenGemmArgs& a, const float* w, int64_t vector, int64_t pixel0, int64_t rows) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  T acc[MR][NB];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) acc[r][j] = V::zero();
  const float* x = a.x + pixel0 * B;
  for (int64_t kb = 0; kb < a.k_count / B; ++kb) {
    const float* xk = x + kb * a.x_block_stride;
    const float* wk = w + kb * B * (NB * L);
    for (int i = 0; i < B; ++i) {
      T wv[NB];
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) wv[j] = V::load(wk + i * (NB * L) + j * L);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const T b = V::broadcast(xk + r * B + i);
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) acc[r][j] = V::fmadd(b, wv[j], acc[r][j]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      for (int d = 0; d < 2; ++d)
        if (a.target[d].base) strassen_store<V>(a, a.target[d], vector + j, pixel0 + r, acc[r][j]);
  }
}

// strassen_tile with `vectors` (1 .. NB) output vectors.
template <class V, int MR, int NB, int B>
inline void strassen_tile_vectors(int64_t vectors, const StrassenGemmArgs& a, const float* w, int64_t vector,
                                  int64_t pixel0, int64_t rows) {
  if (vectors < NB) {
    if constexpr (NB > 1) strassen_tile_vectors<V, MR, NB - 1, B>(vectors, a, w, vector, pixel0, rows);
  } else {
    strassen_tile<V, MR, NB, B>(a, w, vector, pixel0, rows);
  }
}

// Full register tiles, then single-pixel tiles for the last few pixels (so no load passes the view).
template <class V, int MR, int NB, int B>
void strassen_items(const StrassenGemmArgs& a, int64_t item_begin, int64_t item_end) {
  constexpr int L = V::kLanes;
  const int64_t tiles = (a.pixels + MR - 1) / MR;
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t group = item / tiles, tile = item % tiles;
    const int64_t vector = group * NB;
    const int64_t vectors = imin(NB, a.oc_vectors - vector);
    const float* w = a.w + vector * L * a.k_count;  // earlier groups are full: NB * L lanes each
    const int64_t pixel0 = tile * MR, rows = imin(MR, a.pixels - pixel0);
    if (rows == MR) {
      strassen_tile_vectors<V, MR, NB, B>(vectors, a, w, vector, pixel0, MR);
    } else {
      for (int64_t r = 0; r < rows; ++r) strassen_tile_vectors<V, 1, NB, B>(vectors, a, w, vector, pixel0 + r, 1);
    }
  }
}

template <class V, int MR, int NB>
void strassen_gemm_any(const StrassenGemmArgs& a, int64_t item_begin, int64_t item_end) {
  if (a.x_block == 16)
    strassen_items<V, MR, NB, 16>(a, item_begin, item_end);
  else
    strassen_items<V, MR, NB, 8>(a, item_begin, item_end);
}

template <class V>
void strassen_combine_any(float* dst, int64_t dst_stride, const float* a, int64_t a_stride, const float* b,
                          int64_t b_stride, float sign, int64_t block, int64_t pixels, int64_t block_begin,
                          int64_t block_end) {
  constexpr int L = V::kLanes;
  const int64_t count = pixels * block;  // floats per block row, a multiple of 8
  for (int64_t k = block_begin; k < block_end; ++k) {
    float* d = dst + k * dst_stride;
    const float* x = a + k * a_stride;
    const float* y = b + k * b_stride;
    int64_t i = 0;
    if (sign < 0) {
      for (; i + L <= count; i += L) V::store(d + i, V::sub(V::load(x + i), V::load(y + i)));
      for (; i < count; ++i) d[i] = x[i] - y[i];
    } else {
      for (; i + L <= count; i += L) V::store(d + i, V::add(V::load(x + i), V::load(y + i)));
      for (; i < count; ++i) d[i] = x[i] + y[i];
    }
  }
}

}  // namespace
}  // namespace ninegrid
