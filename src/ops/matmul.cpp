// MatMul (ONNX opsets 1-13): numpy.matmul on float32 (shapes: ops/matmul_shape.h).
#include <algorithm>
#include <vector>

#include "kernels/ref/gemm_ref.h"
#include "ops/matmul_shape.h"
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
    const std::string problem = infer_matmul_shape(in[0].shape, in[1].shape, &s_);
    if (!problem.empty()) error(problem);
    out[0].dtype = DataType::Float32;
    out[0].shape = s_.output;
  }

  void run(OpContext& ctx) override {
    const float* a = ctx.input(0).data_as<float>();
    const float* b = ctx.input(1).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    const int64_t batches = s_.batches(), m = s_.m, n = s_.n, k = s_.k;
    std::vector<int64_t> a_index(static_cast<size_t>(batches)), b_index(static_cast<size_t>(batches));
    for (int64_t bt = 0; bt < batches; ++bt) s_.operands_of(bt, &a_index[bt], &b_index[bt]);
    GemmParams p;
    p.m = m, p.n = n, p.k = k;
    p.lda = k, p.ldb = n, p.ldc = n;
    // Work items are the rows of all output matrices.
    auto fn = [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end;) {
        const int64_t bt = item / m, row = item % m;
        const int64_t rows = std::min(m - row, end - item);
        gemm_ref(p, a + a_index[bt] * m * k, b + b_index[bt] * k * n, y + bt * m * n, row, row + rows);
        item += rows;
      }
    };
    const int64_t items = batches * m;
    if (ctx.pool) ctx.pool->parallel_for(items, fn);
    else fn(0, items);
  }

  int64_t macs() const override { return s_.batches() * s_.m * s_.n * s_.k; }

 private:
  MatMulShape s_;
};

NINEGRID_REGISTER_OP("MatMul", MatMul);

}  // namespace
}  // namespace ninegrid
