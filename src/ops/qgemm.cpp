// ng.QGemm: a quantised fully connected layer, what graph/passes/fuse_qdq_ops.cpp makes of
// DequantizeLinear -> Gemm / MatMul (constant int8 weights) [-> Relu/Clip] -> QuantizeLinear. The
// arithmetic is kernels/quantized.h's requantisation, per output column.
//
// Inputs: X uint8 [..., K] (rank 1 or more; the leading dimensions are rows), W int8 [N, K] (constant; one
// row per output column), B int32 [N] (optional, constant, in units of x_scale * w_scale[n]).
// Output Y uint8 [..., N]. Attributes: x_scale, x_zero_point, w_scale (1 or N values), y_scale,
// y_zero_point, qmin, qmax (ir/quant_attrs.h's QConvAttrs); x_is_matrix = 1 (from a Gemm) requires a
// 2-D X.
//
// The fast path: M rows of K values times [N, K] weights is a 1x1 convolution of M images of K channels
// and one pixel into N channels, and a [M, C, 1, 1] tensor has the same bytes in every channel-blocked
// layout, so FastQConv2d's pointwise kernels (VNNI, AVX2) run it as it is, with the same requantisation.
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "ir/quant_attrs.h"
#include "kernels/ref/qgemm_ref.h"
#include "ops/exec_settings.h"
#include "ops/op.h"
#include "ops/qconv_fast.h"

namespace ninegrid {
namespace {

class QGemm final : public Op {
 public:
  explicit QGemm(const Node& node) : Op(node) {
    try {
      q_ = read_qconv_attrs(node.attrs);
    } catch (const Error& e) {
      error(e.what());
    }
    if (q_.has_residual || q_.has_add) error("a fused residual is not supported");
    x_is_matrix_ = node.attrs.get_int("x_is_matrix", 0) != 0;
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 3);
    const TensorDesc& x = in[0];
    const TensorDesc& w = in[1];
    expect_dtype(x, DataType::UInt8, "input X");
    expect_dtype(w, DataType::Int8, "weights W");
    if (x.shape.empty()) error("input X must have rank 1 or more");
    if (x_is_matrix_ && x.shape.size() != 2) error("input X must be a matrix, got shape " + shape_str(x.shape));
    if (w.shape.size() != 2) error("weights W must be a matrix [N, K], got shape " + shape_str(w.shape));
    if (!w.value) error("weights W must be constant");
    n_ = w.shape[0];
    k_ = w.shape[1];
    if (x.shape.back() != k_)
      error("input X " + shape_str(x.shape) + " has " + std::to_string(x.shape.back()) + " columns, weights " +
            shape_str(w.shape) + " need K = " + std::to_string(k_));
    if (in.size() > 2 && in[2].present) {
      expect_dtype(in[2], DataType::Int32, "bias B");
      if (in[2].shape != Shape{n_}) error("bias B must have shape [" + std::to_string(n_) + "], got " + shape_str(in[2].shape));
      if (!in[2].value) error("bias B must be constant");
    }
    const int64_t scales = static_cast<int64_t>(q_.w_scale.size());
    if (scales != 1 && scales != n_)
      error("w_scale has " + std::to_string(scales) + " values; it needs 1 or one per output column (" +
            std::to_string(n_) + ")");
    // Each product adds at most 255 x 128 to the int32 sum.
    if (k_ * 255 * 128 >= (int64_t(1) << 31))
      error("a quantised sum over K = " + std::to_string(k_) + " could overflow int32 (at most " +
            std::to_string((int64_t(1) << 31) / (255 * 128)) + " are supported)");
    m_ = shape_numel(x.shape) / (k_ > 0 ? k_ : 1);
    multiplier_.resize(static_cast<size_t>(n_));
    for (int64_t c = 0; c < n_; ++c) multiplier_[c] = q_.x_scale * q_.w_scale[scales == 1 ? 0 : c] / q_.y_scale;
    out[0].dtype = DataType::UInt8;
    out[0].shape = x.shape;
    out[0].shape.back() = n_;
    fast_.reset();
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    fast_.reset();
    if (settings.isa == Isa::Ref || m_ < 1 || n_ < 1 || k_ < 1) return;
    Conv2dParams p;
    p.batch = m_;
    p.in_channels = k_, p.out_channels = n_;
    p.in_h = p.in_w = p.out_h = p.out_w = 1;
    // Any block dividing the count reads the same bytes as plain data here (one pixel per image): the widest
    // the kernels read without staging (AArch64's read 4 only).
    auto block_of = [](int64_t channels) -> int64_t {
#if defined(__aarch64__)
      for (int64_t b : {4})
#else
      for (int64_t b : {16, 8, 4})
#endif
        if (channels % b == 0) return b;
      return 1;
    };
    const int64_t in_block = block_of(k_), out_block = block_of(n_);
    if (!FastQConv2d::supports(p, in_block, out_block, settings.isa)) return;
    Requantization q = requantization();
    q.bias = in.size() > 2 && in[2].present ? in[2].value->data_as<int32_t>() : nullptr;
    fast_ = std::make_shared<const FastQConv2d>(p, in[1].value->data_as<int8_t>(), q, q_.x_zero_point, settings.isa,
                                          in_block, out_block);
  }

  void run(OpContext& ctx) override {
    if (fast_) {
      fast_->run(ctx.input(0).data_as<uint8_t>(), ctx.output(0).data_as<uint8_t>(), nullptr, ctx.pool);
      return;
    }
    Requantization q = requantization();
    q.bias = ctx.has_input(2) ? ctx.input(2).data_as<int32_t>() : nullptr;
    const uint8_t* x = ctx.input(0).data_as<uint8_t>();
    const int8_t* w = ctx.input(1).data_as<int8_t>();
    uint8_t* y = ctx.output(0).data_as<uint8_t>();
    auto rows = [&](int64_t b, int64_t e) { qgemm_ref(e - b, n_, k_, x + b * k_, q_.x_zero_point, w, q, y + b * n_); };
    if (ctx.pool && m_ > 1) ctx.pool->parallel_for(m_, rows);
    else rows(0, m_);
  }

  int64_t macs() const override { return m_ * n_ * k_; }
  std::string algorithm() const override { return fast_ ? fast_->algorithm() : "int8-ref"; }

  // Shared by the sessions of one model, as ng.QConv's kernel (ops/qconv.cpp); the weights stay in the graph.
  std::shared_ptr<const void> prepared_state() const override { return fast_; }
  void adopt_prepared_state(std::shared_ptr<const void> state) override {
    fast_ = std::static_pointer_cast<const FastQConv2d>(std::move(state));
  }

 private:
  // Everything but the bias.
  Requantization requantization() const {
    Requantization q;
    q.multiplier = multiplier_.data();
    q.out_zero_point = q_.y_zero_point;
    q.qmin = q_.qmin, q.qmax = q_.qmax;
    return q;
  }

  QConvAttrs q_;
  bool x_is_matrix_ = false;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<float> multiplier_;  // per output column: x_scale * w_scale / y_scale
  std::shared_ptr<const FastQConv2d> fast_;  // set by prepare() when a fast kernel fits, or adopted
};

NINEGRID_REGISTER_OP("ng.QGemm", QGemm);

}  // namespace
}  // namespace ninegrid
