// Where(cond, X, Y): X where cond is true, Y elsewhere, all three broadcast together. Selection copies
// bits, so any element type works; the kernel is chosen by element size.
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

class Where final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 3, 3);
    require_dtype(*this, TypeList<bool>(), in[0].dtype, "condition");
    if (in[1].dtype != in[2].dtype)
      error(std::string("X and Y must have the same type, got ") + dtype_name(in[1].dtype) + " and " +
            dtype_name(in[2].dtype));
    const size_t size = dtype_size(in[1].dtype);
    if (size != 1 && size != 2 && size != 4 && size != 8)
      error(std::string("X has unsupported type ") + dtype_name(in[1].dtype));
    out[0].dtype = in[1].dtype;
    out[0].shape = broadcast_or_throw(*this, {in[0].shape, in[1].shape, in[2].shape});
  }
  void run(OpContext& ctx) override {
    switch (dtype_size(ctx.input(1).dtype())) {
      case 1: return select<uint8_t>(ctx);
      case 2: return select<uint16_t>(ctx);
      case 4: return select<uint32_t>(ctx);
      case 8: return select<uint64_t>(ctx);
      default: error(std::string("X has unsupported type ") + dtype_name(ctx.input(1).dtype()));
    }
  }

 private:
  template <class T>
  void select(OpContext& ctx) {
    const Tensor &c = ctx.input(0), &x = ctx.input(1), &z = ctx.input(2);
    Tensor& y = ctx.output(0);
    const ref::BroadcastIndexer ix(y.shape(), {c.shape(), x.shape(), z.shape()});
    const bool* cp = c.data_as<bool>();
    const T* xp = static_cast<const T*>(x.data());
    const T* zp = static_cast<const T*>(z.data());
    T* yp = static_cast<T*>(y.data());
    parallel_range(ctx.pool, ix.numel(), ix.numel(),
                   [&](int64_t b, int64_t e) { ref::where_broadcast(ix, cp, xp, zp, yp, b, e); });
  }
};

NINEGRID_REGISTER_OP("Where", Where);

}  // namespace
}  // namespace ninegrid
