// Per output pixel: one input pixel copied when both axes have a single tap of weight 1 (nearest, or
// linear landing exactly on an input pixel), otherwise sum over rows of w_row * (sum over columns of
// w_col * x), the order resize_ref's recursion uses, so the results are the same floats (but for the
// sign of a copied zero: resize_ref's sum 0 + 1 * -0 gives +0).
#include "kernels/ref/resize_blocked_ref.h"

#include <cstddef>
#include <vector>

#include "kernels/ref/blocked_lanes.h"

namespace ninegrid {

namespace {

bool single_tap(const ResizeTaps& t, int64_t o) { return t.count[o] == 1 && t.weight[o * t.width] == 1.f; }

template <int64_t kLanes>
void resize_rows(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                 const std::vector<unsigned char>& col_single, int64_t block, float extrapolation_value,
                 const float* x, float* y, int64_t row_begin, int64_t row_end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t out_h = static_cast<int64_t>(rows.count.size()), out_w = static_cast<int64_t>(cols.count.size());
  const int64_t in_plane = in_h * in_w * B;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oh = r % out_h;
    const float* xp = x + (r / out_h) * in_plane;
    float* yr = y + r * out_w * B;
    const bool row_single = single_tap(rows, oh);
    const int64_t* row_index = &rows.index[oh * rows.width];
    const float* row_weight = &rows.weight[oh * rows.width];
    for (int64_t ow = 0; ow < out_w; ++ow) {
      float* __restrict out = yr + ow * B;
      if (rows.outside[oh] || cols.outside[ow]) {
        for (int64_t l = 0; l < B; ++l) out[l] = extrapolation_value;
        continue;
      }
      const int64_t* col_index = &cols.index[ow * cols.width];
      const float* col_weight = &cols.weight[ow * cols.width];
      if (row_single && col_single[ow]) {
        const float* __restrict v = xp + (row_index[0] * in_w + col_index[0]) * B;
        for (int64_t l = 0; l < B; ++l) out[l] = v[l];
        continue;
      }
      float acc[kLanes > 0 ? kLanes : kMaxBlockLanes];
      float inner[kLanes > 0 ? kLanes : kMaxBlockLanes];
      for (int64_t l = 0; l < B; ++l) acc[l] = 0.f;
      for (int a = 0; a < rows.count[oh]; ++a) {
        const float* xr = xp + row_index[a] * in_w * B;
        for (int64_t l = 0; l < B; ++l) inner[l] = 0.f;
        for (int b = 0; b < cols.count[ow]; ++b) {
          const float* __restrict v = xr + col_index[b] * B;
          const float w = col_weight[b];
#pragma GCC ivdep
          for (int64_t l = 0; l < B; ++l) inner[l] += w * v[l];
        }
        const float w = row_weight[a];
        for (int64_t l = 0; l < B; ++l) acc[l] += w * inner[l];
      }
      for (int64_t l = 0; l < B; ++l) out[l] = acc[l];
    }
  }
}

}  // namespace

void resize_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols, int64_t block,
                        float extrapolation_value, const float* x, float* y, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  std::vector<unsigned char> col_single(cols.count.size());
  for (size_t o = 0; o < col_single.size(); ++o) col_single[o] = single_tap(cols, static_cast<int64_t>(o));
  NINEGRID_DISPATCH_LANES(block, resize_rows, in_h, in_w, rows, cols, col_single, block, extrapolation_value, x, y,
                          row_begin, row_end)
}

}  // namespace ninegrid
