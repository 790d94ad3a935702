// A nearest-neighbour Resize followed by an Add of a tensor of the resized shape, in one pass: an FPN's
// top-down merge, lateral + upsample(top), where the Resize alone writes the upsampled map and the Add reads
// it back (ops/resize.cpp with ng.add_operand, graph/passes/fuse_upsample_add.cpp). float32 only; each output
// element is the gathered input element plus the addend's element at the same position, rounded once as the
// Add rounded it. Coordinates outside the input (tf_crop_and_resize) are not handled, as in resize_nearest_ref.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/ref/resize_ref.h"

namespace ninegrid {

// Plain tensors of any rank >= 1: output rows (the index over all axes but the last) [row_begin, row_end).
void resize_nearest_add_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                            const float* x, const float* addend, float* y, int64_t row_begin, int64_t row_end);

// Channel-blocked NCHW[block]c, batch and channels unchanged (x, addend and y blocked alike): output rows
// [row_begin, row_end) of all block planes, row r being row r % out_h of block plane r / out_h, as
// resize_nearest_blocked_ref.
void resize_nearest_add_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                    int64_t block, const float* x, const float* addend, float* y, int64_t row_begin,
                                    int64_t row_end);

// With the addend gated, as a squeeze-and-excitation residual makes an FPN's lateral (x + x * gate, one gate
// value per (batch, channel): fuse_upsample_add taking a fused Mul in): the added value is x * g + x, each
// step rounded as the Mul and the Add rounded it, then added to the gathered value. `gate` holds the gate of
// (n, c) at n * gate_n_stride + c * gate_c_stride (a stride of 0 broadcasts that axis).
struct ResizeAddGate {
  const float* gate = nullptr;
  int64_t n_stride = 0, c_stride = 0;
  int64_t channels = 1;  // C of the NCHW output
};

// Plain NCHW (rank 4) output rows [row_begin, row_end), as resize_nearest_add_ref with `x_gated` the addend.
void resize_nearest_gated_add_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps,
                                  const float* x, const float* x_gated, const ResizeAddGate& gate, float* y,
                                  int64_t row_begin, int64_t row_end);

// Channel-blocked, as resize_nearest_add_blocked_ref with `x_gated` the addend; the block divides C.
void resize_nearest_gated_add_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                          int64_t block, const float* x, const float* x_gated,
                                          const ResizeAddGate& gate, float* y, int64_t row_begin, int64_t row_end);

}  // namespace ninegrid
