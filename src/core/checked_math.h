// Overflow-checked integer arithmetic for shapes and sizes. Every product or sum built from a model's
// numbers (dimensions, pads, scales, repeats) goes through these, so an absurd value becomes an Error
// instead of a wrapped size that an allocation or a loop then trusts.
#pragma once

#include <cstdint>
#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid {

[[noreturn]] void throw_size_overflow(const char* what);

// a * b and a + b, or Error("<what> overflows ...").
inline int64_t checked_mul(int64_t a, int64_t b, const char* what = "a size") {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_size_overflow(what);
  return r;
}
inline int64_t checked_add(int64_t a, int64_t b, const char* what = "a size") {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_size_overflow(what);
  return r;
}

// a * b for non-negative counts of work (MACs, taps), INT64_MAX when it has no int64 representation: such
// a count only has to compare as too large.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// Bytes a tensor of this type and shape takes (shape_numel times the element size), or Error when the
// count has no int64 representation.
int64_t tensor_bytes(DataType dtype, const Shape& shape);

// "3.2 GiB", "512 KiB", "100 bytes": sizes in error messages.
std::string bytes_str(int64_t bytes);

}  // namespace ninegrid
