// ArgMax and ArgMin along one axis (default 0), giving int64 indices; keepdims (default 1) keeps the axis
// as size 1, select_last_index picks the last of equal extremes instead of the first.
#include "kernels/ref/reduce.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

class ArgReduce final : public Op {
 public:
  explicit ArgReduce(const Node& node) : Op(node) {
    want_max_ = node.op_type == "ArgMax";
    axis_ = node_.attrs.get_int("axis", 0);
    keepdims_ = node_.attrs.get_int("keepdims", 1) != 0;
    last_index_ = node_.attrs.get_int("select_last_index", 0) != 0;
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, NumericTypes(), in[0].dtype, "input");
    const Shape& s = in[0].shape;
    if (s.empty()) error("input must have at least one dimension");
    const int axis = normalize_axis(axis_, static_cast<int>(s.size()));
    if (s[axis] == 0 && outer_inner(s, axis) > 0)
      error("cannot take " + node_.op_type + " over axis " + std::to_string(axis_) + " of size 0");
    out[0].dtype = DataType::Int64;
    out[0].shape.clear();
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int>(d) != axis) out[0].shape.push_back(s[d]);
      else if (keepdims_) out[0].shape.push_back(1);
    }
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t* y = ctx.output(0).data_as<int64_t>();
    const int axis = normalize_axis(axis_, x.rank());
    const int64_t len = x.shape()[axis];
    const int64_t outputs = ctx.output(0).numel();
    if (outputs == 0 || len == 0) return;
    int64_t inner = 1;
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    visit_dtype(NumericTypes(), x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data_as<T>();
      parallel_range(ctx.pool, outputs, x.numel(), [&](int64_t b, int64_t e) {
        ref::arg_reduce<T>(xp, y, len, inner, want_max_, last_index_, b, e);
      });
    });
  }

 private:
  // Elements of the output: the product of all dimensions but `axis`.
  static int64_t outer_inner(const Shape& s, int axis) {
    int64_t n = 1;
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int>(d) != axis) n *= s[d];
    return n;
  }

  bool want_max_ = true;
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool last_index_ = false;
};

NINEGRID_REGISTER_OP("ArgMax", ArgReduce);
NINEGRID_REGISTER_OP("ArgMin", ArgReduce);

}  // namespace
}  // namespace ninegrid
