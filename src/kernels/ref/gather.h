// Index-driven copies for Gather and GatherElements. Indices arrive already checked and made
// non-negative by the operator, so these loops never see an out-of-range index.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ninegrid {
namespace ref {

// Gather along one axis. The source is `outer` blocks of `axis_dim` rows of `row_bytes` bytes; the
// output is `outer` blocks of `n_indices` rows: out[o][j] = src[o][indices[j]].
void gather_rows(void* dst, const void* src, int64_t outer, int64_t axis_dim, size_t row_bytes,
                 const int64_t* indices, int64_t n_indices);

// GatherElements: out[p] = src[p with its `axis` coordinate replaced by indices[p]], for every position p
// of the output (whose shape is the indices' shape). Every out_shape[d] <= src_shape[d] for d != axis.
void gather_elements(void* dst, const void* src, size_t elem_size, int rank, const int64_t* out_shape,
                     const int64_t* src_shape, int axis, const int64_t* indices);

}  // namespace ref
}  // namespace ninegrid
