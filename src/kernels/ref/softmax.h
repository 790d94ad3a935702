// Reference Softmax, LogSoftmax and Hardmax over one axis of a tensor viewed as (outer, axis, inner):
// element (o, a, i) is at x[(o * axis + a) * inner + i]. Softmax subtracts the maximum along the axis
// before exponentiating, so large inputs neither overflow nor lose precision.
#pragma once

#include <cstdint>

namespace ninegrid {
namespace ref {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// Computes outer slices [outer_begin, outer_end). Hardmax writes 1 at the first maximum along the axis
// and 0 elsewhere.
void softmax_f32(SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner, int64_t outer_begin,
                 int64_t outer_end);
// Columns [col_begin, col_end) of the inner dimension of outer slice `outer` (the same results; lets
// threads share a slice when there are fewer slices than threads).
void softmax_f32_columns(SoftmaxKind kind, const float* x, float* y, int64_t axis, int64_t inner, int64_t outer,
                         int64_t col_begin, int64_t col_end);

}  // namespace ref
}  // namespace ninegrid
