#include "kernels/ref/gather.h"

#include <cstring>
#include <vector>

namespace ninegrid {
namespace ref {

void gather_rows(void* dst, const void* src, int64_t outer, int64_t axis_dim, size_t row_bytes,
                 const int64_t* indices, int64_t n_indices) {
  if (row_bytes == 0) return;
  uint8_t* out = static_cast<uint8_t*>(dst);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* block = in + static_cast<size_t>(o * axis_dim) * row_bytes;
    for (int64_t j = 0; j < n_indices; ++j, out += row_bytes)
      std::memcpy(out, block + static_cast<size_t>(indices[j]) * row_bytes, row_bytes);
  }
}

void gather_elements(void* dst, const void* src, size_t elem_size, int rank, const int64_t* out_shape,
                     const int64_t* src_shape, int axis, const int64_t* indices) {
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= out_shape[d];
  if (total == 0) return;
  std::vector<int64_t> src_stride(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) src_stride[d] = src_stride[d + 1] * src_shape[d + 1];
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  uint8_t* out = static_cast<uint8_t*>(dst);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  int64_t base = 0;  // source offset of the current position ignoring the axis coordinate
  for (int64_t p = 0; p < total; ++p) {
    const int64_t offset = base + indices[p] * src_stride[axis];
    std::memcpy(out + static_cast<size_t>(p) * elem_size, in + static_cast<size_t>(offset) * elem_size, elem_size);
    for (int d = rank - 1; d >= 0; --d) {
      if (d != axis) base += src_stride[d];
      if (++coord[d] < out_shape[d]) break;
      if (d != axis) base -= src_stride[d] * out_shape[d];
      coord[d] = 0;
    }
  }
}

}  // namespace ref
}  // namespace ninegrid
