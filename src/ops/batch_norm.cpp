// BatchNormalization (ONNX opsets 1-15), inference form: y = (x - mean) / sqrt(var + epsilon) * scale + B
// per channel (axis 1), computed as one multiply-add per value (kernels/ref/normalization_ref.h).
// training_mode = 1 (opset 14+) and the per-activation form of opsets < 9 (spatial = 0) are refused. The
// optional outputs that older opsets declare (running mean/var, saved mean/var) are filled with the
// running statistics, which inference leaves unchanged.
#include <cstring>
#include <vector>

#include "kernels/ref/normalization_ref.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class BatchNormalization final : public Op {
 public:
  explicit BatchNormalization(const Node& node) : Op(node) {
    int64_t training = 0, spatial = 1;
    try {
      epsilon_ = node.attrs.get_float("epsilon", 1e-5f);
      training = node.attrs.get_int("training_mode", 0);
      spatial = node.attrs.get_int("spatial", 1);
    } catch (const Error& e) {
      error(e.what());
    }
    if (training != 0) error("unsupported: training_mode = 1 (ninegrid runs inference only)");
    if (spatial != 1) error("unsupported: spatial = 0 (per-activation statistics)");
    if (!(epsilon_ >= 0.f)) error("epsilon must be non-negative, got " + std::to_string(epsilon_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 5, 5);
    static const char* names[] = {"input X", "scale", "B", "mean", "var"};
    for (size_t i = 0; i < 5; ++i) expect_float(in[i], names[i]);
    const Shape& x = in[0].shape;
    if (x.size() < 2) error("input X must have rank 2 or more ([N, C, ...]), got shape " + shape_str(x));
    channels_ = x[1];
    for (size_t i = 1; i < 5; ++i)
      if (in[i].shape != Shape{channels_})
        error(std::string(names[i]) + " must have shape [" + std::to_string(channels_) + "] (one per channel of X " +
              shape_str(x) + "), got " + shape_str(in[i].shape));
    planes_ = x[0] * x[1];
    plane_size_ = 1;
    for (size_t i = 2; i < x.size(); ++i) plane_size_ *= x[i];
    out[0].dtype = DataType::Float32;
    out[0].shape = x;
    for (size_t o = 1; o < out.size(); ++o) {
      out[o].dtype = DataType::Float32;
      out[o].shape = {channels_};
    }
  }

  void run(OpContext& ctx) override {
    scale_.resize(static_cast<size_t>(channels_));
    shift_.resize(static_cast<size_t>(channels_));
    batch_norm_to_affine(channels_, ctx.input(1).data_as<float>(), ctx.input(2).data_as<float>(),
                         ctx.input(3).data_as<float>(), ctx.input(4).data_as<float>(), epsilon_, scale_.data(),
                         shift_.data());
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    auto fn = [&](int64_t b, int64_t e) {
      channel_affine_ref(channels_, plane_size_, scale_.data(), shift_.data(), x, y, b, e);
    };
    if (ctx.pool) ctx.pool->parallel_for(planes_, fn);
    else fn(0, planes_);
    // Optional outputs: mean, var, then saved mean, saved var.
    for (size_t o = 1; o < ctx.outputs.size(); ++o)
      if (ctx.outputs[o])
        std::memcpy(ctx.outputs[o]->data(), ctx.input(o % 2 == 1 ? 3 : 4).data(),
                    static_cast<size_t>(channels_) * sizeof(float));
  }

 private:
  float epsilon_ = 1e-5f;
  int64_t channels_ = 0, planes_ = 0, plane_size_ = 0;
  std::vector<float> scale_, shift_;
};

NINEGRID_REGISTER_OP("BatchNormalization", BatchNormalization);

}  // namespace
}  // namespace ninegrid
