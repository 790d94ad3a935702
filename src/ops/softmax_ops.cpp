// Softmax, LogSoftmax and Hardmax (float32). Opset 13 and later normalise along one axis (default -1);
// earlier opsets flatten the input to 2-D at `axis` (default 1) and normalise each row of that matrix.
// The loops are softmax_f32_fast: vector kernels along a strided axis, the reference otherwise.
#include <algorithm>

#include "kernels/ref/softmax.h"
#include "kernels/softmax_fast.h"
#include "ops/elementwise_common.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Softmax final : public Op {
 public:
  explicit Softmax(const Node& node) : Op(node) {
    if (node.op_type == "LogSoftmax") kind_ = ref::SoftmaxKind::LogSoftmax;
    else if (node.op_type == "Hardmax") kind_ = ref::SoftmaxKind::Hardmax;
    legacy_ = node.opset > 0 && node.opset < 13;
    axis_attr_ = node_.attrs.get_int("axis", legacy_ ? 1 : -1);
  }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    require_dtype(*this, TypeList<float>(), in[0].dtype, "input");
    geometry(in[0].shape);  // validates rank and axis
    isa_ = Isa::Ref;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
  }

  void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) override {
    isa_ = softmax_f32_isa(kind_, geometry(in[0].shape).inner, settings.isa);
  }

  void run(OpContext& ctx) override {
    const float* x = ctx.input(0).data_as<float>();
    float* y = ctx.output(0).data_as<float>();
    if (ctx.input(0).numel() == 0) return;
    const Geometry g = geometry(ctx.input(0).shape());
    const Isa isa = isa_;
    const int threads = ctx.pool ? ctx.pool->size() : 1;
    constexpr int64_t kColumns = 1024;  // columns per task when slices are split
    if (threads > 1 && g.outer < threads && g.inner >= 2 * kColumns) {
      // Fewer slices than threads (detection heads: one image, softmax over 2 classes per anchor):
      // split each slice's columns instead.
      const int64_t pieces = (g.inner + kColumns - 1) / kColumns;
      ctx.pool->parallel_for(g.outer * pieces, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / pieces, c0 = t % pieces * kColumns;
          softmax_f32_columns_fast(isa, kind_, x, y, g.axis, g.inner, o, c0, std::min(g.inner, c0 + kColumns));
        }
      });
      return;
    }
    parallel_range(ctx.pool, g.outer, ctx.input(0).numel(), [&](int64_t b, int64_t e) {
      softmax_f32_fast(isa, kind_, x, y, g.axis, g.inner, b, e);
    });
  }

  std::string algorithm() const override { return isa_ == Isa::Ref ? std::string() : isa_name(isa_); }

 private:
  ref::SoftmaxKind kind_ = ref::SoftmaxKind::Softmax;
  Isa isa_ = Isa::Ref;  // the kernels' instruction set for the last inferred shape (for algorithm())
  bool legacy_ = false;
  int64_t axis_attr_ = -1;

  // The input as (outer, axis, inner).
  struct Geometry {
    int64_t outer = 1, axis = 1, inner = 1;
  };
  Geometry geometry(const Shape& s) const {
    const int rank = static_cast<int>(s.size());
    if (rank == 0) error("input must have at least one dimension");
    const int axis = normalize_axis(axis_attr_, rank);
    Geometry g;
    for (int d = 0; d < rank; ++d) {
      if (d < axis) g.outer *= s[d];
      else if (d == axis || legacy_) g.axis *= s[d];  // legacy: everything from `axis` on is one row
      else g.inner *= s[d];
    }
    return g;
  }
};

NINEGRID_REGISTER_OP("Softmax", Softmax);
NINEGRID_REGISTER_OP("LogSoftmax", Softmax);
NINEGRID_REGISTER_OP("Hardmax", Softmax);

}  // namespace
}  // namespace ninegrid
