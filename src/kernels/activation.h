// Scalar activation functions, shared by the standalone activation operators' reference loops and by the
// fused conv epilogue (kernels/conv_params.h), so a fused and an unfused graph compute the same numbers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ninegrid {

enum class ActivationKind {
  None,         // y = x
  Relu,         // y = max(x, 0)
  Clip,         // y = min(max(x, min), max); ReLU6 is Clip(0, 6)
  LeakyRelu,    // y = x >= 0 ? x : alpha * x
  PRelu,        // y = x >= 0 ? x : slope[channel] * x
  Sigmoid,      // y = 1 / (1 + exp(-x))
  HardSigmoid,  // y = max(0, min(1, alpha * x + beta))
  HardSwish,    // y = x * max(0, min(1, x / 6 + 1/2))
  Silu,         // y = x * sigmoid(x) (Swish; PyTorch's SiLU, exported as Mul(x, Sigmoid(x)))
};

// An activation and its parameters. Which fields are read depends on `kind`.
struct Activation {
  ActivationKind kind = ActivationKind::None;
  float alpha = 0.f;  // LeakyRelu slope; HardSigmoid alpha
  float beta = 0.f;   // HardSigmoid beta
  float min = -std::numeric_limits<float>::infinity();  // Clip
  float max = std::numeric_limits<float>::infinity();   // Clip
  // PRelu: one slope per channel, indexed by the `channel` argument of apply_activation. A model with a
  // single shared slope must expand it to one value per channel before fusing.
  const float* slope = nullptr;
  // Then, where affine_after: y = y * scale_after + shift_after (a scalar Mul and Add after the activation,
  // as PP-OCRv4's backbone puts after every conv's HardSwish; graph/passes/fuse_epilogue.cpp).
  bool affine_after = false;
  float scale_after = 1.f, shift_after = 0.f;

  static Activation none() { return {}; }
  static Activation relu() { Activation a; a.kind = ActivationKind::Relu; return a; }
  static Activation clip(float lo, float hi) {
    Activation a; a.kind = ActivationKind::Clip; a.min = lo; a.max = hi; return a;
  }
  static Activation relu6() { return clip(0.f, 6.f); }
  static Activation leaky_relu(float alpha) {
    Activation a; a.kind = ActivationKind::LeakyRelu; a.alpha = alpha; return a;
  }
  static Activation prelu(const float* slope_per_channel) {
    Activation a; a.kind = ActivationKind::PRelu; a.slope = slope_per_channel; return a;
  }
  static Activation sigmoid() { Activation a; a.kind = ActivationKind::Sigmoid; return a; }
  static Activation hard_sigmoid(float alpha = 0.2f, float beta = 0.5f) {
    Activation a; a.kind = ActivationKind::HardSigmoid; a.alpha = alpha; a.beta = beta; return a;
  }
  static Activation hard_swish() { Activation a; a.kind = ActivationKind::HardSwish; return a; }
  static Activation silu() { Activation a; a.kind = ActivationKind::Silu; return a; }
};

// `act`'s function alone, without the affine after it.
inline float apply_activation_kind(const Activation& act, float x, int64_t channel) {
  switch (act.kind) {
    case ActivationKind::None: return x;
    case ActivationKind::Relu: return x < 0.f ? 0.f : x;  // NaN stays NaN, as in max(x, 0) of NumPy
    // max then min, as ONNX Clip defines it (so min > max yields max).
    case ActivationKind::Clip: return std::min(std::max(x, act.min), act.max);
    case ActivationKind::LeakyRelu: return x >= 0.f ? x : act.alpha * x;
    case ActivationKind::PRelu: return x >= 0.f ? x : act.slope[channel] * x;
    case ActivationKind::Sigmoid: return 1.f / (1.f + std::exp(-x));
    case ActivationKind::HardSigmoid: return std::max(0.f, std::min(1.f, act.alpha * x + act.beta));
    case ActivationKind::HardSwish: return x * std::max(0.f, std::min(1.f, x * (1.f / 6.f) + 0.5f));
    // As the Mul(x, Sigmoid(x)) it replaces computes it.
    case ActivationKind::Silu: return x * (1.f / (1.f + std::exp(-x)));
  }
  return x;
}

// Applies `act` to one value of output channel `channel` (the channel matters only for PRelu), then the
// affine after it, whose product and sum round separately, as the Mul and Add it replaces did.
inline float apply_activation(const Activation& act, float x, int64_t channel) {
  const float y = apply_activation_kind(act, x, channel);
  if (!act.affine_after) return y;
  return y * act.scale_after + act.shift_after;  // (built without FMA contraction: see CMakeLists.txt)
}

// "Relu", "Clip", ... (for error messages and `ninegrid info`).
inline const char* activation_name(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::None: return "None";
    case ActivationKind::Relu: return "Relu";
    case ActivationKind::Clip: return "Clip";
    case ActivationKind::LeakyRelu: return "LeakyRelu";
    case ActivationKind::PRelu: return "PRelu";
    case ActivationKind::Sigmoid: return "Sigmoid";
    case ActivationKind::HardSigmoid: return "HardSigmoid";
    case ActivationKind::HardSwish: return "HardSwish";
    case ActivationKind::Silu: return "Silu";
  }
  return "?";
}

}  // namespace ninegrid
