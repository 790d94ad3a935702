// Reshape: same bytes, new shape. The planner aliases the output to the input, so run() copies only when
// it could not. In the target shape 0 copies the input's dimension (unless allowzero=1, when it means a
// real 0) and one -1 is inferred from the element count.
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class Reshape final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 2);
    expect_sized(*this, in[0], "input");
    std::vector<int64_t> target;
    if (in.size() > 1 && in[1].present) {
      target = known_ints(in, 1, "input 'shape'");
    } else if (node_.attrs.has("shape")) {  // Reshape-1's attribute form
      target = node_.attrs.get_ints("shape");
    } else {
      error("needs a 'shape' input");
    }
    const bool allow_zero = node_.attrs.get_int("allowzero", 0) != 0;
    const Shape& shape = in[0].shape;
    const int64_t numel = checked_numel(*this, shape, "input shape");

    Shape result(target.size());
    int infer_at = -1;
    int64_t known = 1;  // product of the dimensions other than the -1
    bool has_zero = false;
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t d = target[i];
      if (d == -1) {
        if (infer_at >= 0) error("the target shape has more than one -1: " + list(target));
        infer_at = static_cast<int>(i);
        continue;
      }
      if (d < -1) error("the target shape has a negative dimension: " + list(target));
      if (d == 0 && !allow_zero) {
        if (i >= shape.size())
          error("the target shape's 0 at position " + std::to_string(i) + " copies a dimension the input (" +
                shape_str(shape) + ") does not have");
        d = shape[i];
      }
      if (d == 0) has_zero = true;
      result[i] = d;
      known = has_zero ? 0 : checked_mul(*this, known, d, "the target shape's element count");
    }
    if (infer_at >= 0) {
      if (has_zero)
        error("cannot infer the -1 in target shape " + list(target) + ": the other dimensions multiply to 0");
      if (numel % known != 0)
        error("cannot reshape " + shape_str(shape) + " (" + std::to_string(numel) + " elements) to " + list(target));
      result[infer_at] = numel / known;
    } else if (known != numel) {
      error("cannot reshape " + shape_str(shape) + " (" + std::to_string(numel) + " elements) to " + list(target) +
            " (" + std::to_string(known) + " elements)");
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = result;
  }

  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.data() != x.data() && x.nbytes()) std::memcpy(y.data(), x.data(), x.nbytes());
  }

  int aliases_input(int out_index) const override { return out_index == 0 ? 0 : -1; }

 private:
  static std::string list(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  }
};

NINEGRID_REGISTER_OP("Reshape", Reshape);

}  // namespace
}  // namespace ninegrid
