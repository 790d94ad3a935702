#include "kernels/ref/qlookup_ref.h"

#include <algorithm>
#include <cstring>

#include "kernels/ref/quantize_linear_ref.h"

namespace ninegrid {

QuantizedTable requantize_table(float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point,
                                int32_t qmin, int32_t qmax) {
  uint8_t q[256];
  for (int i = 0; i < 256; ++i) q[i] = static_cast<uint8_t>(i);
  const uint8_t xz = static_cast<uint8_t>(x_zero_point), yz = static_cast<uint8_t>(y_zero_point);
  float real[256];
  dequantize_linear_ref(q, DataType::UInt8, &x_scale, &xz, real, QuantAxis{}, 0, 256);
  uint8_t out[256];
  quantize_linear_ref(real, &y_scale, &yz, DataType::UInt8, out, QuantAxis{}, 0, 256);
  QuantizedTable t;
  for (int i = 0; i < 256; ++i) t[i] = static_cast<uint8_t>(std::min(std::max<int32_t>(out[i], qmin), qmax));
  return t;
}

bool table_is_clamp(const QuantizedTable& table, int32_t qmin, int32_t qmax) {
  for (int32_t i = 0; i < 256; ++i)
    if (table[i] != std::min(std::max(i, qmin), qmax)) return false;
  return true;
}

void qlookup_ref(const QuantizedTable& table, const uint8_t* x, uint8_t* y, int64_t n) {
  // Eight bytes per load and store, looked up one by one (byte k of the word is x[i + k] and goes to
  // y[i + k] in either byte order); the table copied, so that no store to y can alias it. About twice
  // the speed of the byte loop.
  const QuantizedTable t = table;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v, r = 0;
    std::memcpy(&v, x + i, 8);
    for (int k = 0; k < 8; ++k) r |= static_cast<uint64_t>(t[(v >> (8 * k)) & 255]) << (8 * k);
    std::memcpy(y + i, &r, 8);
  }
  for (; i < n; ++i) y[i] = t[x[i]];
}

void qclamp_ref(uint8_t qmin, uint8_t qmax, const uint8_t* x, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i], qmin), qmax);
}

}  // namespace ninegrid
