// ninegrid public API: NumPy .npy files, to read inputs and write outputs (format versions 1.0-3.0,
// little-endian, C order; the element types of ninegrid::DataType).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid {

// Throws Error naming the file on a missing, unreadable, truncated or unsupported file (Fortran order,
// big-endian, object arrays), or one larger than max_bytes (0: no limit) — a device such as /dev/zero
// is refused once it passes the limit instead of filling the memory.
Tensor read_npy(const std::string& path, int64_t max_bytes = int64_t(4) << 30);
// The same from memory.
Tensor parse_npy(const void* data, size_t size);
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace ninegrid
