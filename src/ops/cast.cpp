// Cast (to the 'to' attribute's type) and CastLike (to the second input's type). Conversions between all
// numeric types, bool, float16 and bfloat16; strings are unsupported. The rounding and overflow rules are
// those of ref::cast_elements.
#include "kernels/ref/cast.h"
#include "ops/data_movement.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class CastBase : public Op {
 public:
  using Op::Op;

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const size_t in_elem = dtype_size(x.dtype()), out_elem = dtype_size(y.dtype());
    auto convert = [&](int64_t begin, int64_t end) {
      ref::cast_elements(static_cast<const uint8_t*>(x.data()) + begin * in_elem, x.dtype(),
                         static_cast<uint8_t*>(y.data()) + begin * out_elem, y.dtype(), end - begin);
    };
    const int64_t n = x.numel();
    if (ctx.pool && n >= (int64_t(1) << 16))
      ctx.pool->parallel_for(n, convert);
    else
      convert(0, n);
  }

 protected:
  void set_output(const TensorDesc& x, DataType to, std::vector<TensorDesc>& out) const {
    if (!ref::cast_supported(x.dtype))
      error(std::string("cast from ") + dtype_name(x.dtype) + " is unsupported");
    if (!ref::cast_supported(to)) error(std::string("cast to ") + dtype_name(to) + " is unsupported");
    out[0].dtype = to;
    out[0].shape = x.shape;
  }
};

class Cast final : public CastBase {
 public:
  explicit Cast(const Node& node) : CastBase(node) {
    if (!node.attrs.has("to")) error("attribute 'to' is required");
    to_ = static_cast<DataType>(node.attrs.get_int("to", 0));
  }
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    set_output(in[0], to_, out);
  }

 private:
  DataType to_ = DataType::Undefined;
};

class CastLike final : public CastBase {
 public:
  using CastBase::CastBase;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 2, 2);
    set_output(in[0], in[1].dtype, out);
  }
};

NINEGRID_REGISTER_OP("Cast", Cast);
NINEGRID_REGISTER_OP("CastLike", CastLike);

}  // namespace
}  // namespace ninegrid
