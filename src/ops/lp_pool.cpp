// LpPool (ONNX opsets 1-22): (sum |x|^p)^(1/p) over each window; strides, pads, auto_pad, and from
// opset 18 dilations and ceil_mode.
#include "ops/pool_common.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class LpPool final : public PoolOp {
 public:
  explicit LpPool(const Node& node) : PoolOp(node) {
    try {
      p_ = static_cast<float>(node.attrs.get_int("p", 2));
    } catch (const Error& e) {
      error(e.what());
    }
    if (p_ <= 0.f) error("p must be positive, got " + std::to_string(p_));
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_float(in[0], "input X");
    out[0].dtype = DataType::Float32;
    out[0].shape = infer_window(in[0]);
  }

  void run(OpContext& ctx) override {
    const PoolParams& p = params();
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    auto fn = [&](int64_t b, int64_t e) { lp_pool_ref(p, p_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(p.planes, fn);
    else fn(0, p.planes);
  }

 private:
  float p_ = 2.f;
};

NINEGRID_REGISTER_OP("LpPool", LpPool);

}  // namespace
}  // namespace ninegrid
