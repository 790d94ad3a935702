// Reference Pad (ONNX Pad): any rank, any element type (elements are copied as bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ninegrid {

enum class PadMode { Constant, Reflect, Edge, Wrap };

// For one axis of length `in` padded by `pad_begin` and `pad_end` (negative pads crop), the input
// index each of the in + pad_begin + pad_end outputs copies, or -1 where the constant goes. Negative
// pads crop first; the other modes then read the cropped range: Reflect mirrors it without repeating the
// border (as numpy 'reflect', periodically when the pad exceeds the length), Edge repeats the border
// value, Wrap continues periodically. Requires a non-empty cropped range unless the mode is Constant or
// no outside index is needed (the op checks this).
std::vector<int64_t> pad_source_index(int64_t in, int64_t pad_begin, int64_t pad_end, PadMode mode);

// y = pad(x). `in_shape` and `sources` (one pad_source_index table per axis, its size the output
// dimension) describe the operation; `constant` points to one element of `elem_size` bytes.
void pad_ref(const std::vector<int64_t>& in_shape, const std::vector<std::vector<int64_t>>& sources, size_t elem_size,
             const void* x, const void* constant, void* y);

}  // namespace ninegrid
