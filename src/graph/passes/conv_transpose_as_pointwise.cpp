// A 2-D ConvTranspose whose kernel equals its stride (b x b, no padding, no dilation, one group) places each
// input pixel's b * b taps on output pixels no other input pixel reaches. It is then a 1x1 Conv to b * b * M
// channels followed by DepthToSpace(b) in DCR order:
//   y[m][h*b + i][w*b + j] = bias[m] + sum_c x[c][h][w] * W[c][m][i][j]
//                          = conv1x1(x)[(i*b + j) * M + m][h][w]        with W'[(i*b + j) * M + m][c] = W[c][m][i][j]
// Each output is the same sum of the same products, so the result is the ConvTranspose's up to the order of
// the sum. The 1x1 conv runs on the pointwise kernels and the layout plan, and the tap-major (DCR) channel order
// makes the shuffle a copy of whole channel blocks when the block divides M (ops/depth_to_space.cpp).
// conv_transpose_as_pointwise does this only where the output channels M are a multiple of the smallest
// channel block (`channel_multiple`), so the shuffle copies whole blocks: with fewer (PP-OCRv4 det's last,
// 24 -> 1 channel) the plain 1x1 conv and shuffle took longer than ops/conv_transpose_fast.h's GEMM and
// col2im (bench/REPORT.md).
//
// fold_shuffle_into_conv_transpose then takes such a ConvTranspose that reads a shuffle (a DBNet-style head,
// PP-OCRv4 det's: ConvTranspose, ReLU, ConvTranspose, sigmoid, both 2x2 stride 2) into one 1x1 Conv on the
// shuffle's input and one shuffle of both strides. A ConvTranspose tap reads one pixel of the shuffled map,
// which is one tap's C channels of one input pixel, so per input pixel the ConvTranspose is a 1x1 conv from
// those C channels to its own taps' outputs; all of them together are one 1x1 conv whose weights are zero
// outside each tap's channels. The big shuffled map between the two is never written.
//
// An element-wise fused epilogue (ng.activation, its parameters, ng.affine_after) moves to the conv, which
// applies it before the shuffle moves the values; per-channel PRelu slopes are repeated for each tap. Both
// run after the epilogue fusions, before the layout plan.
#include <algorithm>
#include <cstring>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"

namespace ninegrid {

namespace {

// Bounds on what folding makes: the conv's output channels and weights (PP-OCRv4 det's: 16, 16 x 96).
constexpr int64_t kMaxFoldedChannels = 4096;
constexpr int64_t kMaxFoldedWeights = int64_t(1) << 22;

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  for (int64_t x : v)
    if (x != value) return false;
  return true;
}

// The block size b when `n` is a ConvTranspose these passes rewrite, else 0.
int64_t nonoverlapping_block(const Graph& g, const Node& n, int64_t channel_multiple) {
  if (n.op_type != "ConvTranspose" || n.inputs.size() < 2 || n.inputs[0] < 0 || n.outputs.size() != 1 ||
      n.outputs[0] < 0)
    return 0;
  const Tensor* w = constant_input(g, n, 1);
  if (!w || w->dtype() != DataType::Float32 || w->rank() != 4) return 0;
  const Value& x = g.values[n.inputs[0]];
  if (x.dtype != DataType::Float32 || (x.shape_known && x.shape.size() != 4)) return 0;
  if (fused::has_residual(n)) return 0;
  const int64_t b = w->dim(2);
  if (b < 2 || w->dim(3) != b) return 0;
  try {
    if (n.attrs.get_int("group", 1) != 1) return 0;
    const std::vector<int64_t> kernel = n.attrs.get_ints("kernel_shape");
    if (!kernel.empty() && (kernel.size() != 2 || !all_equal(kernel, b))) return 0;
    const std::vector<int64_t> strides = n.attrs.get_ints("strides");
    if (strides.size() != 2 || !all_equal(strides, b)) return 0;
    if (!all_equal(n.attrs.get_ints("dilations"), 1) || !all_equal(n.attrs.get_ints("pads"), 0) ||
        !all_equal(n.attrs.get_ints("output_padding"), 0) || !n.attrs.get_ints("output_shape").empty())
      return 0;
    // SAME_* asks for in * b outputs, which a b x b kernel at stride b gives unpadded.
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return 0;
  } catch (const Error&) {
    return 0;  // an attribute of the wrong kind: the op reports it
  }
  const int64_t m = w->dim(1);
  if (m % channel_multiple != 0) return 0;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const Tensor* bias = constant_input(g, n, 2);
    if (!bias || bias->dtype() != DataType::Float32 || bias->numel() != m) return 0;
  }
  if (n.inputs.size() > fused::kSlopeInput && n.inputs[fused::kSlopeInput] >= 0) {
    const Tensor* slope = constant_input(g, n, fused::kSlopeInput);
    if (!slope || slope->dtype() != DataType::Float32 || (slope->numel() != 1 && slope->numel() != m)) return 0;
  }
  return b;
}

// `values` (M per-channel values) repeated for each of the `taps` taps: [taps * M].
Tensor repeat_per_tap(const Tensor& values, int64_t taps) {
  const int64_t m = values.numel();
  Tensor t = Tensor::empty(DataType::Float32, {taps * m});
  for (int64_t k = 0; k < taps; ++k)
    std::memcpy(t.data_as<float>() + k * m, values.data_as<float>(), static_cast<size_t>(m) * sizeof(float));
  return t;
}

// The 1x1 Conv taking ConvTranspose `ct`'s place: input x, the given weights ([taps * M][channels][1][1]),
// ct's bias and PRelu slopes repeated for each tap, its fused epilogue; its output a new value "<y>_taps" of
// shape [N, taps * M, H, W] (x's N, H, W when known).
Node pointwise_conv_for(Graph& g, const Node& ct, int x, Tensor weights, int64_t taps) {
  Node conv;
  conv.name = ct.name;  // errors and profiles keep naming the model's node
  conv.op_type = "Conv";
  const int64_t out_channels = weights.dim(0);
  conv.inputs = {x, add_constant(g, ct.name + "_pointwise_weights", std::move(weights))};
  if (ct.inputs.size() > 2 && ct.inputs[2] >= 0)
    conv.inputs.push_back(add_constant(g, ct.name + "_pointwise_bias", repeat_per_tap(*constant_input(g, ct, 2), taps)));
  if (ct.inputs.size() > fused::kSlopeInput && ct.inputs[fused::kSlopeInput] >= 0) {
    const Tensor& slope = *constant_input(g, ct, fused::kSlopeInput);
    conv.inputs.resize(fused::kSlopeInput, -1);
    conv.inputs.push_back(slope.numel() == 1 ? ct.inputs[fused::kSlopeInput]
                                             : add_constant(g, ct.name + "_pointwise_slope", repeat_per_tap(slope, taps)));
  }
  conv.attrs.set("kernel_shape", Attribute::of_ints({1, 1}));
  for (const char* key : {fused::kActivation, fused::kActivationParams, fused::kAffineAfter})
    if (const Attribute* a = ct.attrs.find(key)) conv.attrs.set(key, *a);

  const int y = ct.outputs[0];
  const int out = g.add_value(g.unique_value_name(g.values[y].name + "_taps"));
  g.values[out].dtype = DataType::Float32;
  const Value& xv = g.values[x];
  if (xv.shape_known && xv.shape.size() == 4) {
    g.values[out].shape = {xv.shape[0], out_channels, xv.shape[2], xv.shape[3]};
    g.values[out].shape_known = true;
  }
  conv.outputs = {out};
  return conv;
}

// DepthToSpace(bs, DCR) from `taps` to ConvTranspose `ct`'s output.
Node shuffle_for(const Node& ct, int taps, int64_t bs) {
  Node shuffle;
  shuffle.name = ct.name + "_pixel_shuffle";
  shuffle.op_type = "DepthToSpace";
  shuffle.inputs = {taps};
  shuffle.outputs = {ct.outputs[0]};
  shuffle.attrs.set("blocksize", Attribute::of_int(bs));
  shuffle.attrs.set("mode", Attribute::of_string("DCR"));
  return shuffle;
}

// The nodes without the dead ones, each new shuffle right after the node index it follows (ascending).
void rebuild(Graph& g, const std::vector<char>& dead, std::vector<Node>& shuffles, const std::vector<int>& after) {
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + shuffles.size());
  size_t next = 0;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (!dead[static_cast<size_t>(i)]) nodes.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
    if (next < shuffles.size() && after[next] == i) nodes.push_back(std::move(shuffles[next++]));
  }
  g.nodes = std::move(nodes);
}

}  // namespace

int conv_transpose_as_pointwise(Graph& g, int64_t channel_multiple) {
  std::vector<Node> shuffles;
  std::vector<int> shuffle_after;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    const int64_t b = nonoverlapping_block(g, g.nodes[n], channel_multiple);
    if (b == 0) continue;
    const Node ct = g.nodes[n];
    const Tensor& w = *constant_input(g, ct, 1);
    const int64_t c_in = w.dim(0), m = w.dim(1), taps = b * b;

    // W'[(i*b + j) * M + m][c] = W[c][m][i][j]
    Tensor weights = Tensor::empty(DataType::Float32, {taps * m, c_in, 1, 1});
    const float* src = w.data_as<float>();
    float* dst = weights.data_as<float>();
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t k = 0; k < taps; ++k) dst[(k * m + o) * c_in + c] = src[(c * m + o) * taps + k];

    Node conv = pointwise_conv_for(g, ct, ct.inputs[0], std::move(weights), taps);
    shuffles.push_back(shuffle_for(ct, conv.outputs[0], b));
    shuffle_after.push_back(n);
    g.nodes[n] = std::move(conv);
  }
  if (shuffles.empty()) return 0;
  const int rewritten = static_cast<int>(shuffles.size());
  rebuild(g, std::vector<char>(g.nodes.size(), 0), shuffles, shuffle_after);
  return rewritten;
}

int fold_shuffle_into_conv_transpose(Graph& g) {
  if (!ensure_shapes(g)) return 0;  // needs the shuffle's input channels
  const std::vector<int> prod = g.producers();
  const Uses uses = find_uses(g);
  std::vector<char> dead(g.nodes.size(), 0);
  std::vector<Node> shuffles;
  std::vector<int> shuffle_after;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    const int64_t b2 = nonoverlapping_block(g, g.nodes[n], 1);
    if (b2 == 0) continue;
    const Node ct = g.nodes[n];
    const int v = ct.inputs[0];
    const int p = prod[v];
    if (p < 0 || dead[static_cast<size_t>(p)] || uses.count(v) != 1) continue;
    const Node& d2s = g.nodes[static_cast<size_t>(p)];
    int64_t b1 = 0;
    try {
      if (d2s.op_type != "DepthToSpace" || d2s.inputs.size() != 1 || d2s.inputs[0] < 0 ||
          d2s.attrs.get_string("mode", "DCR") != "DCR")
        continue;
      b1 = d2s.attrs.get_int("blocksize", 0);
    } catch (const Error&) {
      continue;  // the op reports its attributes
    }
    const Tensor& w = *constant_input(g, ct, 1);
    const int64_t c_in = w.dim(0), m = w.dim(1), taps2 = b2 * b2;
    const Value& u = g.values[d2s.inputs[0]];
    if (b1 < 1 || b1 > 64 || !u.shape_known || u.shape.size() != 4 || u.dtype != DataType::Float32 ||
        u.shape[1] != b1 * b1 * c_in)
      continue;
    const int64_t bs = b1 * b2, out_channels = bs * bs * m, u_channels = u.shape[1];
    if (out_channels > kMaxFoldedChannels || out_channels * u_channels > kMaxFoldedWeights) continue;

    // Output channel (I * bs + J) * M + m with I = i1 * b2 + i2, J = j1 * b2 + j2 reads u's channels of the
    // shuffle's tap (i1, j1), (i1 * b1 + j1) * C + c, through the ConvTranspose's tap (i2, j2).
    Tensor weights = Tensor::empty(DataType::Float32, {out_channels, u_channels, 1, 1});
    float* dst = weights.data_as<float>();
    std::fill(dst, dst + weights.numel(), 0.f);
    const float* src = w.data_as<float>();
    for (int64_t i1 = 0; i1 < b1; ++i1)
      for (int64_t j1 = 0; j1 < b1; ++j1)
        for (int64_t i2 = 0; i2 < b2; ++i2)
          for (int64_t j2 = 0; j2 < b2; ++j2)
            for (int64_t o = 0; o < m; ++o) {
              const int64_t out = ((i1 * b2 + i2) * bs + (j1 * b2 + j2)) * m + o;
              for (int64_t c = 0; c < c_in; ++c)
                dst[out * u_channels + (i1 * b1 + j1) * c_in + c] = src[(c * m + o) * taps2 + i2 * b2 + j2];
            }
    Node conv = pointwise_conv_for(g, ct, d2s.inputs[0], std::move(weights), bs * bs);
    shuffles.push_back(shuffle_for(ct, conv.outputs[0], bs));
    shuffle_after.push_back(n);
    g.nodes[n] = std::move(conv);
    dead[static_cast<size_t>(p)] = 1;
  }
  if (shuffles.empty()) return 0;
  const int folded = static_cast<int>(shuffles.size());
  rebuild(g, dead, shuffles, shuffle_after);
  return folded;
}

}  // namespace ninegrid
