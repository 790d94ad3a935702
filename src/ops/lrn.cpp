// LRN (ONNX opsets 1-13): local response normalisation across channels, as in AlexNet / GoogLeNet.
#include <algorithm>

#include "core/checked_math.h"
#include "kernels/ref/normalization_ref.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Lrn final : public Op {
 public:
  explicit Lrn(const Node& node) : Op(node) {
    if (!node.attrs.has("size")) error("attribute size is required");
    try {
      size_ = node.attrs.get_int("size", 1);
      alpha_ = node.attrs.get_float("alpha", 1e-4f);
      beta_ = node.attrs.get_float("beta", 0.75f);
      bias_ = node.attrs.get_float("bias", 1.f);
    } catch (const Error& e) {
      error(e.what());
    }
    if (size_ <= 0) error("size must be positive, got " + std::to_string(size_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_float(in[0], "input X");
    const Shape& x = in[0].shape;
    if (x.size() < 2) error("input X must have rank 2 or more ([N, C, ...]), got shape " + shape_str(x));
    batch_ = x[0];
    channels_ = x[1];
    plane_size_ = 1;
    for (size_t i = 2; i < x.size(); ++i) plane_size_ *= x[i];
    out[0].dtype = DataType::Float32;
    out[0].shape = x;
  }

  // Each output sums the squares of up to `size` neighbouring channels.
  int64_t macs() const override {
    return saturating_mul(saturating_mul(batch_ * channels_, plane_size_), std::min(size_, channels_));
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    auto fn = [&](int64_t b, int64_t e) { lrn_ref(channels_, plane_size_, size_, alpha_, beta_, bias_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(batch_, fn);
    else fn(0, batch_);
  }

 private:
  int64_t size_ = 1;
  float alpha_ = 1e-4f, beta_ = 0.75f, bias_ = 1.f;
  int64_t batch_ = 0, channels_ = 0, plane_size_ = 0;
};

NINEGRID_REGISTER_OP("LRN", Lrn);

}  // namespace
}  // namespace ninegrid
