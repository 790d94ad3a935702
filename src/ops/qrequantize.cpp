// ng.QRequantize: a uint8 tensor into another scale and zero point, with a clamp, what
// graph/passes/fuse_qdq_moves.cpp makes of DequantizeLinear -> [value-moving ops ->] QuantizeLinear with
// different parameters. By table (kernels/ref/qlookup_ref.h): the bytes of the float DequantizeLinear ->
// QuantizeLinear exactly; with vector kernels (ops/quantize_kernels.h: x86-64 and AArch64), where
// fit_affine_u8 finds one float multiply-add that gives the table's 256 bytes, that instead
// (requantize_u8_affine), the same bytes. Attributes: x_scale, x_zero_point, y_scale, y_zero_point, qmin,
// qmax. Element-wise, so the same in every layout (the layout pass's ng.out_block does not matter).
#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/ref/qlookup_ref.h"
#include "ops/op.h"
#include "ops/quantize_kernels.h"

namespace ninegrid {
namespace {

class QRequantize final : public Op {
 public:
  explicit QRequantize(const Node& node) : Op(node) {
    try {
      const TensorQuant x = read_tensor_quant(node.attrs, "x"), y = read_tensor_quant(node.attrs, "y");
      const QClamp c = read_qclamp(node.attrs);
      table_ = requantize_table(x.scale, x.zero_point, y.scale, y.zero_point, c.qmin, c.qmax);
      has_affine_ = fit_affine_u8(table_, x.scale, x.zero_point, y.scale, y.zero_point, c.qmin, c.qmax, &affine_);
    } catch (const Error& e) {
      error(e.what());
    }
  }

  void prepare(const std::vector<TensorDesc>&, const ExecSettings& settings) override {
    const QuantizeKernels k = choose_quantize_kernels(settings.isa);
    affine_kernel_ = has_affine_ ? k.requantize_affine : nullptr;
    algorithm_ = affine_kernel_ ? std::string(k.algorithm) + "-affine" : "int8-table";
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    expect_dtype(in[0], DataType::UInt8, "input X");
    out[0].dtype = DataType::UInt8;
    out[0].shape = in[0].shape;
  }

  void run(OpContext& ctx) override {
    const uint8_t* x = ctx.input(0).data_as<uint8_t>();
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    const int64_t n = ctx.input(0).numel();
    // Chunks of 16 KiB, enough to outweigh a task's cost.
    constexpr int64_t kChunk = 16 * 1024;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    auto fn = [&](int64_t b, int64_t e) {
      const int64_t from = b * kChunk, to = e * kChunk < n ? e * kChunk : n;
      if (affine_kernel_) affine_kernel_(affine_, x + from, y + from, to - from);
      else qlookup_ref(table_, x + from, y + from, to - from);
    };
    if (ctx.pool && ctx.pool->size() > 1 && chunks > 1) ctx.pool->parallel_for(chunks, fn);
    else fn(0, chunks);
  }

  std::string algorithm() const override { return algorithm_; }

 private:
  QuantizedTable table_{};
  bool has_affine_ = false;  // the table as one multiply-add (fit_affine_u8), run by affine_kernel_ where one exists
  AffineU8 affine_;
  void (*affine_kernel_)(const AffineU8&, const uint8_t*, uint8_t*, int64_t) = nullptr;
  std::string algorithm_ = "int8-table";
};

NINEGRID_REGISTER_OP("ng.QRequantize", QRequantize);

}  // namespace
}  // namespace ninegrid
