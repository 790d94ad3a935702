// ncnn's bilinear and bicubic Interp (ncnn_interp_ref.h) on channel-blocked tensors NCHW[B]c (memory order
// [N][C/B][H][W][B]): the same float operations in the same order as ncnn_resize_taps_ref, each output
// pixel computing its B lanes together. (Nearest is a pure gather: spatial_blocked_ref.h.)
#pragma once

#include <cstdint>

#include "kernels/ref/ncnn_interp_ref.h"

namespace ninegrid {

// x has h * w pixels per block plane (one (batch, channel block) pair), y has oh * ow. Output rows
// [row_begin, row_end) of all block planes, row r being row r % oh of block plane r / oh. taps_per_point
// is 2 (bilinear) or 4 (bicubic); block in [1, kMaxBlockLanes] (blocked_lanes.h).
void ncnn_interp_taps_blocked_ref(const float* x, int64_t h, int64_t w, float* y, int64_t oh, int64_t ow,
                                  const ref::InterpTaps& ytaps, const ref::InterpTaps& xtaps, int taps_per_point,
                                  int64_t block, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
