// MaxPool (ONNX opsets 1-22): 1-D to 3-D max pooling with strides, pads, dilations, auto_pad, ceil_mode,
// and the optional Indices output (flattened positions, storage_order 0 row-major or 1 column-major).
// float32, uint8 and int8 inputs. With ng.in_block = ng.out_block = B > 1 (set by the layout pass) X and Y
// are channel-blocked NCHW[B]c: 2-D pooling without the Indices output, on the vector kernels of
// pool_blocked_fast.h when the block is the vector width (float, uint8 and int8 alike).
#include "kernels/pool_blocked_fast.h"
#include "kernels/ref/pool_blocked_ref.h"
#include "ops/blocked_layout.h"
#include "ops/elementwise_common.h"
#include "ops/pool_common.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class MaxPool final : public PoolOp {
 public:
  explicit MaxPool(const Node& node) : PoolOp(node) {
    try {
      storage_order_ = node.attrs.get_int("storage_order", 0);
    } catch (const Error& e) {
      error(e.what());
    }
    if (storage_order_ != 0 && storage_order_ != 1)
      error("storage_order must be 0 (row-major) or 1 (column-major), got " + std::to_string(storage_order_));
    block_ = read_spatial_block(*this);
    if (block_ > 1 && node.outputs.size() > 1 && node.outputs[1] >= 0)
      error("the Indices output needs the plain NCHW layout (ng.in_block " + std::to_string(block_) + ")");
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    const DataType t = in[0].dtype;
    if (t != DataType::Float32 && t != DataType::UInt8 && t != DataType::Int8)
      error(std::string("unsupported: input X of type ") + dtype_name(t) + " (float32, uint8 and int8 supported)");
    expect_blockable_float_or_int8(*this, block_, in[0]);
    const Shape y = infer_window(in[0]);
    isa_ = Isa::Ref;
    out[0].dtype = t;
    out[0].shape = y;
    if (out.size() > 1) {
      out[1].dtype = DataType::Int64;
      out[1].shape = y;
    }
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    if (block_ > 1) isa_ = pool_blocked_isa(block_, settings.isa);
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t* indices = ctx.outputs.size() > 1 && ctx.outputs[1] ? ctx.outputs[1]->data_as<int64_t>() : nullptr;
    const bool column_major = storage_order_ == 1;
    const PoolParams& p = params();
    std::function<void(int64_t, int64_t)> fn;
    if (block_ > 1) {
      // Work in output rows of the block planes, in the bands of rows the convs around give each thread.
      switch (x.dtype()) {
        case DataType::Float32:
          fn = [&](int64_t b, int64_t e) {
            max_pool_blocked_fast(isa_, p, block_, x.data_as<float>(), ctx.output(0).data_as<float>(), b, e);
          };
          break;
        case DataType::UInt8:
          fn = [&](int64_t b, int64_t e) {
            max_pool_blocked_fast(isa_, p, block_, x.data_as<uint8_t>(), ctx.output(0).data_as<uint8_t>(), b, e);
          };
          break;
        default:
          fn = [&](int64_t b, int64_t e) {
            max_pool_blocked_fast(isa_, p, block_, x.data_as<int8_t>(), ctx.output(0).data_as<int8_t>(), b, e);
          };
          break;
      }
      parallel_row_bands(ctx.pool, ctx.output(0).shape(), block_, ctx.output(0).numel(), fn);
      return;
    }
    switch (x.dtype()) {
      case DataType::Float32:
        fn = [&](int64_t b, int64_t e) {
          max_pool_ref(p, x.data_as<float>(), ctx.output(0).data_as<float>(), indices, column_major, b, e);
        };
        break;
      case DataType::UInt8:
        fn = [&](int64_t b, int64_t e) {
          max_pool_ref(p, x.data_as<uint8_t>(), ctx.output(0).data_as<uint8_t>(), indices, column_major, b, e);
        };
        break;
      default:
        fn = [&](int64_t b, int64_t e) {
          max_pool_ref(p, x.data_as<int8_t>(), ctx.output(0).data_as<int8_t>(), indices, column_major, b, e);
        };
        break;
    }
    if (ctx.pool) ctx.pool->parallel_for(p.planes, fn);
    else fn(0, p.planes);
  }

  std::string algorithm() const override { return isa_ == Isa::Ref ? std::string() : isa_name(isa_); }

 private:
  int64_t storage_order_ = 0;
  int64_t block_ = 1;   // channel block of X and Y (1 = plain NCHW)
  Isa isa_ = Isa::Ref;  // the blocked kernels' instruction set (Ref: the reference kernels)
};

NINEGRID_REGISTER_OP("MaxPool", MaxPool);

}  // namespace
}  // namespace ninegrid
