// Shape and Size: facts about the input's shape, never its contents. Both declare value_from_shapes(), so
// the planner computes their outputs at plan time even when the input is a run-time tensor, and the shape
// arithmetic exported graphs build on them (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) folds away.
#include <algorithm>
#include <cstring>

#include "ops/data_movement.h"

namespace ninegrid {
namespace {

class ShapeOp final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    const int64_t rank = static_cast<int64_t>(in[0].shape.size());
    // Opset 15's start/end select a range of dimensions; out-of-range values clamp to [0, rank].
    int64_t start = node_.attrs.get_int("start", 0);
    int64_t end = node_.attrs.get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max(start, int64_t(0)), rank);
    end = std::min(std::max(end, int64_t(0)), rank);
    dims_.assign(in[0].shape.begin() + start, in[0].shape.begin() + std::max(start, end));
    out[0].dtype = DataType::Int64;
    out[0].shape = {static_cast<int64_t>(dims_.size())};
  }

  // Writes the dimensions recorded by infer(): the input's data is never read (at plan time there is none).
  void run(OpContext& ctx) override {
    if (!dims_.empty()) std::memcpy(ctx.output(0).data(), dims_.data(), dims_.size() * sizeof(int64_t));
  }

  bool value_from_shapes() const override { return true; }

 private:
  std::vector<int64_t> dims_;
};

class Size final : public Op {
 public:
  using Op::Op;

  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    expect_inputs(in, 1, 1);
    numel_ = checked_numel(*this, in[0].shape, "input shape");
    out[0].dtype = DataType::Int64;
    out[0].shape = {};
  }

  void run(OpContext& ctx) override { std::memcpy(ctx.output(0).data(), &numel_, sizeof numel_); }

  bool value_from_shapes() const override { return true; }

 private:
  int64_t numel_ = 0;
};

NINEGRID_REGISTER_OP("Shape", ShapeOp);
NINEGRID_REGISTER_OP("Size", Size);

}  // namespace
}  // namespace ninegrid
