// ncnn's Interp resampling of one plane, reproduced exactly (the reference for ng.Interp):
//   nearest:  in = min(int(out * s), size - 1), s = size/out_size when the layer fixes the output size,
//             else 1/scale (float arithmetic, truncation);
//   bilinear: ncnn's linear_coeffs (half-pixel centres from the size ratio, or align_corner), clamped
//             at the borders, rows interpolated first, then columns;
//   bicubic:  Keys' cubic with A = -0.75, taps outside the plane replaced by the edge (ncnn folds
//             their weights onto the border taps).
#pragma once

#include <cstdint>
#include <vector>

namespace ninegrid {
namespace ref {

// Per output coordinate: the first source tap and the tap weights (2 for bilinear, 4 for bicubic).
struct InterpTaps {
  std::vector<int64_t> index;
  std::vector<float> weight;
};

InterpTaps ncnn_linear_taps(int64_t in_size, int64_t out_size, bool align_corner);
InterpTaps ncnn_cubic_taps(int64_t in_size, int64_t out_size, bool align_corner);
// For nearest: the source index of each output coordinate. `step` is ncnn's hs/ws.
std::vector<int64_t> ncnn_nearest_index(int64_t in_size, int64_t out_size, float step);

void ncnn_resize_nearest_ref(const float* in, int64_t h, int64_t w, float* out, int64_t oh, int64_t ow,
                             const std::vector<int64_t>& ys, const std::vector<int64_t>& xs);
// taps_per_point is 2 (bilinear) or 4 (bicubic); a tap's source index is index + t (bilinear) or
// index - 1 + t (bicubic), clamped into the plane.
void ncnn_resize_taps_ref(const float* in, int64_t h, int64_t w, float* out, int64_t oh, int64_t ow,
                          const InterpTaps& ytaps, const InterpTaps& xtaps, int taps_per_point);

}  // namespace ref
}  // namespace ninegrid
