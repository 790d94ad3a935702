// Nearest-neighbour Resize as a gather of elements of any type (float32 too: ops/resize.cpp runs every
// nearest Resize without tf_crop_and_resize here), so uint8 and int8 tensors resize without a conversion: in
// nearest mode every axis's taps (resize_axis_taps) are one input index of weight 1, and output element
// (o_0, ..., o_last) is input element (index_0[o_0], ..., index_last[o_last]), a copy of its bits (the float
// kernels' weighted sum, 0 + 1 x, gives the same value, except +0 for -0). Coordinates outside the input
// (tf_crop_and_resize's extrapolation) are not handled: the callers keep them off this path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ref/resize_ref.h"

namespace ninegrid {

// Where the output rows of a plain tensor's nearest resize come from: output row r (the index over all axes
// but the last) reads input elements offset(r) + taps.back().index[o], o < out_w().
class NearestRowSource {
 public:
  NearestRowSource(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps);
  // In elements: each leading axis's coordinate of row r through its taps.
  int64_t offset(int64_t r) const;
  int64_t out_w() const { return out_shape_.back(); }

 private:
  const std::vector<ResizeTaps>& taps_;
  std::vector<int64_t> in_strides_, out_shape_;
};

// Plain tensors of any rank >= 1 with `elem_size`-byte elements: output rows (the index over all axes
// but the last) [row_begin, row_end).
void resize_nearest_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps, size_t elem_size,
                        const void* x, void* y, int64_t row_begin, int64_t row_end);

// Channel-blocked NCHW[B]c (batch and channels unchanged) with `pixel_bytes` = B * element size per pixel:
// output rows [row_begin, row_end) of all block planes, row r being row r % out_h of block plane r / out_h,
// as resize_blocked_ref. An output row that repeats the input row of the one before it is a copy of it.
void resize_nearest_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                int64_t pixel_bytes, const void* x, void* y, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
