// How the ncnn-specific ops (ng.*) see a graph tensor: an ncnn blob of `dims` dimensions (w), (h,w),
// (c,h,w) or (c,d,h,w) behind a leading batch dimension, so rank = dims + 1. ncnn gives a missing
// dimension the size 1, and layers refer to dimensions by these names.
#pragma once

#include <cstdint>

#include "ninegrid/tensor.h"

namespace ninegrid {

struct NcnnBlobDims {
  int dims = 0;
  int64_t w = 1, h = 1, d = 1, c = 1;
  int64_t batch = 1;
};

// Valid for shapes of rank 2..5; returns dims = 0 otherwise.
inline NcnnBlobDims ncnn_blob_dims(const Shape& s) {
  NcnnBlobDims b;
  if (s.size() < 2 || s.size() > 5) return b;
  b.dims = static_cast<int>(s.size()) - 1;
  b.batch = s[0];
  b.w = s.back();
  if (b.dims >= 2) b.h = s[s.size() - 2];
  if (b.dims >= 3) b.c = s[1];
  if (b.dims == 4) b.d = s[2];
  return b;
}

// The graph axis holding ncnn dimension `field` ('c', 'd', 'h' or 'w') of a blob with `dims`
// dimensions, or -1 if such a blob has no such dimension.
inline int ncnn_axis(int dims, char field) {
  switch (field) {
    case 'w': return dims;
    case 'h': return dims >= 2 ? dims - 1 : -1;
    case 'd': return dims == 4 ? 2 : -1;
    case 'c': return dims >= 3 ? 1 : -1;
    default: return -1;
  }
}

}  // namespace ninegrid
