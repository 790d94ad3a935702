// Slice (opset 10+ input form; the importer rewrites opset 1's attributes into inputs): takes
// starts/ends/axes/steps, all known at plan time, and copies the selected strided view. Negative steps
// walk backwards; out-of-range starts and ends are clamped as the ONNX spec says.
#include <limits>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Slice final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 3, 5);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    const int rank = static_cast<int>(shape.size());
    const std::vector<int64_t> starts = known_ints(in[1], "input 'starts'");
    const std::vector<int64_t> ends = known_ints(in[2], "input 'ends'");
    if (starts.size() != ends.size())
      error("'starts' has " + std::to_string(starts.size()) + " values but 'ends' has " + std::to_string(ends.size()));
    std::vector<int64_t> axes_given;
    if (in.size() > 3 && in[3].present) {
      axes_given = known_ints(in[3], "input 'axes'");
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes_given.push_back(static_cast<int64_t>(i));
    }
    if (axes_given.size() != starts.size())
      error("'axes' has " + std::to_string(axes_given.size()) + " values but 'starts' has " +
            std::to_string(starts.size()));
    std::vector<int64_t> steps(starts.size(), 1);
    if (in.size() > 4 && in[4].present) {
      steps = known_ints(in[4], "input 'steps'");
      if (steps.size() != starts.size())
        error("'steps' has " + std::to_string(steps.size()) + " values but 'starts' has " +
              std::to_string(starts.size()));
    }
    const std::vector<int> axes = normalize_axes(*this, axes_given, rank);

    // Every axis not named is taken whole.
    first_.assign(static_cast<size_t>(rank), 0);
    step_.assign(static_cast<size_t>(rank), 1);
    Shape out_shape = shape;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int a = axes[i];
      const int64_t dim = shape[a];
      int64_t step = steps[i];
      if (step == 0) error("'steps' must not be 0 (axis " + std::to_string(a) + ")");
      // Any step beyond the dimension selects the same single element; capping it keeps the arithmetic
      // below (negation, products with strides) from overflowing.
      if (step > dim) step = dim > 0 ? dim : 1;
      if (step < -dim) step = dim > 0 ? -dim : -1;
      int64_t start = starts[i], end = ends[i];
      if (start < 0) start += dim;  // cannot overflow: dim >= 0
      if (end < 0) end += dim;
      int64_t len;
      if (dim == 0) {
        start = 0;
        len = 0;
      } else if (step > 0) {
        start = clamp(start, 0, dim);
        end = clamp(end, 0, dim);
        len = end > start ? (end - start - 1) / step + 1 : 0;
      } else {
        start = clamp(start, 0, dim - 1);
        end = clamp(end, -1, dim - 1);
        len = start > end ? (start - end - 1) / -step + 1 : 0;
      }
      first_[a] = start;
      step_[a] = step;
      out_shape[a] = len;
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = out_shape;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const std::vector<int64_t> dense = dense_strides(x.shape());
    std::vector<int64_t> strides(dense.size());
    int64_t offset = 0;
    for (size_t d = 0; d < dense.size(); ++d) {
      offset += first_[d] * dense[d];
      strides[d] = step_[d] * dense[d];
    }
    const size_t elem = dtype_size(x.dtype());
    parallel_copy_strided(ctx.pool, y.data(), static_cast<const uint8_t*>(x.data()) + offset * static_cast<int64_t>(elem),
                          elem, y.shape(), strides);
  }

 private:
  static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

  std::vector<int64_t> first_;  // per input dimension: index of the first element taken
  std::vector<int64_t> step_;    // per input dimension: step between taken elements
};

NINEGRID_REGISTER_OP("Slice", Slice);

}  // namespace
}  // namespace ninegrid
