#include "kernels/ref/resize_nearest_ref.h"

#include <cstring>

namespace ninegrid {

namespace {

// One output row of a blocked tensor: kBytes (0: `pixel_bytes` at run time) per pixel, so the common
// pixel sizes copy with a fixed-size memcpy (a vector move or two).
template <int64_t kBytes>
void gather_pixels(const uint8_t* src_row, const int64_t* col_index, int64_t out_w, int64_t pixel_bytes, uint8_t* dst) {
  const int64_t P = kBytes > 0 ? kBytes : pixel_bytes;
  for (int64_t ow = 0; ow < out_w; ++ow)
    std::memcpy(dst + ow * P, src_row + col_index[ow] * P, static_cast<size_t>(P));
}

}  // namespace

NearestRowSource::NearestRowSource(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps)
    : taps_(taps), in_strides_(in_shape.size(), 1), out_shape_(in_shape.size()) {
  const size_t rank = in_shape.size();
  for (size_t a = rank; a-- > 1;) in_strides_[a - 1] = in_strides_[a] * in_shape[a];
  for (size_t a = 0; a < rank; ++a) out_shape_[a] = static_cast<int64_t>(taps[a].count.size());
}

int64_t NearestRowSource::offset(int64_t r) const {
  int64_t rem = r, offset = 0;
  for (size_t a = out_shape_.size() - 1; a-- > 0;) {
    offset += taps_[a].index[rem % out_shape_[a]] * in_strides_[a];
    rem /= out_shape_[a];
  }
  return offset;
}

void resize_nearest_ref(const std::vector<int64_t>& in_shape, const std::vector<ResizeTaps>& taps, size_t elem_size,
                        const void* x, void* y, int64_t row_begin, int64_t row_end) {
  const NearestRowSource rows(in_shape, taps);
  const int64_t out_w = rows.out_w();
  const int64_t* col_index = taps.back().index.data();
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  uint8_t* yb = static_cast<uint8_t*>(y);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* src = xb + rows.offset(r) * static_cast<int64_t>(elem_size);
    uint8_t* dst = yb + r * out_w * static_cast<int64_t>(elem_size);
    if (elem_size == 1) {
      for (int64_t o = 0; o < out_w; ++o) dst[o] = src[col_index[o]];
    } else {
      for (int64_t o = 0; o < out_w; ++o)
        std::memcpy(dst + o * static_cast<int64_t>(elem_size), src + col_index[o] * static_cast<int64_t>(elem_size),
                    elem_size);
    }
  }
}

void resize_nearest_blocked_ref(int64_t in_h, int64_t in_w, const ResizeTaps& rows, const ResizeTaps& cols,
                                int64_t pixel_bytes, const void* x, void* y, int64_t row_begin, int64_t row_end) {
  const int64_t out_h = static_cast<int64_t>(rows.count.size()), out_w = static_cast<int64_t>(cols.count.size());
  const int64_t row_bytes = out_w * pixel_bytes;
  const uint8_t* xb = static_cast<const uint8_t*>(x);
  uint8_t* yb = static_cast<uint8_t*>(y);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t oh = r % out_h, plane = r / out_h;
    uint8_t* dst = yb + r * row_bytes;
    if (r > row_begin && oh > 0 && rows.index[oh - 1] == rows.index[oh]) {
      std::memcpy(dst, dst - row_bytes, static_cast<size_t>(row_bytes));
      continue;
    }
    const uint8_t* src = xb + (plane * in_h + rows.index[oh]) * in_w * pixel_bytes;
    switch (pixel_bytes) {
      case 64: gather_pixels<64>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
      case 32: gather_pixels<32>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
      case 16: gather_pixels<16>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
      case 8: gather_pixels<8>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
      case 4: gather_pixels<4>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
      default: gather_pixels<0>(src, cols.index.data(), out_w, pixel_bytes, dst); break;
    }
  }
}

}  // namespace ninegrid
