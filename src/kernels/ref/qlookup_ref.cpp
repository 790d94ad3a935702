#include "kernels/ref/qlookup_ref.h"

#include <algorithm>
#include <cmath>
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

uint8_t affine_u8_ref(const AffineU8& m, uint8_t x) {
  const float v = std::fma(static_cast<float>(x), m.a, m.b);
  const int32_t i = static_cast<int32_t>(std::nearbyint(v));
  const int32_t u = std::min(std::max(i, 0), 255);  // the saturating packs to int16, then to uint8
  return static_cast<uint8_t>(std::min<int32_t>(std::max<int32_t>(u, m.qmin), m.qmax));
}

bool fit_affine_u8(const QuantizedTable& table, float x_scale, int32_t x_zero_point, float y_scale,
                   int32_t y_zero_point, int32_t qmin, int32_t qmax, AffineU8* m) {
  if (!(x_scale > 0.f) || !(y_scale > 0.f) || !std::isfinite(x_scale) || !std::isfinite(y_scale)) return false;
  const double slope = static_cast<double>(x_scale) / y_scale;
  const double offset = y_zero_point - x_zero_point * slope;
  if (!(std::fabs(slope) * 255 + std::fabs(offset) < (1 << 20))) return false;
  AffineU8 c;
  c.qmin = static_cast<uint8_t>(std::min(std::max(qmin, 0), 255));
  c.qmax = static_cast<uint8_t>(std::min(std::max(qmax, 0), 255));
  // The nearest floats to the exact slope and offset first, then their neighbours (one and two units in the
  // last place either way): a near tie that the float steps rounded one way may need the other. Subnormal
  // candidates are skipped (an offset of 0 has only subnormal neighbours): on some CPUs they take slow
  // microcode paths, and a thread that flushes them to zero (DAZ) would compute something else.
  const float a0 = static_cast<float>(slope), b0 = static_cast<float>(offset);
  const float as[3] = {a0, std::nextafter(a0, 0.f), std::nextafter(a0, 2 * a0 + 1.f)};
  const float b_down = std::nextafter(b0, -1e30f), b_up = std::nextafter(b0, 1e30f);
  const float bs[5] = {b0, b_down, b_up, std::nextafter(b_down, -1e30f), std::nextafter(b_up, 1e30f)};
  auto usable = [](float v) { return v == 0.f || std::isnormal(v); };
  for (float a : as) {
    if (!usable(a)) continue;
    for (float b : bs) {
      if (!usable(b)) continue;
      c.a = a, c.b = b;
      bool all = true;
      for (int x = 0; x < 256 && all; ++x) all = affine_u8_ref(c, static_cast<uint8_t>(x)) == table[x];
      if (all) {
        *m = c;
        return true;
      }
    }
  }
  return false;
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
