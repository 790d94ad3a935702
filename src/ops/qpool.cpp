// ng.QAveragePool and ng.QGlobalAveragePool: mean pooling of a uint8 tensor, what
// graph/passes/fuse_qdq_ops.cpp makes of DequantizeLinear -> AveragePool / GlobalAveragePool ->
// QuantizeLinear. Exact integer window sums, requantised once (kernels/quantized_ops.h's
// QuantizedAverage). Attributes: AveragePool's (ng.QAveragePool only); x_scale, x_zero_point, y_scale,
// y_zero_point. With ng.in_block = ng.out_block = B > 1 (set by the layout pass) X and Y are channel-blocked
// NCHW[B]c (4-D; ng.QGlobalAveragePool's Y, [N, C, 1, 1], has the same bytes in every layout).
#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/ref/qpool_blocked_ref.h"
#include "kernels/ref/qpool_ref.h"
#include "ops/blocked_layout.h"
#include "ops/elementwise_common.h"
#include "ops/pool_common.h"

namespace ninegrid {
namespace {

QuantizedAverage read_average(const Op& op, const Attributes& attrs) {
  QuantizedAverage q;
  try {
    const TensorQuant x = read_tensor_quant(attrs, "x"), y = read_tensor_quant(attrs, "y");
    q.in_zero_point = x.zero_point;
    q.out_zero_point = y.zero_point;
    q.multiplier = x.scale / y.scale;
  } catch (const Error& e) {
    op.error(e.what());
  }
  return q;
}

class QAveragePool final : public PoolOp {
 public:
  explicit QAveragePool(const Node& node) : PoolOp(node), q_(read_average(*this, node.attrs)) {
    try {
      count_include_pad_ = node.attrs.get_int("count_include_pad", 0) != 0;
    } catch (const Error& e) {
      error(e.what());
    }
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_dtype(in[0], DataType::UInt8, "input X");
    expect_blockable_float_or_int8(*this, block_, in[0]);
    out[0].dtype = DataType::UInt8;
    out[0].shape = infer_window(in[0]);
  }

  void run(OpContext& ctx) override {
    const PoolParams& p = params();
    const uint8_t* x = ctx.input(0).data_as<uint8_t>();
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    if (block_ > 1) {
      // Work in output rows of the block planes, in the bands of rows the convs around give each thread.
      auto fn = [&](int64_t b, int64_t e) { qaverage_pool_blocked_ref(p, count_include_pad_, q_, block_, x, y, b, e); };
      parallel_row_bands(ctx.pool, ctx.output(0).shape(), block_, ctx.output(0).numel(), fn);
      return;
    }
    auto fn = [&](int64_t b, int64_t e) { qaverage_pool_ref(p, count_include_pad_, q_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(p.planes, fn);
    else fn(0, p.planes);
  }

  std::string algorithm() const override { return "int8-ref"; }

 private:
  QuantizedAverage q_;
  bool count_include_pad_ = false;
  int64_t block_ = 1;  // channel block of X and Y (1 = plain NCHW)
};

class QGlobalAveragePool final : public Op {
 public:
  explicit QGlobalAveragePool(const Node& node) : Op(node), q_(read_average(*this, node.attrs)) {
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_dtype(in[0], DataType::UInt8, "input X");
    expect_blockable_float_or_int8(*this, block_, in[0]);
    const Shape& x = in[0].shape;
    if (x.size() < 3) error("input X must have rank 3 or more ([N, C, spatial...]), got shape " + shape_str(x));
    planes_ = x[0] * x[1];
    plane_size_ = shape_numel(x) / (planes_ > 0 ? planes_ : 1);
    out[0].dtype = DataType::UInt8;
    out[0].shape = Shape(x.size(), 1);
    out[0].shape[0] = x[0], out[0].shape[1] = x[1];
  }

  void run(OpContext& ctx) override {
    const uint8_t* x = ctx.input(0).data_as<uint8_t>();
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    if (block_ > 1) {
      // Work in block planes: (batch, channel block) pairs.
      const int64_t block_planes = planes_ / block_;
      auto fn = [&](int64_t b, int64_t e) { qglobal_average_pool_blocked_ref(plane_size_, q_, block_, x, y, b, e); };
      if (ctx.pool) ctx.pool->parallel_for(block_planes, fn);
      else fn(0, block_planes);
      return;
    }
    auto fn = [&](int64_t b, int64_t e) { qglobal_average_pool_ref(plane_size_, q_, x, y, b, e); };
    if (ctx.pool) ctx.pool->parallel_for(planes_, fn);
    else fn(0, planes_);
  }

  std::string algorithm() const override { return "int8-ref"; }

 private:
  QuantizedAverage q_;
  int64_t block_ = 1;  // channel block of X (1 = plain NCHW)
  int64_t planes_ = 0, plane_size_ = 0;
};

NINEGRID_REGISTER_OP("ng.QAveragePool", QAveragePool);
NINEGRID_REGISTER_OP("ng.QGlobalAveragePool", QGlobalAveragePool);

}  // namespace
}  // namespace ninegrid
