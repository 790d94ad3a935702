// ng.QAdd: C = A + B on uint8 tensors with numpy broadcasting, what graph/passes/fuse_qdq.cpp makes of
// Add(DequantizeLinear(a), DequantizeLinear(b)) [-> Relu] -> QuantizeLinear. Attributes: a_scale,
// a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point, qmin, qmax (a fused ReLU: qmin =
// y_zero_point). The arithmetic is kernels/quantized.h's QuantizedAdd. With ng.out_block = B > 1 (set by
// the layout pass) A, B and C are channel-blocked NCHW[B]c: element-wise, so only inputs of C's shape (or
// single values) are allowed then.
#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/quantized.h"
#include "ops/binary_op.h"
#include "ops/blocked_layout.h"

namespace ninegrid {
namespace {

class QAdd final : public Op {
 public:
  explicit QAdd(const Node& node) : Op(node) {
    try {
      const TensorQuant a = read_tensor_quant(node.attrs, "a"), b = read_tensor_quant(node.attrs, "b");
      const TensorQuant y = read_tensor_quant(node.attrs, "y");
      add_.a_zero_point = a.zero_point, add_.b_zero_point = b.zero_point, add_.out_zero_point = y.zero_point;
      add_.a_multiplier = a.scale / y.scale;
      add_.b_multiplier = b.scale / y.scale;
      const QClamp clamp = read_qclamp(node.attrs);
      add_.qmin = clamp.qmin, add_.qmax = clamp.qmax;
    } catch (const Error& e) {
      error(e.what());
    }
    block_ = read_output_block(*this);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    out[0].shape = infer_binary_same_type(*this, TypeList<uint8_t>(), in);
    out[0].dtype = DataType::UInt8;
    if (block_ > 1) {
      expect_blockable_float_or_int8(*this, block_, TensorDesc{DataType::UInt8, out[0].shape, nullptr, true});
      for (const TensorDesc& t : in)
        if (t.shape != out[0].shape && shape_numel(t.shape) != 1)
          error("the channel-blocked layout (ng.out_block " + std::to_string(block_) +
                ") needs inputs of the output's shape " + shape_str(out[0].shape) + ", got " + shape_str(t.shape));
    }
  }

  void run(OpContext& ctx) override {
    run_broadcast_binary<uint8_t, uint8_t, uint8_t>(ctx.pool, ctx.input(0), ctx.input(1), ctx.output(0), add_);
  }

 private:
  QuantizedAdd add_;
  int64_t block_ = 1;  // channel block of A, B and C (1 = plain NCHW)
};

NINEGRID_REGISTER_OP("ng.QAdd", QAdd);

}  // namespace
}  // namespace ninegrid
