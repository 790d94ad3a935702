// GlobalAveragePool and GlobalMaxPool: one value per (batch, channel), the mean or the max over all
// spatial positions. Output [N, C, 1, ...] keeps X's rank. With ng.in_block = ng.out_block = B > 1 (set
// by the layout pass) X is channel-blocked NCHW[B]c (4-D float, or for GlobalMaxPool also uint8 / int8);
// Y, [N, C, 1, 1], has the same bytes in every layout.
#include "kernels/pool_blocked_fast.h"
#include "kernels/ref/pool_blocked_ref.h"
#include "kernels/ref/pool_ref.h"
#include "ops/blocked_layout.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class GlobalPool final : public Op {
 public:
  explicit GlobalPool(const Node& node) : Op(node), is_max_(node.op_type == "GlobalMaxPool") {
    block_ = read_spatial_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    const DataType t = in[0].dtype;
    if (is_max_) {
      if (t != DataType::Float32 && t != DataType::UInt8 && t != DataType::Int8)
        error(std::string("unsupported: input X of type ") + dtype_name(t) + " (float32, uint8 and int8 supported)");
    } else {
      expect_float(in[0], "input X");
    }
    if (is_max_) expect_blockable_float_or_int8(*this, block_, in[0]);
    else expect_blockable(*this, block_, in[0]);
    const Shape& x = in[0].shape;
    if (x.size() < 2) error("input X must have rank 2 or more ([N, C, spatial...]), got shape " + shape_str(x));
    planes_ = x[0] * x[1];
    plane_size_ = 1;
    Shape y = {x[0], x[1]};
    for (size_t i = 2; i < x.size(); ++i) {
      plane_size_ *= x[i];
      y.push_back(1);
    }
    out[0].dtype = t;
    out[0].shape = y;
    isa_ = Isa::Ref;
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override { isa_ = settings.isa; }

  std::string algorithm() const override {
    const Isa isa = is_max_ || block_ == 1 ? Isa::Ref : pool_blocked_isa(block_, isa_);
    return isa == Isa::Ref ? std::string() : isa_name(isa);
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t n = plane_size_;
    std::function<void(int64_t, int64_t)> fn;
    if (block_ > 1) {
      // Work in block planes: (batch, channel block) pairs.
      const int64_t block_planes = planes_ / block_;
      if (is_max_ && x.dtype() == DataType::Float32)
        fn = [&](int64_t b, int64_t e) {
          global_max_pool_blocked_ref(n, block_, x.data_as<float>(), y.data_as<float>(), b, e);
        };
      else if (is_max_ && x.dtype() == DataType::UInt8)
        fn = [&](int64_t b, int64_t e) {
          global_max_pool_blocked_ref(n, block_, x.data_as<uint8_t>(), y.data_as<uint8_t>(), b, e);
        };
      else if (is_max_)
        fn = [&](int64_t b, int64_t e) {
          global_max_pool_blocked_ref(n, block_, x.data_as<int8_t>(), y.data_as<int8_t>(), b, e);
        };
      else
        fn = [&](int64_t b, int64_t e) {
          global_average_pool_blocked_fast(isa_, n, block_, x.data_as<float>(), y.data_as<float>(), b, e);
        };
      if (ctx.pool) ctx.pool->parallel_for(block_planes, fn);
      else fn(0, block_planes);
      return;
    }
    if (!is_max_)
      fn = [&](int64_t b, int64_t e) { global_average_pool_ref(n, x.data_as<float>(), y.data_as<float>(), b, e); };
    else if (x.dtype() == DataType::Float32)
      fn = [&](int64_t b, int64_t e) { global_max_pool_ref(n, x.data_as<float>(), y.data_as<float>(), b, e); };
    else if (x.dtype() == DataType::UInt8)
      fn = [&](int64_t b, int64_t e) { global_max_pool_ref(n, x.data_as<uint8_t>(), y.data_as<uint8_t>(), b, e); };
    else
      fn = [&](int64_t b, int64_t e) { global_max_pool_ref(n, x.data_as<int8_t>(), y.data_as<int8_t>(), b, e); };
    if (ctx.pool) ctx.pool->parallel_for(planes_, fn);
    else fn(0, planes_);
  }

 private:
  bool is_max_;
  int64_t block_ = 1;  // channel block of X (1 = plain NCHW)
  Isa isa_ = Isa::Ref;  // for the blocked average's vector kernel
  int64_t planes_ = 0, plane_size_ = 0;
};

NINEGRID_REGISTER_OP("GlobalAveragePool", GlobalPool);
NINEGRID_REGISTER_OP("GlobalMaxPool", GlobalPool);

}  // namespace
}  // namespace ninegrid
