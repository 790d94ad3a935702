// Per output pixel and source row r: h_r = sum over t of x[row r, column tap t] * a[t] (first product,
// then additions, as ncnn), then out = h_0 * b[0] + h_1 * b[1] + ...; every step over the pixel's lanes.
#include "kernels/ref/ncnn_interp_blocked_ref.h"

#include <cstddef>

#include "kernels/ref/blocked_lanes.h"

namespace ninegrid {

namespace {

int64_t clamp_index(int64_t i, int64_t size) { return i < 0 ? 0 : (i > size - 1 ? size - 1 : i); }

template <int64_t kLanes>
void interp_rows(const float* x, int64_t h, int64_t w, float* y, int64_t oh, int64_t ow, const ref::InterpTaps& ytaps,
                 const ref::InterpTaps& xtaps, int taps, int64_t block, int64_t row_begin, int64_t row_end) {
  const int64_t B = kLanes > 0 ? kLanes : block;
  const int64_t first = taps == 4 ? -1 : 0;  // bicubic taps start one before the index
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oy = r % oh;
    const float* xp = x + (r / oh) * h * w * B;
    float* yr = y + r * ow * B;
    const float* b = &ytaps.weight[static_cast<size_t>(oy * taps)];
    for (int64_t ox = 0; ox < ow; ++ox) {
      const float* a = &xtaps.weight[static_cast<size_t>(ox * taps)];
      float acc[kLanes > 0 ? kLanes : kMaxBlockLanes];
      float row[kLanes > 0 ? kLanes : kMaxBlockLanes];
      for (int s = 0; s < taps; ++s) {
        const float* src = xp + clamp_index(ytaps.index[oy] + first + s, h) * w * B;
        const float* __restrict v0 = src + clamp_index(xtaps.index[ox] + first, w) * B;
        for (int64_t l = 0; l < B; ++l) row[l] = v0[l] * a[0];
        for (int t = 1; t < taps; ++t) {
          const float* __restrict v = src + clamp_index(xtaps.index[ox] + first + t, w) * B;
#pragma GCC ivdep
          for (int64_t l = 0; l < B; ++l) row[l] += v[l] * a[t];
        }
        if (s == 0)
          for (int64_t l = 0; l < B; ++l) acc[l] = row[l] * b[0];
        else
          for (int64_t l = 0; l < B; ++l) acc[l] += row[l] * b[s];
      }
      float* __restrict out = yr + ox * B;
      for (int64_t l = 0; l < B; ++l) out[l] = acc[l];
    }
  }
}

}  // namespace

void ncnn_interp_taps_blocked_ref(const float* x, int64_t h, int64_t w, float* y, int64_t oh, int64_t ow,
                                  const ref::InterpTaps& ytaps, const ref::InterpTaps& xtaps, int taps_per_point,
                                  int64_t block, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  NINEGRID_DISPATCH_LANES(block, interp_rows, x, h, w, y, oh, ow, ytaps, xtaps, taps_per_point, block, row_begin,
                          row_end)
}

}  // namespace ninegrid
