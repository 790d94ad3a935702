// Slice (opset 10+ input form; the importer rewrites opset 1's attributes into inputs): takes
// starts/ends/axes/steps, all known at plan time, and copies the selected strided view. Negative steps
// walk backwards; out-of-range starts and ends are clamped as the ONNX spec says.
// With ng.in_block = ng.out_block = B > 1 (set by the layout pass) input and output are channel-blocked
// NCHW[B]c float32, uint8 or int8 tensors, sliced on height and width only.
#include <limits>

#include "kernels/ref/spatial_blocked_ref.h"
#include "ops/blocked_layout.h"
#include "ops/data_movement.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Slice final : public Op {
 public:
  explicit Slice(const Node& node) : Op(node) { block_ = read_spatial_block(*this); }

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 3, 5);
    expect_sized(*this, in[0], "input");
    expect_blockable_float_or_int8(*this, block_, in[0]);
    const Shape& shape = in[0].shape;
    const int rank = static_cast<int>(shape.size());
    const std::vector<int64_t> starts = known_ints(in, 1, "input 'starts'");
    const std::vector<int64_t> ends = known_ints(in, 2, "input 'ends'");
    if (starts.size() != ends.size())
      error("'starts' has " + std::to_string(starts.size()) + " values but 'ends' has " + std::to_string(ends.size()));
    std::vector<int64_t> axes_given;
    if (in.size() > 3 && in[3].present) {
      axes_given = known_ints(in, 3, "input 'axes'");
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes_given.push_back(static_cast<int64_t>(i));
    }
    if (axes_given.size() != starts.size())
      error("'axes' has " + std::to_string(axes_given.size()) + " values but 'starts' has " +
            std::to_string(starts.size()));
    std::vector<int64_t> steps(starts.size(), 1);
    if (in.size() > 4 && in[4].present) {
      steps = known_ints(in, 4, "input 'steps'");
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
    if (block_ > 1)
      for (int a = 0; a < 2; ++a)
        if (out_shape[a] != shape[a] || (shape[a] > 1 && (first_[a] != 0 || step_[a] != 1)))
          error("the channel-blocked layout (ng.in_block " + std::to_string(block_) +
                ") slices height and width only, but this slice changes the batch or channel axis of " +
                shape_str(shape));
    out[0].dtype = in[0].dtype;
    out[0].shape = out_shape;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    if (block_ > 1) {
      run_blocked(ctx);
      return;
    }
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

  // Whole pixels (B lanes each) gathered from the selected rows and columns of every block plane.
  void run_blocked(OpContext& ctx) const {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    std::vector<int64_t> rows(static_cast<size_t>(y.dim(2))), cols(static_cast<size_t>(y.dim(3)));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = first_[2] + static_cast<int64_t>(i) * step_[2];
    for (size_t i = 0; i < cols.size(); ++i) cols[i] = first_[3] + static_cast<int64_t>(i) * step_[3];
    const int64_t out_rows = y.dim(0) * (y.dim(1) / block_) * y.dim(2);
    const bool bytes = x.dtype() != DataType::Float32;  // uint8 or int8 (expect_blockable_float_or_int8)
    auto fn = [&](int64_t b, int64_t e) {
      if (bytes)
        gather_pixels_blocked_ref(x.dim(2), x.dim(3), rows.data(), y.dim(2), cols.data(), y.dim(3), block_,
                                  uint8_t(0), static_cast<const uint8_t*>(x.data()), static_cast<uint8_t*>(y.data()),
                                  b, e);
      else
        gather_pixels_blocked_ref(x.dim(2), x.dim(3), rows.data(), y.dim(2), cols.data(), y.dim(3), block_, 0.f,
                                  x.data_as<float>(), y.data_as<float>(), b, e);
    };
    if (ctx.pool) ctx.pool->parallel_for(out_rows, fn);
    else fn(0, out_rows);
  }

  int64_t block_ = 1;  // channel block of input and output (1 = plain NCHW)

  std::vector<int64_t> first_;  // per input dimension: index of the first element taken
  std::vector<int64_t> step_;    // per input dimension: step between taken elements
};

NINEGRID_REGISTER_OP("Slice", Slice);

}  // namespace
}  // namespace ninegrid
