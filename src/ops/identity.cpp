// Identity and Dropout (inference mode): the output is the input. The planner aliases the buffers, so
// run() copies only when it could not (e.g. a graph input that is also a graph output).
#include <cstring>

#include "ops/op.h"

namespace ninegrid {
namespace {

class Identity final : public Op {
 public:
  using Op::Op;
  void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) override {
    // Dropout may have a ratio and training_mode input (opset 12+); inference ignores them.
    expect_inputs(in, 1, node_.op_type == "Dropout" ? 3 : 1);
    // Training mode drops values at random: not an inference computation. Only a constant false is fine.
    if (node_.op_type == "Dropout" && in.size() > 2 && in[2].present) {
      if (!in[2].value) contents_needed(2, "training_mode (inference needs it false)");
      if (in[2].value->numel() != 1 || in[2].value->dtype() != DataType::Bool)
        error("training_mode must be one bool");
      if (static_cast<const uint8_t*>(in[2].value->data())[0] != 0) error("unsupported: Dropout in training mode");
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    if (out.size() > 1) {  // Dropout's optional mask: all true in inference
      out[1].dtype = DataType::Bool;
      out[1].shape = in[0].shape;
    }
  }
  void run(OpContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.data() != x.data()) std::memcpy(y.data(), x.data(), x.nbytes());
    if (ctx.outputs.size() > 1 && ctx.outputs[1]) std::memset(ctx.outputs[1]->data(), 1, ctx.outputs[1]->nbytes());
  }
  int aliases_input(int out_index) const override { return out_index == 0 ? 0 : -1; }
};

NINEGRID_REGISTER_OP("Identity", Identity);
NINEGRID_REGISTER_OP("Dropout", Identity);

}  // namespace
}  // namespace ninegrid
