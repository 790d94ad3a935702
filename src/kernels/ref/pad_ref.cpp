// Pad through per-axis index tables: output coordinate o along axis a copies input coordinate
// sources[a][o], or the constant when that is -1. The output is walked row by row (the last axis), with
// the row's input offset built from the outer coordinates.
#include "kernels/ref/pad_ref.h"

#include <algorithm>
#include <cstring>

namespace ninegrid {

namespace {
int64_t positive_mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }
}  // namespace

std::vector<int64_t> pad_source_index(int64_t in, int64_t pad_begin, int64_t pad_end, PadMode mode) {
  const int64_t out = in + pad_begin + pad_end;
  const int64_t lo = std::max<int64_t>(0, -pad_begin);      // the range left after cropping
  const int64_t hi = in - std::max<int64_t>(0, -pad_end);
  const int64_t len = hi - lo;
  std::vector<int64_t> src(static_cast<size_t>(std::max<int64_t>(0, out)));
  for (int64_t o = 0; o < out; ++o) {
    const int64_t i = o - pad_begin;  // coordinate in the uncropped input
    int64_t s;
    if (i >= lo && i < hi) {
      s = i;
    } else if (mode == PadMode::Constant || len <= 0) {
      s = -1;
    } else if (mode == PadMode::Edge) {
      s = std::min(std::max(i, lo), hi - 1);
    } else if (mode == PadMode::Wrap) {
      s = lo + positive_mod(i - lo, len);
    } else {  // Reflect: period 2 * (len - 1), mirrored in its second half
      if (len == 1) {
        s = lo;
      } else {
        const int64_t period = 2 * (len - 1);
        int64_t j = positive_mod(i - lo, period);
        if (j >= len) j = period - j;
        s = lo + j;
      }
    }
    src[static_cast<size_t>(o)] = s;
  }
  return src;
}

void pad_ref(const std::vector<int64_t>& in_shape, const std::vector<std::vector<int64_t>>& sources, size_t elem_size,
             const void* x, const void* constant, void* y) {
  const size_t rank = in_shape.size();
  const char* xb = static_cast<const char*>(x);
  char* yb = static_cast<char*>(y);
  if (rank == 0) {  // a scalar has nothing to pad
    std::memcpy(yb, xb, elem_size);
    return;
  }
  std::vector<int64_t> out_shape(rank), in_strides(rank, 1);
  for (size_t a = 0; a < rank; ++a) out_shape[a] = static_cast<int64_t>(sources[a].size());
  for (size_t a = rank - 1; a-- > 0;) in_strides[a] = in_strides[a + 1] * in_shape[a + 1];
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < rank; ++a) rows *= out_shape[a];
  const int64_t row_len = out_shape[rank - 1];
  const std::vector<int64_t>& last = sources[rank - 1];
  if (row_len == 0) return;

  std::vector<int64_t> coord(rank, 0);  // outer output coordinates of the current row
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    bool constant_row = false;
    for (size_t a = 0; a + 1 < rank; ++a) {
      const int64_t s = sources[a][static_cast<size_t>(coord[a])];
      if (s < 0) constant_row = true;
      else base += s * in_strides[a];
    }
    char* yrow = yb + static_cast<size_t>(r * row_len) * elem_size;
    for (int64_t o = 0; o < row_len; ++o) {
      const int64_t s = constant_row ? -1 : last[static_cast<size_t>(o)];
      const void* from = s < 0 ? constant : xb + static_cast<size_t>(base + s) * elem_size;
      std::memcpy(yrow + static_cast<size_t>(o) * elem_size, from, elem_size);
    }
    for (size_t a = rank - 1; a-- > 0;) {  // next row: odometer over the outer axes
      if (++coord[a] < out_shape[a]) break;
      coord[a] = 0;
    }
  }
}

}  // namespace ninegrid
