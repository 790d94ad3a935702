// Clip (opset 11+ form): y = min(max(x, lo), hi) with lo and hi optional scalar inputs of x's type
// (omitted: the type's lowest / highest value). The ONNX importer turns Clip-6's min/max attributes into
// inputs; attributes are still honoured here when no input is given, for graphs built by other means.
// Like ONNX Runtime, lo > hi gives hi.
#include <algorithm>
#include <limits>

#include "kernels/ref/elementwise_loops.h"
#include "kernels/ref/scalar_math.h"
#include "ops/elementwise_common.h"

namespace ninegrid {
namespace {

class Clip final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 3);
    require_dtype(*this, NumericTypes(), in[0].dtype, "input");
    for (size_t i = 1; i < in.size(); ++i) {
      if (!in[i].present) continue;
      const char* what = i == 1 ? "min" : "max";
      if (in[i].dtype != in[0].dtype)
        error(std::string(what) + " must have the input's type " + dtype_name(in[0].dtype) + ", got " +
              dtype_name(in[i].dtype));
      if (shape_numel(in[i].shape) != 1)
        error(std::string(what) + " must be a scalar, got shape " + shape_str(in[i].shape));
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    visit_dtype(NumericTypes(), x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (ctx.has_input(1)) lo = ctx.input(1).data_as<T>()[0];
      else if (node_.attrs.has("min")) lo = ref::saturate_cast<T>(node_.attrs.get_float("min", 0.f));
      if (ctx.has_input(2)) hi = ctx.input(2).data_as<T>()[0];
      else if (node_.attrs.has("max")) hi = ref::saturate_cast<T>(node_.attrs.get_float("max", 0.f));
      const T* xp = x.data_as<T>();
      T* yp = ctx.output(0).data_as<T>();
      parallel_range(ctx.pool, x.numel(), x.numel(), [&](int64_t b, int64_t e) {
        ref::map_run(xp + b, yp + b, e - b, [=](T v) { return std::min(std::max(v, lo), hi); });
      });
    });
  }
};

NINEGRID_REGISTER_OP("Clip", Clip);

}  // namespace
}  // namespace ninegrid
