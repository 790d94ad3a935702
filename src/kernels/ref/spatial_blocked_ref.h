// Data movement over the height and width of a channel-blocked tensor NCHW[B]c (memory order
// [N][C/B][H][W][B]) with batch and channels unchanged: spatial Pad and Crop. A pixel's B lanes are
// contiguous, so every copy moves whole pixels (runs of them where the sources are consecutive).
//
// Work is split in output rows: row r is output row r % out_h of block plane r / out_h, a block plane
// being one (batch, channel block) pair.
#pragma once

#include <cstdint>

namespace ninegrid {

// Output pixel (oh, ow) of each block plane = input pixel (row_source[oh], col_source[ow]), or `fill` in
// every lane when either source is -1 (pad_source_index's tables: constant, edge, reflect and wrap
// padding, negative pads cropping). Sources lie in [0, in_h) and [0, in_w) or are -1.
void gather_pixels_blocked_ref(int64_t in_h, int64_t in_w, const int64_t* row_source, int64_t out_h,
                               const int64_t* col_source, int64_t out_w, int64_t block, float fill, const float* x,
                               float* y, int64_t row_begin, int64_t row_end);
// The same for one-byte elements (uint8 and int8 tensors of quantised models).
void gather_pixels_blocked_ref(int64_t in_h, int64_t in_w, const int64_t* row_source, int64_t out_h,
                               const int64_t* col_source, int64_t out_w, int64_t block, uint8_t fill, const uint8_t* x,
                               uint8_t* y, int64_t row_begin, int64_t row_end);

// y = x[:, :, top : top + out_h, left : left + out_w] (the box lies inside the input).
void crop_pixels_blocked_ref(int64_t in_h, int64_t in_w, int64_t top, int64_t left, int64_t out_h, int64_t out_w,
                             int64_t block, const float* x, float* y, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
