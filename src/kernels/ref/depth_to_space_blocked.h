// DepthToSpace in DCR order on channel-blocked tensors (NCHW[block]c in and out, the same block), for a
// ConvTranspose made pointwise (graph/passes/conv_transpose_as_pointwise.cpp) whose taps come out of the 1x1
// conv already blocked:
//   y[n][c][h*bs + i][w*bs + j] = x[n][(i*bs + j) * C + c][h][w]
// With the block dividing C, the C channels of each tap are whole blocks, so every output pixel's vector is
// one input pixel's vector, copied.
#pragma once

#include <cstdint>

namespace ninegrid {

// Output rows [row_begin, row_end) of all of y's block planes (batch * out_channels / block of them), row r
// being row r % (in_h * bs) of block plane r / (in_h * bs). `out_channels` (C) is a multiple of `block`.
void depth_to_space_dcr_blocked(const float* x, float* y, int64_t out_channels, int64_t in_h, int64_t in_w,
                                int64_t bs, int64_t block, int64_t row_begin, int64_t row_end);

// The same with a plain NCHW output, x plain (x_block 1) or channel-blocked in blocks of x_block dividing
// its channels (where no block divides the output channels: a ConvTranspose head's one-channel map). Output
// rows [row_begin, row_end) of all batch * out_channels planes, row r being row r % (in_h * bs) of plane
// r / (in_h * bs); each row interleaves bs input rows.
void depth_to_space_dcr_plain(const float* x, int64_t x_block, float* y, int64_t out_channels, int64_t in_h,
                              int64_t in_w, int64_t bs, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
