// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum
// and ReduceLogSumExp. The axes come from the 'axes' attribute (before opset 18; ReduceSum before 13) or
// from the optional second input (known at plan time); both forms are accepted at any opset. No axes
// reduce everything, unless noop_with_empty_axes=1, which makes the operator an identity.
#include <cstring>
#include <map>

#include "kernels/ref/reduce.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

using ReduceTypes = TypeList<float, double, int32_t, int64_t>;

const std::map<std::string, ref::ReduceKind>& reduce_table() {
  static const std::map<std::string, ref::ReduceKind> table = {
      {"ReduceSum", ref::ReduceKind::Sum},         {"ReduceMean", ref::ReduceKind::Mean},
      {"ReduceMax", ref::ReduceKind::Max},         {"ReduceMin", ref::ReduceKind::Min},
      {"ReduceProd", ref::ReduceKind::Prod},       {"ReduceL1", ref::ReduceKind::L1},
      {"ReduceL2", ref::ReduceKind::L2},           {"ReduceSumSquare", ref::ReduceKind::SumSquare},
      {"ReduceLogSum", ref::ReduceKind::LogSum},   {"ReduceLogSumExp", ref::ReduceKind::LogSumExp},
  };
  return table;
}

class Reduce final : public Op {
 public:
  explicit Reduce(const Node& node) : Op(node) {
    auto it = reduce_table().find(node.op_type);
    if (it == reduce_table().end()) error("is not a reduction");
    kind_ = it->second;
    keepdims_ = node_.attrs.get_int("keepdims", 1) != 0;
    noop_with_empty_axes_ = node_.attrs.get_int("noop_with_empty_axes", 0) != 0;
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 2);
    require_dtype(*this, ReduceTypes(), in[0].dtype, "input");
    std::vector<int64_t> from_input;
    const bool has_axes_input = in.size() > 1 && in[1].present;
    // Empty axes need no values; others decide the output shape, which is planned before any run.
    if (has_axes_input && shape_numel(in[1].shape) != 0) {
      from_input = known_ints(in, 1, "axes");
    }
    const Shape& s = in[0].shape;
    const std::vector<bool> reduced = reduced_dims(static_cast<int>(s.size()), has_axes_input ? &from_input : nullptr);
    out[0].dtype = in[0].dtype;
    out[0].shape.clear();
    for (size_t d = 0; d < s.size(); ++d) {
      if (!reduced[d]) out[0].shape.push_back(s[d]);
      else if (keepdims_) out[0].shape.push_back(1);
    }
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    std::vector<int64_t> from_input;
    const bool has_axes_input = ctx.has_input(1);
    if (has_axes_input) from_input = axes_values(ctx.input(1));
    const std::vector<bool> reduced = reduced_dims(x.rank(), has_axes_input ? &from_input : nullptr);
    const ref::ReduceGeometry g = ref::make_reduce_geometry(x.shape(), reduced);
    visit_dtype(ReduceTypes(), x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data_as<T>();
      T* yp = y.data_as<T>();
      parallel_range(ctx.pool, g.work_units, x.numel(),
                     [&](int64_t b, int64_t e) { ref::reduce<T>(kind_, g, xp, yp, b, e); });
    });
  }

 private:
  std::vector<int64_t> axes_values(const Tensor& t) const {
    TensorDesc d;
    d.dtype = t.dtype();
    d.shape = t.shape();
    d.value = &t;
    return known_ints(std::vector<TensorDesc>{d}, 0, "axes");
  }

  // Which of the `rank` input dimensions are reduced. With no axes (or empty ones): all, or none when
  // noop_with_empty_axes is set.
  std::vector<bool> reduced_dims(int rank, const std::vector<int64_t>* axes_input) const {
    std::vector<int64_t> axes;
    if (axes_input) axes = *axes_input;
    else if (node_.attrs.has("axes")) axes = node_.attrs.get_ints("axes");
    if (axes.empty()) return std::vector<bool>(static_cast<size_t>(rank), !noop_with_empty_axes_);
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      const int d = normalize_axis(a, rank);
      if (reduced[d]) error("axis " + std::to_string(a) + " appears twice in axes");
      reduced[d] = true;
    }
    return reduced;
  }

  ref::ReduceKind kind_ = ref::ReduceKind::Sum;
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
};

NINEGRID_REGISTER_OP("ReduceSum", Reduce);
NINEGRID_REGISTER_OP("ReduceMean", Reduce);
NINEGRID_REGISTER_OP("ReduceMax", Reduce);
NINEGRID_REGISTER_OP("ReduceMin", Reduce);
NINEGRID_REGISTER_OP("ReduceProd", Reduce);
NINEGRID_REGISTER_OP("ReduceL1", Reduce);
NINEGRID_REGISTER_OP("ReduceL2", Reduce);
NINEGRID_REGISTER_OP("ReduceSumSquare", Reduce);
NINEGRID_REGISTER_OP("ReduceLogSum", Reduce);
NINEGRID_REGISTER_OP("ReduceLogSumExp", Reduce);

}  // namespace
}  // namespace ninegrid
