// For the layout-tolerant operators that keep their input's channel block (pools, Resize, Pad, ng.Crop):
// the layout pass sets ng.in_block = ng.out_block = B > 1 when X and Y are stored NCHW[B]c (memory order
// [N][C/B][H][W][B], see kernels/ref/reorder_ref.h); absent or 1 means plain NCHW.
#pragma once

#include <cstdint>

#include "ops/op.h"

namespace ninegrid {

// The node's block: ng.in_block and ng.out_block must agree (1 when absent) and lie in [1, kMaxBlockLanes];
// otherwise op.error().
int64_t read_spatial_block(const Op& op);

// For the element-wise operators that run the same in every layout (ng.QAdd, ng.QConcat, QuantizeLinear,
// DequantizeLinear): the block the layout pass recorded for Y (ng.out_block, 1 when absent), in
// [1, kMaxBlockLanes], so that the op can refuse a blocked layout its arithmetic does not fit.
int64_t read_output_block(const Op& op);

// For block > 1: X must be a 4-D float tensor whose channels the block divides; otherwise op.error()
// naming what the blocked kernels need.
void expect_blockable(const Op& op, int64_t block, const TensorDesc& x);
// The same for an op whose blocked kernels also take int8 data: X may be float32, uint8 or int8.
void expect_blockable_float_or_int8(const Op& op, int64_t block, const TensorDesc& x);

}  // namespace ninegrid
