// Split: cuts a tensor into pieces along an axis. The sizes come from the optional 'split' input (opset
// 13+; the importer turns the older attribute into this input), or the axis is divided equally between
// the outputs (opset 18's num_outputs allows a smaller last piece). With one row (one image along the
// channels) each output is a span of the input's bytes, which the planner may make it a view of.
#include "kernels/ref/copy_strided.h"
#include "ops/data_movement.h"
#include "core/thread_pool.h"

namespace ninegrid {
namespace {

class Split final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 2);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    const int rank = static_cast<int>(shape.size());
    if (rank == 0) error("cannot split a scalar");
    axis_ = normalize_axis(node_.attrs.get_int("axis", 0), rank);
    const int64_t dim = shape[axis_];
    const int64_t n = static_cast<int64_t>(out.size());
    if (n == 0) error("has no outputs");

    sizes_.clear();
    // An empty 'split' input means the same as none (some exporters write one).
    if (in.size() > 1 && in[1].present) sizes_ = known_ints(in, 1, "input 'split'");
    if (!sizes_.empty()) {
      // sizes given
    } else if (node_.attrs.has("split")) {  // pre-13 attribute form, should the importer leave one
      sizes_ = node_.attrs.get_ints("split");
    } else if (node_.attrs.has("num_outputs")) {
      const int64_t k = node_.attrs.get_int("num_outputs", 0);
      if (k != n) error("num_outputs is " + std::to_string(k) + " but the node has " + std::to_string(n) + " outputs");
      // Opset 18: pieces of ceil(dim / n), the last one smaller when the axis does not divide evenly.
      const int64_t piece = (dim + n - 1) / n;
      if (piece * (n - 1) > dim)
        error("cannot split axis " + std::to_string(axis_) + " of size " + std::to_string(dim) + " into " +
              std::to_string(n) + " pieces of at most " + std::to_string(piece));
      sizes_.assign(static_cast<size_t>(n), piece);
      sizes_.back() = dim - piece * (n - 1);
    } else {
      if (dim % n != 0)
        error("axis " + std::to_string(axis_) + " of size " + std::to_string(dim) + " does not split into " +
              std::to_string(n) + " equal pieces");
      sizes_.assign(static_cast<size_t>(n), dim / n);
    }
    if (static_cast<int64_t>(sizes_.size()) != n)
      error("'split' has " + std::to_string(sizes_.size()) + " sizes but the node has " + std::to_string(n) +
            " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes_) {
      if (s < 0) error("'split' sizes must not be negative, got " + std::to_string(s));
      if (s > dim - sum)
        error("'split' sizes add up to more than axis " + std::to_string(axis_) + "'s size " + std::to_string(dim));
      sum += s;
    }
    if (sum != dim)
      error("'split' sizes add up to " + std::to_string(sum) + ", but axis " + std::to_string(axis_) + " has size " +
            std::to_string(dim));
    for (size_t o = 0; o < out.size(); ++o) {
      out[o].dtype = in[0].dtype;
      out[o].shape = shape;
      out[o].shape[axis_] = sizes_[o];
    }
  }

  int64_t output_offset_in_input(int out_index, const std::vector<TensorDesc>& in) const override {
    if (in.empty() || out_index < 0 || static_cast<size_t>(out_index) >= sizes_.size()) return -1;
    const Shape& shape = in[0].shape;
    int64_t inner = 1;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
      if (d < axis_ && shape[d] != 1) return -1;
      if (d > axis_) inner *= shape[d];
    }
    int64_t before = 0;
    for (int o = 0; o < out_index; ++o) before += sizes_[o];
    return before * inner * static_cast<int64_t>(dtype_size(in[0].dtype));
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.numel() == 0) return;
    const size_t elem = dtype_size(x.dtype());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= x.dim(d);
    for (int d = axis_ + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const size_t in_row = static_cast<size_t>(x.dim(axis_) * inner) * elem;
    auto copy = [&](int64_t begin, int64_t end) {
      size_t band = 0;
      for (size_t o = 0; o < ctx.outputs.size(); ++o) {
        const size_t out_row = static_cast<size_t>(sizes_[o] * inner) * elem;
        // An output the planner made a view of its span (one row) is already there.
        const bool in_place = ctx.outputs[o] && outer == 1 &&
                              ctx.outputs[o]->data() == static_cast<const uint8_t*>(x.data()) + band;
        if (ctx.outputs[o] && !in_place)
          ref::copy_rows(static_cast<uint8_t*>(ctx.outputs[o]->data()) + begin * out_row, out_row,
                         static_cast<const uint8_t*>(x.data()) + begin * in_row + band, in_row, end - begin, out_row);
        band += out_row;
      }
    };
    if (ctx.pool && outer > 1 && x.nbytes() >= (size_t(256) << 10))
      ctx.pool->parallel_for(outer, copy);
    else
      copy(0, outer);
  }

 private:
  int axis_ = 0;
  std::vector<int64_t> sizes_;
};

NINEGRID_REGISTER_OP("Split", Split);

}  // namespace
}  // namespace ninegrid
