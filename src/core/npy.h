// NumPy .npy files: read and write one tensor (format versions 1.0-3.0, little-endian, C order).
#pragma once

#include <string>

#include "ninegrid/tensor.h"

namespace ninegrid {

// Throws Error on a missing, truncated or unsupported file (Fortran order, big-endian, object arrays).
Tensor read_npy(const std::string& path);
Tensor parse_npy(const void* data, size_t size);
void write_npy(const std::string& path, const Tensor& tensor);

}  // namespace ninegrid
