// Pooling on channel-blocked tensors NCHW[B]c (memory order [N][C/B][H][W][B], see reorder_ref.h): the
// same results as the plain kernels of pool_ref.h, bit for bit (taps visited in the same order), so the
// layout pass can keep a pooled tensor blocked. Every output pixel computes its B lanes together: the
// inner loop runs over the lanes of one pixel, contiguous in memory, which the compiler vectorises.
//
// Work is split in output rows: row r is output row r % out_h of block plane r / out_h, where a block
// plane is one (batch, channel block) pair of in_h * in_w * B (or out_h * out_w * B) floats.
#pragma once

#include <cstdint>

#include "kernels/ref/pool_ref.h"

namespace ninegrid {

// block in [1, kMaxBlockLanes] (blocked_lanes.h).
// 2-D pooling: p describes the height and width axes in p.in[1..2] etc. (p.in[0] = p.out[0] = 1),
// p.planes = batch * channels. Rows [row_begin, row_end) of the planes / block * out_h output rows.
// Max: padding ignored, a window without input gives lowest(), NaN handled as max_pool_ref does.
void max_pool_blocked_ref(const PoolParams& p, int64_t block, const float* x, float* y, int64_t row_begin,
                          int64_t row_end);
// The same on int8 data (uint8 activations of quantised models, int8).
void max_pool_blocked_ref(const PoolParams& p, int64_t block, const uint8_t* x, uint8_t* y, int64_t row_begin,
                          int64_t row_end);
void max_pool_blocked_ref(const PoolParams& p, int64_t block, const int8_t* x, int8_t* y, int64_t row_begin,
                          int64_t row_end);
// Mean with average_pool_ref's divisor rules (count_include_pad, ceil_mode windows past the padding).
void average_pool_blocked_ref(const PoolParams& p, bool count_include_pad, int64_t block, const float* x, float* y,
                              int64_t row_begin, int64_t row_end);

// Global pools: x is [planes / block][plane_size][block], y is [planes] (a [N, C, 1, 1] tensor has the
// same bytes in every layout). Block planes [begin, end). Same arithmetic as the plain global kernels
// (the mean accumulates in double).
void global_average_pool_blocked_ref(int64_t plane_size, int64_t block, const float* x, float* y, int64_t begin,
                                     int64_t end);
void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const float* x, float* y, int64_t begin,
                                 int64_t end);
void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const uint8_t* x, uint8_t* y, int64_t begin,
                                 int64_t end);
void global_max_pool_blocked_ref(int64_t plane_size, int64_t block, const int8_t* x, int8_t* y, int64_t begin,
                                 int64_t end);

}  // namespace ninegrid
