// MatMulInteger (ONNX opset 10): numpy.matmul of uint8/int8 tensors with zero points, exact int32 result.
// A [..., M, K] and B [..., K, N] as MatMul takes them (ops/matmul_shape.h); a_zero_point a scalar or one
// per row of A ([M]), b_zero_point a scalar or one per column of B ([N]), each of its tensor's type.
// Computed by kernels/ref/qgemm_ref.h's matmul_integer_ref.
#include <string>
#include <vector>

#include "kernels/ref/qgemm_ref.h"
#include "ops/matmul_shape.h"
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
    const std::string problem = infer_matmul_shape(in[0].shape, in[1].shape, &s_);
    if (!problem.empty()) error(problem);
    a_zp_per_row_ = check_zero_point(in, 2, s_.m, "a_zero_point", "rows of A");
    b_zp_per_column_ = check_zero_point(in, 3, s_.n, "b_zero_point", "columns of B");
    out[0].dtype = DataType::Int32;
    out[0].shape = s_.output;
  }

  void run(OpContext& ctx) override {
    const std::vector<int32_t> a = widen(ctx.input(0)), b = widen(ctx.input(1));
    const std::vector<int32_t> za = ctx.has_input(2) ? widen(ctx.input(2)) : std::vector<int32_t>{0};
    const std::vector<int32_t> zb = ctx.has_input(3) ? widen(ctx.input(3)) : std::vector<int32_t>{0};
    int32_t* y = ctx.output(0).data_as<int32_t>();
    for (int64_t bt = 0, batches = s_.batches(); bt < batches; ++bt) {
      int64_t ai = 0, bi = 0;
      s_.operands_of(bt, &ai, &bi);
      matmul_integer_ref(s_.m, s_.n, s_.k, a.data() + ai * s_.m * s_.k, za.data(), a_zp_per_row_,
                         b.data() + bi * s_.k * s_.n, zb.data(), b_zp_per_column_, y + bt * s_.m * s_.n);
    }
  }

  int64_t macs() const override { return s_.batches() * s_.m * s_.n * s_.k; }

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

  MatMulShape s_;
  bool a_zp_per_row_ = false, b_zp_per_column_ = false;
};

NINEGRID_REGISTER_OP("MatMulInteger", MatMulInteger);

}  // namespace
}  // namespace ninegrid
