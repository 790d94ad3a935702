// The int8 arithmetic of the quantised ops other than convolution (kernels/quantized.h defines the
// tensors, the conv epilogue and QLinearAdd's), in the same single-precision steps, so that every kernel
// and its reference agree bit for bit (a requantisation alone, uint8 to uint8, is a table:
// kernels/ref/qlookup_ref.h):
//   average (AveragePool, GlobalAveragePool: the exact int64 sum of a window's count values)
//     v = float(acc) * m_count                      m_count = (s_x / s_y) / float(count), acc = sum(x - zp_x)
// then, as in requantize, v is clamped to [qmin - zp_y, qmax - zp_y], rounded half to even, and zp_y added.
#pragma once

#include <cmath>
#include <cstdint>

namespace ninegrid {

// The last step shared by every quantised result: clamp, round half to even, add the zero point.
inline uint8_t round_to_quantized(float v, int32_t out_zero_point, int32_t qmin, int32_t qmax) {
  const float lo = static_cast<float>(qmin - out_zero_point), hi = static_cast<float>(qmax - out_zero_point);
  v = std::fmin(std::fmax(v, lo), hi);
  return static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(v)) + out_zero_point);
}

// The mean of `count` uint8 values whose differences from the input zero point sum to `acc`.
struct QuantizedAverage {
  int32_t in_zero_point = 0, out_zero_point = 0;
  float multiplier = 1.f;  // s_x / s_y
  uint8_t operator()(int64_t acc, int64_t count) const {
    const float m = multiplier / static_cast<float>(count);
    return round_to_quantized(static_cast<float>(acc) * m, out_zero_point, 0, 255);
  }
};

}  // namespace ninegrid
