#include "kernels/ref/unary_f32.h"

#include <algorithm>
#include <cmath>

#include "kernels/ref/elementwise_loops.h"
#include "kernels/ref/scalar_math.h"

namespace ninegrid {
namespace ref {

namespace {

inline float clamp01(float v) { return std::min(1.f, std::max(0.f, v)); }

// log(1 + exp(x)) without overflow for large x or loss of precision for very negative x.
inline float softplus(float x) { return x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

}  // namespace

void unary_f32(UnaryF32 op, const UnaryParams& p, const float* x, float* y, int64_t n) {
  const float alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  switch (op) {
    case UnaryF32::LeakyRelu: return map_run(x, y, n, [=](float v) { return v >= 0.f ? v : alpha * v; });
    case UnaryF32::Sigmoid: return map_run(x, y, n, [](float v) { return 1.f / (1.f + std::exp(-v)); });
    case UnaryF32::Silu: return map_run(x, y, n, [](float v) { return v * (1.f / (1.f + std::exp(-v))); });
    case UnaryF32::HardSigmoid: return map_run(x, y, n, [=](float v) { return clamp01(alpha * v + beta); });
    case UnaryF32::HardSwish:
      return map_run(x, y, n, [](float v) { return v * clamp01(v * (1.f / 6.f) + 0.5f); });
    case UnaryF32::Tanh: return map_run(x, y, n, [](float v) { return std::tanh(v); });
    case UnaryF32::Elu: return map_run(x, y, n, [=](float v) { return v > 0.f ? v : alpha * std::expm1(v); });
    case UnaryF32::Selu:
      return map_run(x, y, n, [=](float v) { return gamma * (v > 0.f ? v : alpha * std::expm1(v)); });
    case UnaryF32::Celu:
      return map_run(x, y, n, [=](float v) {
        return std::max(0.f, v) + std::min(0.f, alpha * std::expm1(v / alpha));
      });
    case UnaryF32::ThresholdedRelu: return map_run(x, y, n, [=](float v) { return v > alpha ? v : 0.f; });
    case UnaryF32::Softplus: return map_run(x, y, n, softplus);
    case UnaryF32::Softsign: return map_run(x, y, n, [](float v) { return v / (1.f + std::fabs(v)); });
    case UnaryF32::Shrink:
      return map_run(x, y, n, [=](float v) { return v < -alpha ? v + beta : v > alpha ? v - beta : 0.f; });
    case UnaryF32::Gelu:
      return map_run(x, y, n, [](float v) { return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f)); });
    case UnaryF32::GeluTanh:
      return map_run(x, y, n, [](float v) {
        return 0.5f * v * (1.f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      });
    case UnaryF32::Exp: return map_run(x, y, n, [](float v) { return std::exp(v); });
    case UnaryF32::Log: return map_run(x, y, n, [](float v) { return std::log(v); });
    case UnaryF32::Sqrt: return map_run(x, y, n, [](float v) { return std::sqrt(v); });
    case UnaryF32::Reciprocal: return map_run(x, y, n, [](float v) { return 1.f / v; });
    case UnaryF32::Floor: return map_run(x, y, n, [](float v) { return std::floor(v); });
    case UnaryF32::Ceil: return map_run(x, y, n, [](float v) { return std::ceil(v); });
    case UnaryF32::Round: return map_run(x, y, n, round_half_even);
    case UnaryF32::Erf: return map_run(x, y, n, [](float v) { return std::erf(v); });
    case UnaryF32::Sin: return map_run(x, y, n, [](float v) { return std::sin(v); });
    case UnaryF32::Cos: return map_run(x, y, n, [](float v) { return std::cos(v); });
    case UnaryF32::Tan: return map_run(x, y, n, [](float v) { return std::tan(v); });
    case UnaryF32::Asin: return map_run(x, y, n, [](float v) { return std::asin(v); });
    case UnaryF32::Acos: return map_run(x, y, n, [](float v) { return std::acos(v); });
    case UnaryF32::Atan: return map_run(x, y, n, [](float v) { return std::atan(v); });
    case UnaryF32::Sinh: return map_run(x, y, n, [](float v) { return std::sinh(v); });
    case UnaryF32::Cosh: return map_run(x, y, n, [](float v) { return std::cosh(v); });
    case UnaryF32::Asinh: return map_run(x, y, n, [](float v) { return std::asinh(v); });
    case UnaryF32::Acosh: return map_run(x, y, n, [](float v) { return std::acosh(v); });
    case UnaryF32::Atanh: return map_run(x, y, n, [](float v) { return std::atanh(v); });
  }
}

}  // namespace ref
}  // namespace ninegrid
