// MatMulInteger (ONNX opset 10): numpy.matmul of uint8/int8 tensors with zero points, exact int32 result.
// A [..., M, K] and B [..., K, N] as MatMul takes them (1-D A a row, 1-D B a column, batch dimensions
// broadcast); a_zero_point a scalar or one per row of A ([M]), b_zero_point a scalar or one per column of
// B ([N]), each of its tensor's type. Computed by kernels/ref/qgemm_ref.h's matmul_integer_ref.
#include <algorithm>
#include <vector>

#include "kernels/ref/qgemm_ref.h"
#include "ops/op.h"

namespace ninegrid {
namespace {

bool is_byte_type(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

// A uint8 or int8 tensor widened to int32.
std::vector<int32_t> widen(const Tensor& t) {
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = t.dtype() == DataType::UInt8 ? t.data_as<uint8_t>()[i] : t.data_as<int8_t>()[i];
  return out;
}

class MatMulInteger final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 4);
    for (int i = 0; i < 2; ++i)
      if (!is_byte_type(in[i].dtype))
        error(std::string("input ") + (i ? "B" : "A") + " must be uint8 or int8, got " + dtype_name(in[i].dtype));
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
    a_zp_per_row_ = check_zero_point(in, 2, m_, "a_zero_point", "rows of A");
    b_zp_per_column_ = check_zero_point(in, 3, n_, "b_zero_point", "columns of B");

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
    out[0].dtype = DataType::Int32;
    out[0].shape = y;
  }

  void run(OpContext& ctx) override {
    const std::vector<int32_t> a = widen(ctx.input(0)), b = widen(ctx.input(1));
    const std::vector<int32_t> za = ctx.has_input(2) ? widen(ctx.input(2)) : std::vector<int32_t>{0};
    const std::vector<int32_t> zb = ctx.has_input(3) ? widen(ctx.input(3)) : std::vector<int32_t>{0};
    int32_t* y = ctx.output(0).data_as<int32_t>();
    const int64_t batches = shape_numel(batch_shape_);
    for (int64_t bt = 0; bt < batches; ++bt) {
      // The matrix of A and of B this output batch reads (a broadcast dimension stays at 0).
      int64_t rem = bt, ai = 0, bi = 0, a_stride = 1, b_stride = 1;
      for (size_t d = batch_shape_.size(); d-- > 0;) {
        const int64_t coord = rem % batch_shape_[d];
        rem /= batch_shape_[d];
        if (a_batch_[d] != 1) ai += coord * a_stride;
        if (b_batch_[d] != 1) bi += coord * b_stride;
        a_stride *= a_batch_[d];
        b_stride *= b_batch_[d];
      }
      matmul_integer_ref(m_, n_, k_, a.data() + ai * m_ * k_, za.data(), a_zp_per_row_, b.data() + bi * k_ * n_,
                         zb.data(), b_zp_per_column_, y + bt * m_ * n_);
    }
  }

  int64_t macs() const override { return shape_numel(batch_shape_) * m_ * n_ * k_; }

 private:
  // Checks an optional zero point: the type of its tensor, a scalar (false) or `count` values (true).
  bool check_zero_point(const std::vector<TensorDesc>& in, size_t slot, int64_t count, const char* name,
                        const char* what) const {
    if (in.size() <= slot || !in[slot].present) return false;
    const TensorDesc& zp = in[slot];
    if (zp.dtype != in[slot - 2].dtype)
      error(std::string(name) + " has type " + dtype_name(zp.dtype) + ", its input " + dtype_name(in[slot - 2].dtype));
    const int64_t n = shape_numel(zp.shape);
    if (zp.shape.size() > 1 || (n != 1 && n != count))
      error(std::string(name) + " must be a scalar or have one value per " + what + " (" + std::to_string(count) +
            "), got shape " + shape_str(zp.shape));
    return n != 1;
  }

  int64_t m_ = 0, n_ = 0, k_ = 0;
  bool a_zp_per_row_ = false, b_zp_per_column_ = false;
  Shape batch_shape_, a_batch_, b_batch_;
};

NINEGRID_REGISTER_OP("MatMulInteger", MatMulInteger);

}  // namespace
}  // namespace ninegrid
