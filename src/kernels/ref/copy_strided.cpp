#include "kernels/ref/copy_strided.h"

#include <cstring>
#include <vector>

namespace ninegrid {
namespace ref {

namespace {

struct Dim {
  int64_t size;
  int64_t stride;  // in elements
};

// Drops size-1 dimensions and merges neighbours that are contiguous in the source. Returns false when
// the view is empty (some dimension is 0).
bool simplify(int rank, const int64_t* shape, const int64_t* strides, std::vector<Dim>& dims) {
  dims.clear();
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 0) return false;
    if (shape[d] == 1) continue;
    if (!dims.empty() && dims.back().stride == strides[d] * shape[d]) {
      dims.back().size *= shape[d];
      dims.back().stride = strides[d];
    } else {
      dims.push_back({shape[d], strides[d]});
    }
  }
  return true;
}

// The innermost dimension, element by element, for a fixed element type.
template <class T>
void copy_line(T* dst, const T* src, int64_t n, int64_t stride) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

void copy_line_bytes(uint8_t* dst, const uint8_t* src, int64_t n, int64_t stride, size_t elem) {
  switch (elem) {
    case 1: copy_line(dst, src, n, stride); return;
    // Typed copies need aligned pointers; unaligned ones (wrapped user memory) take the memcpy path.
    case 2:
      if (reinterpret_cast<uintptr_t>(dst) % 2 == 0 && reinterpret_cast<uintptr_t>(src) % 2 == 0) {
        copy_line(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), n, stride);
        return;
      }
      break;
    case 4:
      if (reinterpret_cast<uintptr_t>(dst) % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 4 == 0) {
        copy_line(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), n, stride);
        return;
      }
      break;
    case 8:
      if (reinterpret_cast<uintptr_t>(dst) % 8 == 0 && reinterpret_cast<uintptr_t>(src) % 8 == 0) {
        copy_line(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), n, stride);
        return;
      }
      break;
    default: break;
  }
  const int64_t step = stride * static_cast<int64_t>(elem);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem, src + i * step, elem);
}

}  // namespace

void copy_strided(void* dst, const void* src, size_t elem_size, int rank, const int64_t* shape,
                  const int64_t* src_strides) {
  std::vector<Dim> dims;
  if (!simplify(rank, shape, src_strides, dims)) return;
  uint8_t* out = static_cast<uint8_t*>(dst);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  if (dims.empty()) {  // a single element
    std::memcpy(out, in, elem_size);
    return;
  }
  const Dim inner = dims.back();
  dims.pop_back();
  const size_t line_bytes = static_cast<size_t>(inner.size) * elem_size;
  const int outer_rank = static_cast<int>(dims.size());
  std::vector<int64_t> counter(dims.size(), 0);
  const int64_t elem = static_cast<int64_t>(elem_size);
  int64_t offset = 0;  // source element offset of the current line (kept as an integer: no wild pointers)
  for (;;) {
    if (inner.stride == 1)
      std::memcpy(out, in + offset * elem, line_bytes);
    else
      copy_line_bytes(out, in + offset * elem, inner.size, inner.stride, elem_size);
    out += line_bytes;
    // Odometer increment over the outer dimensions, innermost first.
    int d = outer_rank - 1;
    for (; d >= 0; --d) {
      offset += dims[d].stride;
      if (++counter[d] < dims[d].size) break;
      offset -= dims[d].stride * dims[d].size;
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, int64_t rows, size_t row_bytes) {
  if (row_bytes == 0) return;
  uint8_t* out = static_cast<uint8_t*>(dst);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(out + r * dst_pitch, in + r * src_pitch, row_bytes);
}

}  // namespace ref
}  // namespace ninegrid
