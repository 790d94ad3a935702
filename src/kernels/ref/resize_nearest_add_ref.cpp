#include "kernels/ref/resize_nearest_add_ref.h"

#include "kernels/ref/resize_nearest_ref.h"

namespace ninegrid {

namespace {

// One output row of a blocked tensor, kLanes floats per pixel (0: `block` at run time), so the common
// blocks add a fixed number of lanes per pixel (a vector or two). The output never overlaps the inputs
// (the session gives every value its own bytes), which __restrict lets the compiler rely on.
// With kGated the added value is a * g + a, g the lanes' gates: two roundings (the build never contracts a
// product and a sum into one fused multiply-add: CMakeLists.txt).
template <int64_t kLanes, bool kGated = false>
void gather_add_pixels(const float* __restrict src_row, const int64_t* col_index, int64_t out_w, int64_t block,
                       const float* __restrict addend, float* __restrict dst, const float* __restrict g = nullptr) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    const float* s = src_row + col_index[ow] * B;
    const float* a = addend + ow * B;
    for (int64_t l = 0; l < B; ++l) {
      if constexpr (kGated) dst[ow * B + l] = s[l] + (a[l] * g[l] + a[l]);
      else dst[ow * B + l] = s[l] + a[l];
    }
  }
}

}  // namespace

void resize_nearest_add_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                            const float* x, const float* addend, float* y, int64_t row_begin, int64_t row_end) {
  const NearestRowSource rows(in_shape, taps);
  const int64_t out_w = rows.out_w();
  const int64_t* col_index = taps.back().index.data();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* __restrict src = x + rows.offset(r);
    const float* __restrict add = addend + r * out_w;
    float* __restrict dst = y + r * out_w;
    for (int64_t o = 0; o < out_w; ++o) dst[o] = src[col_index[o]] + add[o];
  }
}

void resize_nearest_add_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                    int64_t block, const float* x, const float* addend, float* y, int64_t row_begin,
                                    int64_t row_end) {
  const int64_t out_h = static_cast<int64_t>(rows.count.size()), out_w = static_cast<int64_t>(cols.count.size());
  const int64_t row_floats = out_w * block;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oh = r % out_h, plane = r / out_h;
    const float* src = x + (plane * in_h + rows.index[oh]) * in_w * block;
    const float* add = addend + r * row_floats;
    float* dst = y + r * row_floats;
    switch (block) {
      case 16: gather_add_pixels<16>(src, cols.index.data(), out_w, block, add, dst); break;
      case 8: gather_add_pixels<8>(src, cols.index.data(), out_w, block, add, dst); break;
      case 4: gather_add_pixels<4>(src, cols.index.data(), out_w, block, add, dst); break;
      default: gather_add_pixels<0>(src, cols.index.data(), out_w, block, add, dst); break;
    }
  }
}

void resize_nearest_gated_add_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                                  const float* x, const float* x_gated, const ResizeAddGate& gate, float* y,
                                  int64_t row_begin, int64_t row_end) {
  const NearestRowSource rows(in_shape, taps);
  const int64_t out_w = rows.out_w(), out_h = static_cast<int64_t>(taps[2].count.size());
  const int64_t* col_index = taps.back().index.data();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t plane = r / out_h, n = plane / gate.channels, c = plane % gate.channels;
    const float g = gate.gate[n * gate.n_stride + c * gate.c_stride];
    const float* __restrict src = x + rows.offset(r);
    const float* __restrict a = x_gated + r * out_w;
    float* __restrict dst = y + r * out_w;
    for (int64_t o = 0; o < out_w; ++o) dst[o] = src[col_index[o]] + (a[o] * g + a[o]);
  }
}

void resize_nearest_gated_add_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                          int64_t block, const float* x, const float* x_gated,
                                          const ResizeAddGate& gate, float* y, int64_t row_begin, int64_t row_end) {
  const int64_t out_h = static_cast<int64_t>(rows.count.size()), out_w = static_cast<int64_t>(cols.count.size());
  const int64_t row_floats = out_w * block, blocks = gate.channels / block;
  std::vector<float> g(static_cast<size_t>(block));
  int64_t g_plane = -1;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oh = r % out_h, plane = r / out_h;
    if (plane != g_plane) {  // the block's gates, one per lane
      const int64_t n = plane / blocks, c0 = plane % blocks * block;
      for (int64_t l = 0; l < block; ++l) g[l] = gate.gate[n * gate.n_stride + (c0 + l) * gate.c_stride];
      g_plane = plane;
    }
    const float* src = x + (plane * in_h + rows.index[oh]) * in_w * block;
    const float* add = x_gated + r * row_floats;
    float* dst = y + r * row_floats;
    switch (block) {
      case 16: gather_add_pixels<16, true>(src, cols.index.data(), out_w, block, add, dst, g.data()); break;
      case 8: gather_add_pixels<8, true>(src, cols.index.data(), out_w, block, add, dst, g.data()); break;
      case 4: gather_add_pixels<4, true>(src, cols.index.data(), out_w, block, add, dst, g.data()); break;
      default: gather_add_pixels<0, true>(src, cols.index.data(), out_w, block, add, dst, g.data()); break;
    }
  }
}

}  // namespace ninegrid
