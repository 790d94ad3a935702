// AveragePool (ONNX opsets 1-22): 1-D to 3-D mean pooling with strides, pads, dilations (opset 19),
// auto_pad, ceil_mode and count_include_pad.
#include "ops/pool_common.h"
#include "runtime/thread_pool.h"

namespace ninegrid {
namespace {

class AveragePool final : public PoolOp {
 public:
  explicit AveragePool(const Node& node) : PoolOp(node) {
    try {
      count_include_pad_ = node.attrs.get_int("count_include_pad", 0) != 0;
    } catch (const Error& e) {
      error(e.what());
    }
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
    auto fn = [&](int64_t b, int64_t e) { average_pool_ref(p, count_include_pad_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(p.planes, fn);
    else fn(0, p.planes);
  }

 private:
  bool count_include_pad_ = false;
};

NINEGRID_REGISTER_OP("AveragePool", AveragePool);

}  // namespace
}  // namespace ninegrid
