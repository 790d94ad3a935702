// Mul and Add by a per-channel (or scalar) constant right after a Conv (or ConvTranspose) become part of its weights and
// bias: Mul(conv(x), c) = conv'(x) with w'[o] = w[o] * c[o], b'[o] = b[o] * c[o]; Add(conv(x), c) adds
// c[o] to the bias. Common in exported graphs (affine layers, BN exported as Mul+Add, PP-OCR's scales).
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

bool fold_scale_shift_into_layer(Graph& g, Node& layer, const std::vector<float>& scale, const std::vector<float>& shift);

namespace {

// Expands a constant to one value per channel if it broadcasts against [N, C, spatial...] (rank
// `out_rank`) only along the channel axis (or is a scalar). False otherwise.
bool per_channel_values(const Tensor& c, int out_rank, int64_t channels, std::vector<float>& values) {
  if (c.dtype() != DataType::Float32 || c.rank() > out_rank) return false;
  const int offset = out_rank - c.rank();  // numpy broadcasting aligns to the right
  for (int d = 0; d < c.rank(); ++d) {
    const int axis = d + offset;
    if (c.dim(d) != 1 && !(axis == 1 && c.dim(d) == channels)) return false;
  }
  values.resize(channels);
  const float* p = c.data_as<float>();
  for (int64_t i = 0; i < channels; ++i) values[i] = c.numel() == 1 ? p[0] : p[i];
  return true;
}

}  // namespace

int fold_channel_affine(Graph& g) {
  int folded = 0;
  bool changed = true;
  while (changed) {  // Mul then Add (or chains) fold one at a time
    changed = false;
    std::vector<int> prod = g.producers();
    Uses uses = find_uses(g);
    for (size_t n = 0; n < g.nodes.size() && !changed; ++n) {
      Node& op = g.nodes[n];
      if ((op.op_type != "Mul" && op.op_type != "Add") || op.inputs.size() != 2) continue;
      for (int side = 0; side < 2 && !changed; ++side) {
        int x = op.inputs[side], k = op.inputs[1 - side];
        if (x < 0 || k < 0 || prod[x] < 0 || !g.values[k].is_constant()) continue;
        Node& conv = g.nodes[prod[x]];
        const bool transposed = conv.op_type == "ConvTranspose";
        if ((conv.op_type != "Conv" && !transposed) || conv.attrs.has(fused::kActivation) ||
            fused::has_residual(conv) || uses.count(x) != 1)
          continue;
        const Tensor* w = constant_input(g, conv, 1);
        if (!w || w->rank() < 3) continue;
        // Output channels: W is [out, in/group, k...] for Conv, [in, out/group, k...] for ConvTranspose.
        const int64_t channels = transposed ? w->dim(1) * conv.attrs.get_int("group", 1) : w->dim(0);
        std::vector<float> values;
        if (!per_channel_values(g.values[k].constant, w->rank(), channels, values)) continue;
        std::vector<float> scale(values.size(), 1.f), shift(values.size(), 0.f);
        if (op.op_type == "Mul") scale = values;
        else shift = values;
        if (!fold_scale_shift_into_layer(g, conv, scale, shift)) continue;
        for (int& o : conv.outputs)
          if (o == x) o = op.outputs[0];
        std::vector<char> dead(g.nodes.size(), 0);
        dead[n] = 1;
        erase_nodes(g, dead);
        ++folded;
        changed = true;
      }
    }
  }
  if (folded) release_unused_constants(g);
  return folded;
}

}  // namespace ninegrid
