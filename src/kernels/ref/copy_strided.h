// Type-generic data movement: the loops behind Transpose, Slice, Expand, Tile, DepthToSpace, Concat and
// Split. Elements are moved by size (1, 2, 4, 8 bytes or any other size), never interpreted, so one kernel
// serves every data type.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ninegrid {
namespace ref {

// Writes the rank-`rank` view of `src` with dimensions `shape` and element strides `src_strides` (which
// may be zero, to repeat elements, or negative, to walk backwards) into `dst`, densely in row-major order.
// `src` points at the view's first element. Adjacent dimensions that are contiguous in the source are
// merged first, so a view that is really a block of rows is copied with one memcpy per row.
void copy_strided(void* dst, const void* src, size_t elem_size, int rank, const int64_t* shape,
                  const int64_t* src_strides);

// Copies `rows` rows of `row_bytes` bytes from `src` (rows `src_pitch` bytes apart) to `dst` (rows
// `dst_pitch` bytes apart): Concat writes each input into its column band of the output this way, and
// Split reads each output's band of the input.
void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, int64_t rows, size_t row_bytes);

}  // namespace ref
}  // namespace ninegrid
