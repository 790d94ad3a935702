// Channel widening: 4-D tensors whose channel count is not a multiple of 8 (BlazeFace's 28, 36 and 42)
// cannot be channel-blocked, so layout planning leaves them plain NCHW, where the conv kernels store
// through transposes and masked stores at a third of their blocked speed. This pass gives such tensors
// zero channels up to the next multiple of 8, as ONNX Runtime's NCHWc layout does, so they can be blocked.
//
// Invariant: a widened tensor holds the original channels in place, then zeros. Every node that touches
// one keeps it:
//   Conv (one group)     zero filters and zero bias for the added output channels; zero weights for the
//                        added input channels, so they add nothing to the real ones;
//   depthwise Conv       (groups = channels in = out) zero filters for the added channels, groups widened;
//   Relu, LeakyRelu      map 0 to 0;
//   MaxPool, AveragePool pool zeros to 0 (padding never enters a max, and an average of zeros is 0);
//   Add                  of two tensors of the same shape, both widened alike: 0 + 0;
//   Concat (channels)    of a tensor and a constant of zeros (TensorFlow's channel padding, "Pad" in
//                        BlazeFace's residual branches): with the tensor widened, its added channels are
//                        already those zeros, so the Concat keeps only the zeros the wider result needs
//                        beyond them, or becomes the tensor itself.
// Tensors that must widen together (an Add's operands and result, an activation's input and output) form
// one group; a group is widened only if every tensor in it is read and written by such nodes alone, never a
// graph input or output, so what users see never changes.
#include <algorithm>
#include <numeric>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"

namespace ninegrid {

namespace {

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

bool is_4d_float_activation(const Value& v) {
  return v.shape_known && v.shape.size() == 4 && v.dtype == DataType::Float32 && !v.is_constant();
}

const Tensor* float_constant(const Graph& g, const Node& n, size_t slot) {
  const Tensor* t = constant_input(g, n, slot);
  return t && t->dtype() == DataType::Float32 ? t : nullptr;
}

// The node kinds the pass can rewrite.
enum class Kind { Other, DenseConv, DepthwiseConv, Elementwise, Pool, Add, ZeroPadConcat };

Kind classify(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] < 0) return Kind::Other;
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0) return Kind::Other;  // MaxPool's indices, for one
  const auto activation = [&](size_t slot) {
    return slot < n.inputs.size() && n.inputs[slot] >= 0 && is_4d_float_activation(g.values[n.inputs[slot]]);
  };
  if (!activation(0) || !is_4d_float_activation(g.values[n.outputs[0]])) return Kind::Other;
  const Shape& x = g.values[n.inputs[0]].shape;
  const Shape& y = g.values[n.outputs[0]].shape;
  if (n.op_type == "Conv") {
    const Tensor* w = float_constant(g, n, 1);
    if (!w || w->rank() != 4 || n.inputs.size() > 3) return Kind::Other;
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* b = float_constant(g, n, 2);
      if (!b || b->numel() != y[1]) return Kind::Other;
    }
    const int64_t group = n.attrs.get_int("group", 1);
    if (group == 1 && w->dim(1) == x[1] && w->dim(0) == y[1]) return Kind::DenseConv;
    if (group == x[1] && group == y[1] && w->dim(0) == group && w->dim(1) == 1) return Kind::DepthwiseConv;
    return Kind::Other;
  }
  if (n.op_type == "Relu" || n.op_type == "LeakyRelu") return n.inputs.size() == 1 ? Kind::Elementwise : Kind::Other;
  if (n.op_type == "MaxPool" || n.op_type == "AveragePool") return x[1] == y[1] ? Kind::Pool : Kind::Other;
  if (n.op_type == "Add")
    return n.inputs.size() == 2 && activation(1) && g.values[n.inputs[1]].shape == y && x == y ? Kind::Add : Kind::Other;
  if (n.op_type == "Concat" && n.inputs.size() == 2 && (n.attrs.get_int("axis", 0) == 1 || n.attrs.get_int("axis", 0) == -3)) {
    const Tensor* z = float_constant(g, n, 1);
    if (!z || z->rank() != 4 || z->dim(0) != x[0] || z->dim(2) != x[2] || z->dim(3) != x[3]) return Kind::Other;
    return is_float_zeros(*z) ? Kind::ZeroPadConcat : Kind::Other;
  }
  return Kind::Other;
}

// Whether a node of this kind keeps the invariant for a widened tensor read at `slot`.
bool reads_widened(Kind kind, int slot) {
  switch (kind) {
    case Kind::DenseConv:
    case Kind::DepthwiseConv:
    case Kind::Elementwise:
    case Kind::Pool:
    case Kind::ZeroPadConcat: return slot == 0;
    case Kind::Add: return slot == 0 || slot == 1;
    default: return false;
  }
}

struct Groups {
  std::vector<int> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int v) { return parent[v] == v ? v : parent[v] = find(parent[v]); }
  void unite(int a, int b) { parent[find(a)] = find(b); }
};

// OIHW weights with `out` output and `in` input channels per group, the original ones in place and zeros
// elsewhere.
Tensor widen_weights(const Tensor& w, int64_t out, int64_t in) {
  const int64_t o0 = w.dim(0), i0 = w.dim(1), k = w.dim(2) * w.dim(3);
  Tensor r = Tensor::empty(DataType::Float32, {out, in, w.dim(2), w.dim(3)});
  float* dst = r.data_as<float>();
  std::fill(dst, dst + r.numel(), 0.f);
  const float* src = w.data_as<float>();
  for (int64_t o = 0; o < o0; ++o)
    std::copy(src + o * i0 * k, src + (o + 1) * i0 * k, dst + o * in * k);
  return r;
}

Tensor widen_bias(const Tensor& b, int64_t out) {
  Tensor r = Tensor::empty(DataType::Float32, {out});
  float* dst = r.data_as<float>();
  std::fill(dst, dst + out, 0.f);
  std::copy(b.data_as<float>(), b.data_as<float>() + b.numel(), dst);
  return r;
}

}  // namespace

int widen_channels(Graph& g, int64_t multiple) {
  if (multiple <= 1 || !ensure_shapes(g)) return 0;
  const Uses uses = find_uses(g);
  const std::vector<int> producer = g.producers();
  std::vector<Kind> kinds(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) kinds[n] = classify(g, g.nodes[n]);

  // Tensors that widen together.
  Groups groups(g.values.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    switch (kinds[n]) {
      case Kind::DepthwiseConv:
      case Kind::Elementwise:
      case Kind::Pool: groups.unite(node.inputs[0], node.outputs[0]); break;
      case Kind::Add:
        groups.unite(node.inputs[0], node.outputs[0]);
        groups.unite(node.inputs[1], node.outputs[0]);
        break;
      default: break;
    }
  }
  // A group widens only if every tensor in it can: an odd channel count, written and read only by nodes
  // that keep the invariant, not a graph input or output.
  std::vector<char> blocked(g.values.size(), 0);
  std::vector<char> is_graph_input(g.values.size(), 0);
  for (int v : g.inputs) is_graph_input[v] = 1;
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (!is_4d_float_activation(val)) continue;
    bool ok = val.shape[1] % multiple != 0 && !is_graph_input[v] && !uses.is_graph_output[v] && producer[v] >= 0 &&
              kinds[producer[v]] != Kind::Other;
    for (const auto& [node, slot] : uses.readers[v]) ok = ok && reads_widened(kinds[node], slot);
    if (!ok) blocked[groups.find(static_cast<int>(v))] = 1;
  }
  std::vector<char> widened(g.values.size(), 0);
  for (size_t v = 0; v < g.values.size(); ++v)
    widened[v] = is_4d_float_activation(g.values[v]) && !blocked[groups.find(static_cast<int>(v))] &&
                 g.values[v].shape[1] % multiple != 0;
  // The channel count a tensor has after the pass.
  auto physical = [&](int v) {
    const int64_t c = g.values[v].shape[1];
    return widened[v] ? round_up(c, multiple) : c;
  };

  int rewrites = 0;
  std::vector<char> dead(g.nodes.size(), 0);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    const int x = node.inputs.empty() ? -1 : node.inputs[0], y = node.outputs.empty() ? -1 : node.outputs[0];
    if (kinds[n] == Kind::DenseConv || kinds[n] == Kind::DepthwiseConv) {
      if (!widened[x] && !widened[y]) continue;
      const bool depthwise = kinds[n] == Kind::DepthwiseConv;
      const Tensor& w = *constant_input(g, node, 1);
      node.inputs[1] = add_constant(g, g.values[node.inputs[1]].name + "_widened",
                                    widen_weights(w, physical(y), depthwise ? 1 : physical(x)));
      if (node.inputs.size() > 2 && node.inputs[2] >= 0)
        node.inputs[2] =
            add_constant(g, g.values[node.inputs[2]].name + "_widened", widen_bias(*constant_input(g, node, 2), physical(y)));
      if (depthwise) node.attrs.set("group", Attribute::of_int(physical(y)));
      ++rewrites;
    } else if (kinds[n] == Kind::ZeroPadConcat && (widened[x] || widened[y])) {
      // [x's channels][its added zeros][the constant's zeros]: only the zeros past x's widened count remain.
      const int64_t zeros = physical(y) - physical(x);
      if (zeros == 0) {
        replace_uses(g, y, x);
        dead[n] = 1;
      } else {
        const Shape& s = g.values[y].shape;
        Tensor z = Tensor::empty(DataType::Float32, {s[0], zeros, s[2], s[3]});
        std::fill(z.data_as<float>(), z.data_as<float>() + z.numel(), 0.f);
        node.inputs[1] = add_constant(g, node.name + "_zeros_widened", std::move(z));
      }
      ++rewrites;
    }
  }
  if (rewrites == 0) return 0;
  erase_nodes(g, dead);
  release_unused_constants(g);
  annotate_shapes(g);  // the widened tensors' shapes
  return rewrites;
}

}  // namespace ninegrid
