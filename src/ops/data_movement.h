// Helpers shared by the type-generic data-movement and shape operators (Concat, Slice, Transpose, ...):
// node-named validation of shapes and types, and a strided copy split across the session's threads.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace ninegrid {

// Row-major element strides of a dense tensor of this shape.
std::vector<int64_t> dense_strides(const Shape& shape);

// shape_numel(), with a failure (negative dimension, overflow) reported as an error of `op`'s node.
int64_t checked_numel(const Op& op, const Shape& shape, const char* what);

// a * b for non-negative dimensions, or an error of `op`'s node on overflow.
int64_t checked_mul(const Op& op, int64_t a, int64_t b, const char* what);

// Throws an "unsupported" error of `op`'s node unless elements of `dtype` have a fixed size (so strings
// and undefined types are rejected before any byte is moved).
void expect_sized(const Op& op, const TensorDesc& t, const char* what);

// Normalises each axis of `axes` against `rank` and rejects duplicates, with errors of `op`'s node.
std::vector<int> normalize_axes(const Op& op, const std::vector<int64_t>& axes, int rank);

// Reads an int32/int64 index tensor, makes each index non-negative and checks it against `dim` (negative
// indices count from the end). A bad index is an error of `op`'s node, never an out-of-bounds read.
std::vector<int64_t> checked_indices(const Op& op, const Tensor& indices, int64_t dim);

// ref::copy_strided, with the outermost dimension split across `pool` when the copy is large enough to
// be worth waking the workers.
void parallel_copy_strided(ThreadPool* pool, void* dst, const void* src, size_t elem_size, const Shape& shape,
                           const std::vector<int64_t>& src_strides);

}  // namespace ninegrid
