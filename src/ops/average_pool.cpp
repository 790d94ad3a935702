// AveragePool (ONNX opsets 1-22): 1-D to 3-D mean pooling with strides, pads, dilations (opset 19),
// auto_pad, ceil_mode and count_include_pad. With ng.in_block = ng.out_block = B > 1 (set by the layout
// pass) X and Y are channel-blocked NCHW[B]c (2-D pooling only), on the vector kernels of
// pool_blocked_fast.h when the block is the vector width.
#include "kernels/pool_blocked_fast.h"
#include "ops/blocked_layout.h"
#include "ops/elementwise_common.h"
#include "ops/pool_common.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

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
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_float(in[0], "input X");
    expect_blockable(*this, block_, in[0]);
    out[0].dtype = DataType::Float32;
    out[0].shape = infer_window(in[0]);
    isa_ = Isa::Ref;
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    if (block_ > 1) isa_ = pool_blocked_isa(block_, settings.isa);
  }

  void run(OpContext& ctx) override {
    const PoolParams& p = params();
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    if (block_ > 1) {
      // Work in output rows of the block planes, in the bands of rows the convs around give each thread.
      auto fn = [&](int64_t b, int64_t e) {
        average_pool_blocked_fast(isa_, p, count_include_pad_, block_, x, y, b, e);
      };
      parallel_row_bands(ctx.pool, ctx.output(0).shape(), block_, ctx.output(0).numel(), fn);
      return;
    }
    auto fn = [&](int64_t b, int64_t e) { average_pool_ref(p, count_include_pad_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(p.planes, fn);
    else fn(0, p.planes);
  }

  std::string algorithm() const override { return isa_ == Isa::Ref ? std::string() : isa_name(isa_); }

 private:
  bool count_include_pad_ = false;
  int64_t block_ = 1;   // channel block of X and Y (1 = plain NCHW)
  Isa isa_ = Isa::Ref;  // the blocked kernels' instruction set (Ref: the reference kernels)
};

NINEGRID_REGISTER_OP("AveragePool", AveragePool);

}  // namespace
}  // namespace ninegrid
