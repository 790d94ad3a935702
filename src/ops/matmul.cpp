// MatMul (ONNX opsets 1-13): numpy.matmul on float32. A 1-D A is a row [1, K] and a 1-D B a column
// [K, 1], the added dimension removed from the result; the leading (batch) dimensions broadcast.
#include <algorithm>
#include <vector>

#include "kernels/ref/gemm_ref.h"
#include "ops/op.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class MatMul final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    expect_float(in[0], "input A");
    expect_float(in[1], "input B");
    Shape a = in[0].shape, b = in[1].shape;
    if (a.empty() || b.empty()) error("inputs must have rank 1 or more, got " + shape_str(a) + " and " + shape_str(b));
    const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    m_ = a[a.size() - 2];
    k_ = a.back();
    n_ = b.back();
    if (b[b.size() - 2] != k_)
      error("inner dimensions differ: A " + shape_str(in[0].shape) + " has K = " + std::to_string(k_) + ", B " +
            shape_str(in[1].shape) + " has K = " + std::to_string(b[b.size() - 2]));

    // Broadcast the batch dimensions (all but the last two), right-aligned.
    const size_t batch_rank = std::max(a.size(), b.size()) - 2;
    batch_shape_.assign(batch_rank, 1);
    a_batch_.assign(batch_rank, 1);
    b_batch_.assign(batch_rank, 1);
    const size_t a_skip = batch_rank - (a.size() - 2), b_skip = batch_rank - (b.size() - 2);
    for (size_t i = 0; i < batch_rank; ++i) {
      if (i >= a_skip) a_batch_[i] = a[i - a_skip];
      if (i >= b_skip) b_batch_[i] = b[i - b_skip];
      if (a_batch_[i] != b_batch_[i] && a_batch_[i] != 1 && b_batch_[i] != 1)
        error("batch dimensions of A " + shape_str(in[0].shape) + " and B " + shape_str(in[1].shape) +
              " do not broadcast");
      batch_shape_[i] = a_batch_[i] == 1 ? b_batch_[i] : a_batch_[i];
    }

    Shape y = batch_shape_;
    if (!a_vector) y.push_back(m_);
    if (!b_vector) y.push_back(n_);
    out[0].dtype = DataType::Float32;
    out[0].shape = y;
  }

  void run(OpContext& ctx) override {
    const float* a = ctx.input(0).data_as<float>();
    const float* b = ctx.input(1).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t batches = shape_numel(batch_shape_);
    // Per output batch, the matrix index in A and in B (a broadcast dimension stays at 0).
    std::vector<int64_t> a_index(static_cast<size_t>(batches)), b_index(static_cast<size_t>(batches));
    for (int64_t bt = 0; bt < batches; ++bt) {
      int64_t rem = bt, ai = 0, bi = 0, a_stride = 1, b_stride = 1;
      for (size_t d = batch_shape_.size(); d-- > 0;) {
        const int64_t coord = rem % batch_shape_[d];
        rem /= batch_shape_[d];
        if (a_batch_[d] != 1) ai += coord * a_stride;
        if (b_batch_[d] != 1) bi += coord * b_stride;
        a_stride *= a_batch_[d];
        b_stride *= b_batch_[d];
      }
      a_index[bt] = ai;
      b_index[bt] = bi;
    }
    GemmParams p;
    p.m = m_, p.n = n_, p.k = k_;
    p.lda = k_, p.ldb = n_, p.ldc = n_;
    // Work items are the rows of all output matrices.
    auto fn = [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end;) {
        const int64_t bt = item / m_, row = item % m_;
        const int64_t rows = std::min(m_ - row, end - item);
        gemm_ref(p, a + a_index[bt] * m_ * k_, b + b_index[bt] * k_ * n_, y + bt * m_ * n_, row, row + rows);
        item += rows;
      }
    };
    const int64_t items = batches * m_;
    if (ctx.pool) ctx.pool->parallel_for(items, fn);
    else fn(0, items);
  }

  int64_t macs() const override { return shape_numel(batch_shape_) * m_ * n_ * k_; }

 private:
  int64_t m_ = 0, n_ = 0, k_ = 0;
  Shape batch_shape_, a_batch_, b_batch_;
};

NINEGRID_REGISTER_OP("MatMul", MatMul);

}  // namespace
}  // namespace ninegrid
