// Index arithmetic shared by the sliding-window reference kernels (convolution, pooling).
#pragma once

#include <algorithm>
#include <cstdint>

namespace ninegrid {

// Floor division for a positive divisor, correct for negative numerators (C++ `/` truncates toward 0).
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The outputs o in [0, out_len) whose input coordinate o * stride + offset lies in [0, in_len). They form
// one contiguous range, returned as [*begin, *end) (empty when *begin >= *end). stride must be positive.
inline void valid_output_range(int64_t offset, int64_t stride, int64_t in_len, int64_t out_len, int64_t* begin,
                               int64_t* end) {
  // o * stride + offset >= 0        <=>  o >= ceil(-offset / stride)
  // o * stride + offset <= in_len-1 <=>  o <= floor((in_len - 1 - offset) / stride)
  int64_t lo = -floor_div(offset, stride);  // == ceil(-offset / stride)
  int64_t hi = floor_div(in_len - 1 - offset, stride) + 1;
  *begin = std::max<int64_t>(0, std::min(lo, out_len));
  *end = std::max(*begin, std::min(hi, out_len));
}

}  // namespace ninegrid
