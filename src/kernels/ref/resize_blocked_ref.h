// Resize of the height and width of a channel-blocked tensor NCHW[B]c (memory order [N][C/B][H][W][B]),
// batch and channels unchanged: the same values as resize_ref (same taps, same order of the sums), each
// output pixel computing its B lanes together.
#pragma once

#include <cstdint>

#include "kernels/ref/resize_ref.h"

namespace ninegrid {

// rows / cols are the taps of the height and width axes (resize_axis_taps), x has in_h * in_w pixels per
// block plane (one (batch, channel block) pair), y has rows.count.size() * cols.count.size(). Computes
// output rows [row_begin, row_end) of all block planes, row r being row r % out_h of block plane r / out_h.
// block in [1, kMaxBlockLanes] (blocked_lanes.h).
void resize_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols, int64_t block,
                        float extrapolation_value, const float* x, float* y, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
