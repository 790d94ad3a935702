#include "kernels/ref/ncnn_crop_ref.h"

#include <cstring>

namespace ninegrid {
namespace ref {

void crop_box_ref(const void* src, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& offsets,
                  const std::vector<int64_t>& out_shape, size_t elem_size, void* dst) {
  const size_t rank = in_shape.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  for (int64_t d : out_shape)
    if (d == 0) return;
  // Element strides of the input.
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * in_shape[i];
  const size_t row_bytes = static_cast<size_t>(out_shape[rank - 1]) * elem_size;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  // Walk every output row (all indices but the last) like an odometer, copying one contiguous run each.
  std::vector<int64_t> idx(rank, 0);
  for (;;) {
    int64_t off = offsets[rank - 1];
    for (size_t i = 0; i + 1 < rank; ++i) off += (offsets[i] + idx[i]) * stride[i];
    std::memcpy(d, s + static_cast<size_t>(off) * elem_size, row_bytes);
    d += row_bytes;
    size_t i = rank - 1;
    while (i > 0) {
      --i;
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
      if (i == 0) return;
    }
    if (rank == 1) return;
  }
}

}  // namespace ref
}  // namespace ninegrid
