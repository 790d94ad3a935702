// InstanceNormalization (ONNX opsets 1-22): each (batch, channel) plane normalised by its own mean and
// variance, then y = scale[c] * x_hat + B[c].
#include "kernels/ref/normalization_ref.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class InstanceNormalization final : public Op {
 public:
  explicit InstanceNormalization(const Node& node) : Op(node) {
    try {
      epsilon_ = node.attrs.get_float("epsilon", 1e-5f);
    } catch (const Error& e) {
      error(e.what());
    }
    if (!(epsilon_ >= 0.f)) error("epsilon must be non-negative, got " + std::to_string(epsilon_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 3, 3);
    expect_float(in[0], "input");
    expect_float(in[1], "scale");
    expect_float(in[2], "B");
    const Shape& x = in[0].shape;
    if (x.size() < 3) error("input must have rank 3 or more ([N, C, spatial...]), got shape " + shape_str(x));
    channels_ = x[1];
    for (size_t i = 1; i < 3; ++i)
      if (in[i].shape != Shape{channels_})
        error(std::string(i == 1 ? "scale" : "B") + " must have shape [" + std::to_string(channels_) + "], got " +
              shape_str(in[i].shape));
    planes_ = x[0] * x[1];
    plane_size_ = 1;
    for (size_t i = 2; i < x.size(); ++i) plane_size_ *= x[i];
    out[0].dtype = DataType::Float32;
    out[0].shape = x;
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    const float* gamma = ctx.input(1).data_as<float>();
    const float* beta = ctx.input(2).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    auto fn = [&](int64_t b, int64_t e) {
      instance_norm_ref(channels_, plane_size_, gamma, beta, epsilon_, x, y, b, e);
    };
    if (ctx.pool) ctx.pool->parallel_for(planes_, fn);
    else fn(0, planes_);
  }

 private:
  float epsilon_ = 1e-5f;
  int64_t channels_ = 0, planes_ = 0, plane_size_ = 0;
};

NINEGRID_REGISTER_OP("InstanceNormalization", InstanceNormalization);

}  // namespace
}  // namespace ninegrid
