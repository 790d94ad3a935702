// Reference float32 element-wise math: activations (Sigmoid, HardSwish, Elu, ...) and math functions
// (Exp, Log, Erf, Sin, ...). One entry point; the switch is outside the loops, so each loop is a plain
// map over the run.
#pragma once

#include <cstdint>

namespace ninegrid {
namespace ref {

enum class UnaryF32 {
  // activations; parameters in UnaryParams
  LeakyRelu,        // x >= 0 ? x : alpha * x
  Sigmoid,          // 1 / (1 + exp(-x))
  HardSigmoid,      // clamp(alpha * x + beta, 0, 1)
  HardSwish,        // x * clamp(x / 6 + 1/2, 0, 1)
  Tanh,
  Elu,              // x > 0 ? x : alpha * (exp(x) - 1)
  Selu,             // gamma * (x > 0 ? x : alpha * (exp(x) - 1))
  Celu,             // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  ThresholdedRelu,  // x > alpha ? x : 0
  Softplus,         // log(1 + exp(x))
  Softsign,         // x / (1 + |x|)
  Shrink,           // x < -lambd ? x + bias : x > lambd ? x - bias : 0   (lambd = alpha, bias = beta)
  Gelu,             // x / 2 * (1 + erf(x / sqrt(2)))
  GeluTanh,         // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
  Silu,             // x * sigmoid(x) (ng.Silu: graph/passes/recognize_silu.cpp)
  // math
  Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, Erf,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
};

struct UnaryParams {
  float alpha = 0.f;
  float beta = 0.f;
  float gamma = 0.f;
};

// y[k] = op(x[k]) for k < n. x and y may be the same array.
void unary_f32(UnaryF32 op, const UnaryParams& p, const float* x, float* y, int64_t n);

}  // namespace ref
}  // namespace ninegrid
