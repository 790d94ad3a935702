// The int8 arithmetic every quantised kernel computes, defined once so that the reference kernels
// (kernels/ref/qconv_ref.h ...) and the vector kernels agree bit for bit.
//
// Tensors: activations are uint8 with a per-tensor zero point zp and scale s (real = s * (q - zp)); a
// model's signed int8 activations are stored shifted by +128 (q + 128, zp + 128), which represents the
// same reals and lets the x86 dot-product instruction (vpdpbusd: unsigned x signed bytes) read them as
// they are. Weights are int8, symmetric (zero point 0), one scale per output channel. Sums are int32.
//
// Requantisation of one output value, from its exact integer sum
//   acc = sum over the taps inside the image of (x - zp_x) * w   (taps in the padding contribute nothing)
// plus the int32 bias b[c] (in units of s_x * s_w[c]):
//   v = float(acc + b[c]) * m[c]                       m[c] = s_x * s_w[c] / s_y, one float rounding
//   v = fma(float(r - zp_r), m_r, v)                   only with a fused residual r (uint8, zp_r, m_r = s_r / s_y)
//   v = min(max(v, float(qmin - zp_y)), float(qmax - zp_y))
//   q = round_half_even(v) + zp_y                      in [qmin, qmax] subset of [0, 255]
// With a fused quantised addition instead (an ng.QAdd after the conv, graph/passes/fuse_qadd.cpp), the
// residual r is not added before the rounding: q is computed as above and the output is QuantizedAdd(q, r)
// (or QuantizedAdd(r, q) when the conv's output was the addition's second operand), exactly the unfused
// graph's bytes.
// float(int32) rounds to nearest even (exact below 2^24). The clamp before rounding keeps the conversion
// in range and equals clamping after it, since the bounds are integers. A fused ReLU is qmin = zp_y (and
// ReLU6/Clip an upper qmax), so activations cost nothing.
#pragma once

#include <cmath>
#include <cstdint>

namespace ninegrid {

// Quantised addition c = a + b of two uint8 values (ONNX QLinearAdd's arithmetic, in the same single
// precision steps as requantize): v = fma(float(b - zb), mb, float(a - za) * ma) with ma = sa / sc and
// mb = sb / sc, then the clamp, rounding and zero point as in requantize.
struct QuantizedAdd {
  int32_t a_zero_point = 0, b_zero_point = 0, out_zero_point = 0;
  float a_multiplier = 1.f, b_multiplier = 1.f;
  int32_t qmin = 0, qmax = 255;
  uint8_t operator()(uint8_t a, uint8_t b) const {
    float v = std::fma(static_cast<float>(static_cast<int32_t>(b) - b_zero_point), b_multiplier,
                       static_cast<float>(static_cast<int32_t>(a) - a_zero_point) * a_multiplier);
    const float lo = static_cast<float>(qmin - out_zero_point), hi = static_cast<float>(qmax - out_zero_point);
    v = std::fmin(std::fmax(v, lo), hi);
    return static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(v)) + out_zero_point);
  }
};

// The epilogue of a quantised convolution (or any op whose result is an int32 sum per output channel).
struct Requantization {
  const int32_t* bias = nullptr;     // per output channel; null: zeros
  const float* multiplier = nullptr; // per output channel: s_x * s_w[c] / s_y
  int32_t out_zero_point = 0;
  int32_t qmin = 0, qmax = 255;      // the clamp, in quantised units (activations fused here)
  // A fused residual added before the clamp (uint8, the output's layout), or null.
  const uint8_t* residual = nullptr;
  int32_t residual_zero_point = 0;
  float residual_multiplier = 0.f;   // s_r / s_y
  // With residual_add, the residual is instead the other operand of a quantised addition after the
  // requantisation (residual_zero_point and residual_multiplier unused): the conv's output is add's first
  // operand (a) when conv_is_first, else its second (b).
  bool residual_add = false;
  bool conv_is_first = true;
  QuantizedAdd add;
};

// One output value by the formula above; `residual` is the residual's value (ignored without one).
inline uint8_t requantize(int32_t acc, int64_t c, const Requantization& q, uint8_t residual) {
  const int32_t sum = acc + (q.bias ? q.bias[c] : 0);
  float v = static_cast<float>(sum) * q.multiplier[c];
  if (q.residual && !q.residual_add)
    v = std::fma(static_cast<float>(static_cast<int32_t>(residual) - q.residual_zero_point), q.residual_multiplier, v);
  const float lo = static_cast<float>(q.qmin - q.out_zero_point), hi = static_cast<float>(q.qmax - q.out_zero_point);
  v = std::fmin(std::fmax(v, lo), hi);
  const uint8_t out = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(v)) + q.out_zero_point);
  if (!q.residual || !q.residual_add) return out;
  return q.conv_is_first ? q.add(out, residual) : q.add(residual, out);
}

// The quantised value of a real number for scale s and zero point zp, saturated to [qmin, qmax]
// (QuantizeLinear's rule: round half to even).
inline int32_t quantize_value(float real, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
  float v = std::nearbyint(real / scale) + static_cast<float>(zero_point);
  v = std::fmin(std::fmax(v, static_cast<float>(qmin)), static_cast<float>(qmax));
  return static_cast<int32_t>(v);
}

}  // namespace ninegrid
