// Epilogue fusion (Raspberry Pi paper §1, DESIGN.md technique 1): a Conv writes
//   y = activation(conv(x) + bias + residual)
// in one pass, so the standalone activation and the residual Add, each a full memory pass, disappear.
//
// The Conv node records the fusion as ops/fused_activation.h describes: attribute "ng.activation" (and
// "ng.activation_params"), input 3 the residual, input 4 the PRelu slopes. A ConvTranspose takes a fused
// activation the same way (input 4 for PRelu's slopes), but no residual and no fusion through Concat.
// After a Conv's activation, a Mul and an Add by scalars fuse too ("ng.affine_after"): PP-OCRv4's
// backbone follows every conv's HardSwish with one of each, two more memory passes each time.
#include <cmath>
#include <limits>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

namespace {

bool has_epilogue(const Node& conv) {
  return fused::has_activation(conv) || fused::has_residual(conv);
}

// A scalar float constant's value, if the value is one.
bool scalar_constant(const Graph& g, int v, float& out) {
  if (v < 0 || !g.values[v].is_constant()) return false;
  const Tensor& t = g.values[v].constant;
  if (t.dtype() != DataType::Float32 || t.numel() != 1) return false;
  out = t.data_as<float>()[0];
  return true;
}

// Translates an activation node into the fused attribute form. False if it cannot be fused.
bool activation_attrs(const Graph& g, const Node& act, int64_t channels, std::string& name, std::vector<float>& params,
                      int& slope) {
  const std::string& op = act.op_type;
  params.clear();
  slope = -1;
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish") {
    name = op;
    return true;
  }
  // Fused SiLU pays only because the vector sigmoid makes no subnormals (vector_math_impl.h); see
  // bench/REPORT.md, "Design decisions and their measurements".
  if (op == "ng.Silu") {
    name = "Silu";
    return true;
  }
  if (op == "LeakyRelu") {
    name = op;
    params = {act.attrs.get_float("alpha", 0.01f)};
    return true;
  }
  if (op == "HardSigmoid") {
    name = op;
    params = {act.attrs.get_float("alpha", 0.2f), act.attrs.get_float("beta", 0.5f)};
    return true;
  }
  if (op == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (act.inputs.size() > 1 && act.inputs[1] >= 0 && !scalar_constant(g, act.inputs[1], lo)) return false;
    if (act.inputs.size() > 2 && act.inputs[2] >= 0 && !scalar_constant(g, act.inputs[2], hi)) return false;
    name = op;
    params = {lo, hi};
    return true;
  }
  if (op == "PRelu") {
    // Slopes must be constant and vary at most along the channel axis: [C], [C,1,1], [1,C,1,1] or one value.
    if (act.inputs.size() < 2 || act.inputs[1] < 0 || !g.values[act.inputs[1]].is_constant()) return false;
    const Tensor& s = g.values[act.inputs[1]].constant;
    if (s.dtype() != DataType::Float32) return false;
    if (s.numel() != 1) {
      int non_unit = 0;
      for (int d = 0; d < s.rank(); ++d)
        if (s.dim(d) != 1) non_unit++;
      if (non_unit != 1 || s.numel() != channels) return false;
      // [C] alone broadcasts along the last axis in numpy, not channels: only accept it for rank-1 data.
      if (s.rank() == 1) return false;
      // Channel must be the axis (right-aligned against [N, C, H, W]) that holds C.
      int axis_of_c = -1;
      for (int d = 0; d < s.rank(); ++d)
        if (s.dim(d) == channels) axis_of_c = d;
      if (s.rank() == 3 && axis_of_c != 0) return false;
      if (s.rank() == 4 && axis_of_c != 1) return false;
      if (s.rank() != 3 && s.rank() != 4) return false;
    }
    name = op;
    slope = act.inputs[1];
    return true;
  }
  return false;
}

// The output channels of a Conv or ConvTranspose with constant weights, or -1 when unknown.
int64_t conv_output_channels(const Graph& g, const Node& conv) {
  const Tensor* w = constant_input(g, conv, 1);
  if (!w || w->rank() < 2) return -1;
  if (conv.op_type == "Conv") return w->dim(0);
  // ConvTranspose: W is [in, out / group, kernel...]; an attribute of the wrong kind is the op's to report.
  try {
    return w->dim(1) * conv.attrs.get_int("group", 1);
  } catch (const Error&) {
    return -1;
  }
}

// Records a fused activation on the conv (the attribute form of ops/fused_activation.h).
void set_fused_activation(Node& conv, const std::string& name, const std::vector<float>& params) {
  conv.attrs.set(fused::kActivation, Attribute::of_string(name));
  if (!params.empty()) conv.attrs.set(fused::kActivationParams, Attribute::of_floats(params));
}

}  // namespace

int fuse_residual_add(Graph& g) {
  if (!ensure_shapes(g)) return 0;  // needs both operands' shapes to prove there is no broadcasting
  int fused = 0;
  bool reorder = false;
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<int> prod = g.producers();
  Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& add = g.nodes[n];
    if (add.op_type != "Add" || add.inputs.size() != 2 || add.inputs[0] < 0 || add.inputs[1] < 0) continue;
    const Value& a = g.values[add.inputs[0]];
    const Value& b = g.values[add.inputs[1]];
    if (!a.shape_known || !b.shape_known || a.shape != b.shape || a.dtype != DataType::Float32 ||
        b.dtype != DataType::Float32)
      continue;
    // Of the operands that a fusable Conv produces, take the one computed last, so the other operand is
    // ready before it runs.
    int best = -1;
    for (int side = 0; side < 2; ++side) {
      int v = add.inputs[side];
      int p = prod[v];
      if (p < 0 || dead[p] || g.nodes[p].op_type != "Conv" || has_epilogue(g.nodes[p]) || uses.count(v) != 1) continue;
      if (add.inputs[0] == add.inputs[1]) continue;
      if (best < 0 || p > prod[add.inputs[best]]) best = side;
    }
    if (best < 0) continue;
    int conv_out = add.inputs[best], other = add.inputs[1 - best];
    Node& conv = g.nodes[prod[conv_out]];
    // When the other operand is computed after the conv (FPN: conv, then upsample the coarser level, then
    // add), the conv moves after it: its inputs come earlier still, and its only reader was the Add.
    if (other >= 0 && prod[other] > prod[conv_out]) reorder = true;
    if (conv.inputs.size() <= fused::kResidualInput) conv.inputs.resize(fused::kResidualInput + 1, -1);
    conv.inputs[fused::kResidualInput] = other;
    for (int& o : conv.outputs)
      if (o == conv_out) o = add.outputs[0];
    dead[n] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  if (reorder) g.topo_sort();
  return fused;
}

int fuse_activation(Graph& g) {
  int fused = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<int> prod = g.producers();
  Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& act = g.nodes[n];
    if (act.inputs.empty() || act.inputs[0] < 0 || act.outputs.empty() || act.outputs[0] < 0) continue;
    int x = act.inputs[0];
    int p = prod[x];
    if (p < 0 || dead[p] || (g.nodes[p].op_type != "Conv" && g.nodes[p].op_type != "ConvTranspose") ||
        g.nodes[p].attrs.has(fused::kActivation) || uses.count(x) != 1)
      continue;
    Node& conv = g.nodes[p];
    const int64_t channels = conv_output_channels(g, conv);
    std::string name;
    std::vector<float> params;
    int slope = -1;
    if (!activation_attrs(g, act, channels, name, params, slope)) continue;
    set_fused_activation(conv, name, params);
    if (slope >= 0) {
      if (conv.inputs.size() <= fused::kSlopeInput) conv.inputs.resize(fused::kSlopeInput + 1, -1);
      conv.inputs[fused::kSlopeInput] = slope;
    }
    for (int& o : conv.outputs)
      if (o == x) o = act.outputs[0];
    dead[n] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fuse_activation_through_concat(Graph& g) {
  int fused = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<int> prod = g.producers();
  Uses uses = find_uses(g);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& act = g.nodes[n];
    // Element-wise activations only: PRelu's per-channel slopes would have to be split among the convs.
    if (act.op_type == "PRelu" || act.inputs.empty() || act.inputs[0] < 0 || act.outputs.empty() ||
        act.outputs[0] < 0)
      continue;
    const int cat_out = act.inputs[0];
    const int c = prod[cat_out];
    if (c < 0 || dead[c] || g.nodes[c].op_type != "Concat" || uses.count(cat_out) != 1) continue;
    std::string name;
    std::vector<float> params;
    int slope = -1;
    if (!activation_attrs(g, act, -1, name, params, slope) || slope >= 0) continue;
    // act(concat(a, b, ...)) = concat(act(a), act(b), ...): every part must come from a conv without an
    // epilogue activation whose output nothing else reads.
    const Node& cat = g.nodes[c];
    bool all_convs = !cat.inputs.empty();
    for (size_t i = 0; i < cat.inputs.size() && all_convs; ++i) {
      const int v = cat.inputs[i];
      const int p = v >= 0 ? prod[v] : -1;
      all_convs = p >= 0 && !dead[p] && g.nodes[p].op_type == "Conv" && !g.nodes[p].attrs.has(fused::kActivation) &&
                  uses.count(v) == 1;
      for (size_t j = 0; j < i && all_convs; ++j) all_convs = cat.inputs[j] != v;
    }
    if (!all_convs) continue;
    for (int v : cat.inputs) set_fused_activation(g.nodes[prod[v]], name, params);
    for (int& o : g.nodes[c].outputs)
      if (o == cat_out) o = act.outputs[0];
    dead[n] = 1;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fuse_affine_after_activation(Graph& g) {
  int fused = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<int> prod = g.producers();
  Uses uses = find_uses(g);
  // The scalar a Mul or Add (node n) applies to value x, when its other operand is a float constant with
  // one element and no more dimensions than `rank` (so the result keeps x's shape).
  auto scalar_operand = [&](const Node& op, int x, size_t rank, float& value) {
    if (op.inputs.size() != 2 || op.outputs.size() != 1 || op.outputs[0] < 0) return false;
    const int other = op.inputs[0] == x ? op.inputs[1] : op.inputs[1] == x ? op.inputs[0] : -1;
    if (other < 0 || other == x || !scalar_constant(g, other, value)) return false;
    return static_cast<size_t>(g.values[other].constant.rank()) <= rank;
  };
  // The single reader of value v, if it is a live node of type `op_type`; -1 otherwise.
  auto only_reader = [&](int v, const char* op_type) {
    if (uses.count(v) != 1 || uses.readers[v].empty()) return -1;
    const int r = uses.readers[v][0].first;
    return r >= 0 && !dead[r] && g.nodes[r].op_type == op_type ? r : -1;
  };
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& conv = g.nodes[n];
    if (conv.op_type != "Conv" || !fused::has_activation(conv) || conv.attrs.has(fused::kAffineAfter) ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0)
      continue;
    const Tensor* w = constant_input(g, conv, 1);
    const size_t rank = w ? static_cast<size_t>(w->rank()) : 0;
    int y = conv.outputs[0];
    float scale = 1.f, shift = 0.f;
    bool any = false;
    const int mul = only_reader(y, "Mul");
    if (mul >= 0 && scalar_operand(g.nodes[mul], y, rank, scale)) {
      dead[mul] = 1, any = true;
      y = g.nodes[mul].outputs[0];
    }
    const int add = only_reader(y, "Add");
    if (add >= 0 && scalar_operand(g.nodes[add], y, rank, shift)) {
      dead[add] = 1, any = true;
      y = g.nodes[add].outputs[0];
    }
    if (!any) continue;
    conv.attrs.set(fused::kAffineAfter, Attribute::of_floats({scale, shift}));
    conv.outputs[0] = y;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

}  // namespace ninegrid
