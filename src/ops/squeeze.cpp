// Squeeze and Unsqueeze: remove or insert size-1 dimensions. Same bytes, new shape; the planner aliases
// the output to the input. The axes come from the second input (opset 13+; the importer rewrites the
// older attribute into it, and the attribute is still accepted here).
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class SqueezeBase : public Op {
 public:
  using Op::Op;

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.data() != x.data() && x.nbytes()) std::memcpy(y.data(), x.data(), x.nbytes());
  }
  int aliases_input(int out_index) const override { return out_index == 0 ? 0 : -1; }

 protected:
  // The axes from input 1 or the 'axes' attribute; `given` is false when neither is there.
  std::vector<int64_t> read_axes(const std::vector<TensorDesc>& in, bool& given) const {
    given = true;
    if (in.size() > 1 && in[1].present) return known_ints(in, 1, "input 'axes'");
    if (node_.attrs.has("axes")) return node_.attrs.get_ints("axes");
    given = false;
    return {};
  }
};

class Squeeze final : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 2);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    const int rank = static_cast<int>(shape.size());
    bool given = false;
    const std::vector<int64_t> axes = read_axes(in, given);
    std::vector<char> drop(static_cast<size_t>(rank), 0);
    if (given) {
      for (int a : normalize_axes(*this, axes, rank)) {
        if (shape[a] != 1)
          error("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_str(shape) + ": its size is not 1");
        drop[a] = 1;
      }
    } else {
      for (int d = 0; d < rank; ++d) drop[d] = shape[d] == 1;  // no axes: every size-1 dimension goes
    }
    out[0].dtype = in[0].dtype;
    out[0].shape.clear();
    for (int d = 0; d < rank; ++d)
      if (!drop[d]) out[0].shape.push_back(shape[d]);
  }
};

class Unsqueeze final : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 2);
    expect_sized(*this, in[0], "input");
    const Shape& shape = in[0].shape;
    bool given = false;
    const std::vector<int64_t> axes = read_axes(in, given);
    if (!given) error("needs 'axes' (an input from opset 13, an attribute before)");
    // Axes index the output, whose rank counts the new dimensions.
    const int out_rank = static_cast<int>(shape.size() + axes.size());
    std::vector<char> inserted(static_cast<size_t>(out_rank), 0);
    for (int a : normalize_axes(*this, axes, out_rank)) inserted[a] = 1;
    out[0].dtype = in[0].dtype;
    out[0].shape.clear();
    size_t next = 0;
    for (int d = 0; d < out_rank; ++d) out[0].shape.push_back(inserted[d] ? 1 : shape[next++]);
  }
};

NINEGRID_REGISTER_OP("Squeeze", Squeeze);
NINEGRID_REGISTER_OP("Unsqueeze", Unsqueeze);

}  // namespace
}  // namespace ninegrid
