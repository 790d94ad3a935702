#include "ops/fused_activation.h"
#include "ir/fused_conv.h"

#include <string>
#include <vector>

namespace ninegrid {

namespace {

Activation read_activation_kind(const Attributes& attrs) {
  const std::string name = attrs.get_string(fused::kActivation, "");
  const std::vector<float> params = attrs.get_floats(fused::kActivationParams);
  auto expect_params = [&](size_t n) {
    if (params.size() != n)
      throw Error("fused activation " + name + " expects " + std::to_string(n) +
                  " parameters in ng.activation_params, got " + std::to_string(params.size()));
  };
  if (name.empty() || name == "None") {
    expect_params(0);
    return Activation::none();
  }
  if (name == "Relu") { expect_params(0); return Activation::relu(); }
  if (name == "Clip") { expect_params(2); return Activation::clip(params[0], params[1]); }
  if (name == "LeakyRelu") { expect_params(1); return Activation::leaky_relu(params[0]); }
  if (name == "PRelu") { expect_params(0); return Activation::prelu(nullptr); }
  if (name == "Sigmoid") { expect_params(0); return Activation::sigmoid(); }
  if (name == "HardSigmoid") { expect_params(2); return Activation::hard_sigmoid(params[0], params[1]); }
  if (name == "HardSwish") { expect_params(0); return Activation::hard_swish(); }
  if (name == "Silu") { expect_params(0); return Activation::silu(); }
  throw Error("unsupported fused activation '" + name + "'");
}

}  // namespace

Activation read_fused_activation(const Attributes& attrs) {
  Activation act = read_activation_kind(attrs);
  if (attrs.has(fused::kAffineAfter)) {
    const std::vector<float> affine = attrs.get_floats(fused::kAffineAfter);
    if (affine.size() != 2)
      throw Error("ng.affine_after expects 2 values (scale, shift), got " + std::to_string(affine.size()));
    act.affine_after = true;
    act.scale_after = affine[0], act.shift_after = affine[1];
  }
  return act;
}

}  // namespace ninegrid
