// Quantised average pooling (ng.QAveragePool, ng.QGlobalAveragePool) on channel-blocked uint8 tensors
// NCHW[B]c (memory order [N][C/B][H][W][B], see reorder_ref.h): the same exact integer window sums and
// the same requantisation as qpool_ref.h's plain kernels, so the results are bit for bit theirs. Every
// output pixel computes its B lanes together.
#pragma once

#include <cstdint>

#include "kernels/quantized_ops.h"
#include "kernels/ref/pool_ref.h"

namespace ninegrid {

// 2-D pooling: p describes the height and width axes in p.in[1..2] etc. (p.in[0] = p.out[0] = 1),
// p.planes = batch * channels. Output rows [row_begin, row_end) of the planes / block * out_h rows, row r
// being output row r % out_h of block plane r / out_h (one (batch, channel block) pair). block in
// [1, kMaxBlockLanes] (blocked_lanes.h).
void qaverage_pool_blocked_ref(const PoolParams& p, bool count_include_pad, const QuantizedAverage& q,
                               int64_t block, const uint8_t* x, uint8_t* y, int64_t row_begin, int64_t row_end);

// The mean of each whole plane: x is [planes / block][plane_size][block], y is [planes] (a [N, C, 1, 1]
// tensor has the same bytes in every layout). Block planes [begin, end).
void qglobal_average_pool_blocked_ref(int64_t plane_size, const QuantizedAverage& q, int64_t block,
                                      const uint8_t* x, uint8_t* y, int64_t begin, int64_t end);

}  // namespace ninegrid
