// Gemm (ONNX opsets 1-13): Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (M x K), B' likewise
// (K x N), C optional (opset 11+) and broadcast to [M, N] (a scalar, a row [N], a column [M, 1] or the
// full matrix). Opset < 7's `broadcast` attribute is implied: C must broadcast either way.
//
// A fully connected layer (B constant, A not transposed, C absent or a constant row) runs as a 1x1
// convolution over M images of K channels and one pixel (ops/conv_fast.h's pointwise kernel), with alpha
// folded into the prepacked weights and beta * C into the bias: the classifier heads of CNNs.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/ref/gemm_ref.h"
#include "ops/conv_fast.h"
#include "ops/conv_select.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Gemm final : public Op {
 public:
  explicit Gemm(const Node& node) : Op(node) {
    try {
      alpha_ = node.attrs.get_float("alpha", 1.f);
      beta_ = node.attrs.get_float("beta", 1.f);
      trans_a_ = node.attrs.get_int("transA", 0) != 0;
      trans_b_ = node.attrs.get_int("transB", 0) != 0;
    } catch (const Error& e) {
      error(e.what());
    }
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 3);
    expect_float(in[0], "input A");
    expect_float(in[1], "input B");
    const Shape& a = in[0].shape;
    const Shape& b = in[1].shape;
    if (a.size() != 2) error("input A must be a matrix, got shape " + shape_str(a));
    if (b.size() != 2) error("input B must be a matrix, got shape " + shape_str(b));
    m_ = trans_a_ ? a[1] : a[0];
    k_ = trans_a_ ? a[0] : a[1];
    n_ = trans_b_ ? b[0] : b[1];
    const int64_t kb = trans_b_ ? b[1] : b[0];
    if (kb != k_)
      error("inner dimensions differ: A " + shape_str(a) + (trans_a_ ? " (transposed)" : "") + " has K = " +
            std::to_string(k_) + ", B " + shape_str(b) + (trans_b_ ? " (transposed)" : "") + " has K = " +
            std::to_string(kb));
    c_rows_ = c_cols_ = 0;
    if (in.size() > 2 && in[2].present) {
      expect_float(in[2], "input C");
      const Shape& c = in[2].shape;
      if (c.size() > 2) error("input C must have rank 2 or less, got shape " + shape_str(c));
      // Right-aligned against [M, N]: each dimension 1 (broadcast) or equal.
      c_cols_ = c.empty() ? 1 : c.back();
      c_rows_ = c.size() == 2 ? c[0] : 1;
      if ((c_cols_ != 1 && c_cols_ != n_) || (c_rows_ != 1 && c_rows_ != m_))
        error("input C " + shape_str(c) + " does not broadcast to the output [" + std::to_string(m_) + ", " +
              std::to_string(n_) + "]");
    }
    out[0].dtype = DataType::Float32;
    out[0].shape = {m_, n_};
    fast_.reset();
  }

  // The fully connected layer as a pointwise conv, when its weights are constants.
  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    const bool has_c = in.size() > 2 && in[2].present && beta_ != 0.f;
    if (trans_a_ || !in[1].value || (has_c && (!in[2].value || c_rows_ != 1)) || m_ < 1 || n_ < 1 || k_ < 1) return;
    Conv2dParams p;
    p.batch = m_, p.in_channels = k_, p.out_channels = n_;
    p.in_h = p.in_w = p.out_h = p.out_w = 1;
    const Isa isa = settings.isa;
    const ConvPlan plan = fast_conv_plan(p, 1, 1, isa, ConvAlgorithm::Pointwise);
    if (isa == Isa::Ref || plan.kernel == ConvKernel::Ref) return;
    const float* b = in[1].value->data_as<float>();
    std::vector<float> w(static_cast<size_t>(n_ * k_)), bias(static_cast<size_t>(n_), 0.f);
    for (int64_t j = 0; j < n_; ++j)
      for (int64_t k = 0; k < k_; ++k) w[j * k_ + k] = alpha_ * (trans_b_ ? b[j * k_ + k] : b[k * n_ + j]);
    if (has_c) {
      const float* c = in[2].value->data_as<float>();
      for (int64_t j = 0; j < n_; ++j) bias[j] = beta_ * c[c_cols_ == 1 ? 0 : j];
    }
    fast_ = std::make_shared<const FastConv2d>(p, w.data(), bias.data(), Activation::none(), plan);
  }

  void run(OpContext& ctx) override {
    if (fast_) {
      fast_->run(ctx.input(0).data_as<float>(), ctx.output(0).data_as<float>(), nullptr, ctx.pool);
      return;
    }
    const float* a = ctx.input(0).data_as<float>();
    const float* b = ctx.input(1).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const bool has_c = ctx.has_input(2) && beta_ != 0.f;
    GemmParams p;
    p.m = m_, p.n = n_, p.k = k_;
    p.trans_a = trans_a_, p.trans_b = trans_b_;
    p.lda = ctx.input(0).dim(1), p.ldb = ctx.input(1).dim(1), p.ldc = n_;
    p.alpha = alpha_;
    p.beta = has_c ? beta_ : 0.f;
    const float* c = has_c ? ctx.input(2).data_as<float>() : nullptr;
    auto fn = [&](int64_t r0, int64_t r1) {
      if (c) {  // Y starts as C broadcast to [M, N]; the kernel then computes alpha * A'B' + beta * Y.
        for (int64_t i = r0; i < r1; ++i)
          for (int64_t j = 0; j < n_; ++j) y[i * n_ + j] = c[(c_rows_ == 1 ? 0 : i) * c_cols_ + (c_cols_ == 1 ? 0 : j)];
      }
      gemm_ref(p, a, b, y, r0, r1);
    };
    if (ctx.pool) ctx.pool->parallel_for(m_, fn);
    else fn(0, m_);
  }

  int64_t macs() const override { return m_ * n_ * k_; }

  std::string algorithm() const override {
    return fast_ ? std::string("fc-") + fast_->algorithm() + "/" + fast_->isa() : std::string("ref");
  }

  // The pointwise kernel holds the weights (alpha folded in) and beta * C: sessions of one model share it.
  std::shared_ptr<const void> prepared_state() const override { return fast_; }
  void adopt_prepared_state(std::shared_ptr<const void> state) override {
    fast_ = std::static_pointer_cast<const FastConv2d>(std::move(state));
  }
  bool packed_input(size_t i) const override { return fast_ && (i == 1 || i == 2); }

 private:
  float alpha_ = 1.f, beta_ = 1.f;
  bool trans_a_ = false, trans_b_ = false;
  int64_t m_ = 0, n_ = 0, k_ = 0, c_rows_ = 0, c_cols_ = 0;
  std::shared_ptr<const FastConv2d> fast_;  // the fully connected layer as a pointwise conv, when it applies
};

NINEGRID_REGISTER_OP("Gemm", Gemm);

}  // namespace
}  // namespace ninegrid
