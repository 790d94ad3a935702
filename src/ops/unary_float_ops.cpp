// Float32 element-wise activations and math functions: LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh,
// Elu, Selu, Celu, ThresholdedRelu, Softplus, Softsign, Shrink, Gelu, Exp, Log, Sqrt, Reciprocal, Floor,
// Ceil, Round, Erf and the trigonometric and hyperbolic functions. The loops are unary_f32_fast: vector
// kernels for the activations CNNs use, ref::unary_f32 for the rest.
#include <map>

#include "kernels/ref/unary_f32.h"
#include "kernels/unary_f32_fast.h"
#include "ops/elementwise_common.h"
#include "core/cpu_features.h"

namespace ninegrid {
namespace {

using ref::UnaryF32;

const std::map<std::string, UnaryF32>& unary_table() {
  static const std::map<std::string, UnaryF32> table = {
      {"LeakyRelu", UnaryF32::LeakyRelu}, {"Sigmoid", UnaryF32::Sigmoid},
      {"HardSigmoid", UnaryF32::HardSigmoid}, {"HardSwish", UnaryF32::HardSwish}, {"ng.Silu", UnaryF32::Silu},
      {"Tanh", UnaryF32::Tanh}, {"Elu", UnaryF32::Elu},
      {"Selu", UnaryF32::Selu}, {"Celu", UnaryF32::Celu},
      {"ThresholdedRelu", UnaryF32::ThresholdedRelu}, {"Softplus", UnaryF32::Softplus},
      {"Softsign", UnaryF32::Softsign}, {"Shrink", UnaryF32::Shrink},
      {"Gelu", UnaryF32::Gelu}, {"Exp", UnaryF32::Exp},
      {"Log", UnaryF32::Log}, {"Sqrt", UnaryF32::Sqrt},
      {"Reciprocal", UnaryF32::Reciprocal}, {"Floor", UnaryF32::Floor},
      {"Ceil", UnaryF32::Ceil}, {"Round", UnaryF32::Round},
      {"Erf", UnaryF32::Erf}, {"Sin", UnaryF32::Sin},
      {"Cos", UnaryF32::Cos}, {"Tan", UnaryF32::Tan},
      {"Asin", UnaryF32::Asin}, {"Acos", UnaryF32::Acos},
      {"Atan", UnaryF32::Atan}, {"Sinh", UnaryF32::Sinh},
      {"Cosh", UnaryF32::Cosh}, {"Asinh", UnaryF32::Asinh},
      {"Acosh", UnaryF32::Acosh}, {"Atanh", UnaryF32::Atanh},
  };
  return table;
}

class UnaryFloat final : public Op {
 public:
  explicit UnaryFloat(const Node& node) : Op(node) {
    auto it = unary_table().find(node.op_type);
    if (it == unary_table().end()) error("is not a float unary operator");
    kind_ = it->second;
    const Attributes& a = node_.attrs;
    switch (kind_) {
      case UnaryF32::LeakyRelu: params_.alpha = a.get_float("alpha", 0.01f); break;
      case UnaryF32::HardSigmoid:
        params_.alpha = a.get_float("alpha", 0.2f);
        params_.beta = a.get_float("beta", 0.5f);
        break;
      case UnaryF32::Elu: params_.alpha = a.get_float("alpha", 1.0f); break;
      case UnaryF32::Selu:
        params_.alpha = a.get_float("alpha", 1.67326319217681884765625f);
        params_.gamma = a.get_float("gamma", 1.05070102214813232421875f);
        break;
      case UnaryF32::Celu:
        params_.alpha = a.get_float("alpha", 1.0f);
        if (params_.alpha == 0.f) error("alpha must not be 0");
        break;
      case UnaryF32::ThresholdedRelu: params_.alpha = a.get_float("alpha", 1.0f); break;
      case UnaryF32::Shrink:
        params_.alpha = a.get_float("lambd", 0.5f);
        params_.beta = a.get_float("bias", 0.0f);
        break;
      case UnaryF32::Gelu: {
        const std::string approx = a.get_string("approximate", "none");
        if (approx == "tanh") kind_ = UnaryF32::GeluTanh;
        else if (approx != "none") error("approximate must be 'none' or 'tanh', got '" + approx + "'");
        break;
      }
      default: break;
    }
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, TypeList<float>(), in[0].dtype, "input");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    isa_ = Isa::Ref;
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    isa_ = unary_f32_isa(kind_, settings.isa);
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t n = ctx.input(0).numel();
    parallel_range(ctx.pool, n, n,
                   [&](int64_t b, int64_t e) { unary_f32_fast(isa_, kind_, params_, x + b, y + b, e - b); });
  }

  std::string algorithm() const override { return isa_ == Isa::Ref ? std::string() : isa_name(isa_); }

 private:
  UnaryF32 kind_ = UnaryF32::Exp;
  ref::UnaryParams params_;
  Isa isa_ = Isa::Ref;
};

NINEGRID_REGISTER_OP("LeakyRelu", UnaryFloat);
NINEGRID_REGISTER_OP("Sigmoid", UnaryFloat);
NINEGRID_REGISTER_OP("HardSigmoid", UnaryFloat);
NINEGRID_REGISTER_OP("HardSwish", UnaryFloat);
NINEGRID_REGISTER_OP("ng.Silu", UnaryFloat);
NINEGRID_REGISTER_OP("Tanh", UnaryFloat);
NINEGRID_REGISTER_OP("Elu", UnaryFloat);
NINEGRID_REGISTER_OP("Selu", UnaryFloat);
NINEGRID_REGISTER_OP("Celu", UnaryFloat);
NINEGRID_REGISTER_OP("ThresholdedRelu", UnaryFloat);
NINEGRID_REGISTER_OP("Softplus", UnaryFloat);
NINEGRID_REGISTER_OP("Softsign", UnaryFloat);
NINEGRID_REGISTER_OP("Shrink", UnaryFloat);
NINEGRID_REGISTER_OP("Gelu", UnaryFloat);
NINEGRID_REGISTER_OP("Exp", UnaryFloat);
NINEGRID_REGISTER_OP("Log", UnaryFloat);
NINEGRID_REGISTER_OP("Sqrt", UnaryFloat);
NINEGRID_REGISTER_OP("Reciprocal", UnaryFloat);
NINEGRID_REGISTER_OP("Floor", UnaryFloat);
NINEGRID_REGISTER_OP("Ceil", UnaryFloat);
NINEGRID_REGISTER_OP("Round", UnaryFloat);
NINEGRID_REGISTER_OP("Erf", UnaryFloat);
NINEGRID_REGISTER_OP("Sin", UnaryFloat);
NINEGRID_REGISTER_OP("Cos", UnaryFloat);
NINEGRID_REGISTER_OP("Tan", UnaryFloat);
NINEGRID_REGISTER_OP("Asin", UnaryFloat);
NINEGRID_REGISTER_OP("Acos", UnaryFloat);
NINEGRID_REGISTER_OP("Atan", UnaryFloat);
NINEGRID_REGISTER_OP("Sinh", UnaryFloat);
NINEGRID_REGISTER_OP("Cosh", UnaryFloat);
NINEGRID_REGISTER_OP("Asinh", UnaryFloat);
NINEGRID_REGISTER_OP("Acosh", UnaryFloat);
NINEGRID_REGISTER_OP("Atanh", UnaryFloat);

}  // namespace
}  // namespace ninegrid
