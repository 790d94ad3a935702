// Element type conversion (ONNX Cast) between every numeric type, bool, float16 and bfloat16.
#pragma once

#include <cstdint>

#include "ninegrid/tensor.h"

namespace ninegrid {
namespace ref {

// Whether cast_elements() converts from and to this type (every numeric type and bool; not strings).
bool cast_supported(DataType t);

// Converts `n` elements of type `from` at `src` into type `to` at `dst` (which must not overlap src
// unless from == to). Rules, chosen to match NumPy and ONNX Runtime on ordinary values and to stay
// defined on every input:
//  - floating -> floating and integer -> floating round to nearest, ties to even, with a single rounding
//    (double -> float16 does not go through float); out-of-range values become +-inf.
//  - floating -> integer truncates toward zero; NaN gives 0; values beyond int64 saturate, and the int64
//    result then wraps to narrower integer types (as C++ integer conversion does: 300.0 -> uint8 is 44).
//  - integer -> integer wraps (two's complement).
//  - anything -> bool is "!= 0" (NaN is true); bool -> anything is 0 or 1.
// Both types must satisfy cast_supported().
void cast_elements(const void* src, DataType from, void* dst, DataType to, int64_t n);

}  // namespace ref
}  // namespace ninegrid
