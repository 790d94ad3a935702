// Elementwise and per-channel layers: activations, BinaryOp, Eltwise, BatchNorm, Scale, PReLU, Dropout,
// Softmax. ncnn's per-channel parameters apply to the blob's outermost axis (c for 3-D, h for 2-D, w for
// 1-D), which after the batch dimension is axis 1, as in ONNX.
#include <algorithm>
#include <cfloat>

#include "import/ncnn/ncnn_layers.h"

namespace ninegrid {
namespace ncnn {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

int require_dims(const BlobInfo& x, const char* why) {
  if (x.dims < 1) throw Error(std::string("the rank of the input blob is unknown at import time, which ") + why);
  return x.dims;
}

// Per-channel weights as a constant broadcasting against the input; a single value broadcasts as is.
int per_channel_constant(Builder& b, const std::string& name, const std::vector<float>& v, const BlobInfo& x) {
  if (v.size() == 1) return b.constant(name, float_tensor({1}, v));
  int dims = require_dims(x, "per-channel parameters need");
  return b.constant(name, float_tensor(per_channel_shape(static_cast<int64_t>(v.size()), dims), v));
}

}  // namespace

void map_relu(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const float slope = l.params.get_float(0, 0.f);
  const BlobInfo x = b.in(l, 0);
  if (slope == 0.f) {
    b.node("Relu", l.name, {x.value}, {b.out(l, 0, x.dims)});
  } else {
    b.node("LeakyRelu", l.name, {x.value}, {b.out(l, 0, x.dims)}).attrs.set("alpha", Attribute::of_float(slope));
  }
}

void map_unary(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const char* op = l.type == "Sigmoid" ? "Sigmoid" : l.type == "TanH" ? "Tanh" : "Abs";
  const BlobInfo x = b.in(l, 0);
  b.node(op, l.name, {x.value}, {b.out(l, 0, x.dims)});
}

void map_clip(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const float lo = l.params.get_float(0, -FLT_MAX);
  const float hi = l.params.get_float(1, FLT_MAX);
  const BlobInfo x = b.in(l, 0);
  int vlo = b.scalar(l.name + "/min", lo);
  int vhi = b.scalar(l.name + "/max", hi);
  b.node("Clip", l.name, {x.value, vlo, vhi}, {b.out(l, 0, x.dims)});
}

void map_hard_sigmoid(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const BlobInfo x = b.in(l, 0);
  Node& n = b.node("HardSigmoid", l.name, {x.value}, {b.out(l, 0, x.dims)});
  n.attrs.set("alpha", Attribute::of_float(l.params.get_float(0, 0.2f)));
  n.attrs.set("beta", Attribute::of_float(l.params.get_float(1, 0.5f)));
}

void map_hard_swish(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const BlobInfo x = b.in(l, 0);
  // ncnn's defaults are alpha 0.2, beta 0.5 (not ONNX's 1/6): activation type 6 does the mapping.
  add_activation(b, l, 6, {l.params.get_float(0, 0.2f), l.params.get_float(1, 0.5f)}, x.value, b.out(l, 0, x.dims));
}

void map_prelu(Builder& b, const LayerDecl& l, WeightReader& wr) {
  expect_io(l, 1, 1, 1);
  const int64_t num_slope = l.params.get_int(0, 0);
  if (num_slope <= 0) throw Error("num_slope (param 0) must be positive, got " + str(num_slope));
  const BlobInfo x = b.in(l, 0);
  std::vector<float> slope = wr.load(num_slope, 1, l.name);
  int s = per_channel_constant(b, l.name + "/slope", slope, x);
  b.node("PRelu", l.name, {x.value, s}, {b.out(l, 0, x.dims)});
}

void map_batch_norm(Builder& b, const LayerDecl& l, WeightReader& wr) {
  expect_io(l, 1, 1, 1);
  const int64_t channels = l.params.get_int(0, 0);
  const float eps = l.params.get_float(1, 0.f);
  if (channels <= 0) throw Error("channels (param 0) must be positive, got " + str(channels));
  const BlobInfo x = b.in(l, 0);
  // ncnn's load order: slope, mean, variance, bias.
  std::vector<float> slope = wr.load(channels, 1, l.name);
  std::vector<float> mean = wr.load(channels, 1, l.name);
  std::vector<float> var = wr.load(channels, 1, l.name);
  std::vector<float> bias = wr.load(channels, 1, l.name);
  int vs = b.constant(l.name + "/scale", float_tensor({channels}, slope));
  int vb = b.constant(l.name + "/bias", float_tensor({channels}, bias));
  int vm = b.constant(l.name + "/mean", float_tensor({channels}, mean));
  int vv = b.constant(l.name + "/var", float_tensor({channels}, var));
  Node& n = b.node("BatchNormalization", l.name, {x.value, vs, vb, vm, vv}, {b.out(l, 0, x.dims)});
  n.attrs.set("epsilon", Attribute::of_float(eps));
}

void map_scale(Builder& b, const LayerDecl& l, WeightReader& wr) {
  const int64_t scale_data_size = l.params.get_int(0, 0);
  const int bias_term = l.params.get_int(1, 0);
  if (scale_data_size == -233) {
    // The scale comes from a second blob of one value per channel.
    expect_io(l, 2, 2, 1);
    if (bias_term) throw Error("Scale with a scale blob (param 0 = -233) and bias_term is not supported");
    const BlobInfo x = b.in(l, 0);
    const BlobInfo s = b.in(l, 1);
    int dims = require_dims(x, "Scale with a scale blob needs");
    std::vector<int64_t> shape{1, -1};
    for (int i = 1; i < dims; ++i) shape.push_back(1);
    int reshaped = b.temp(l.name + "/scale_reshaped");
    b.node("Reshape", l.name + "/scale_reshape", {s.value, b.ints(l.name + "/scale_shape", shape)}, {reshaped});
    b.node("Mul", l.name, {x.value, reshaped}, {b.out(l, 0, x.dims)});
    return;
  }
  expect_io(l, 1, 1, 1);
  if (scale_data_size <= 0) throw Error("scale_data_size (param 0) must be positive or -233, got " + str(scale_data_size));
  const BlobInfo x = b.in(l, 0);
  std::vector<float> scale = wr.load(scale_data_size, 1, l.name);
  std::vector<float> bias;
  if (bias_term) bias = wr.load(scale_data_size, 1, l.name);
  int y = bias_term ? b.temp(l.name + "/scaled") : b.out(l, 0, x.dims);
  b.node("Mul", l.name, {x.value, per_channel_constant(b, l.name + "/scale", scale, x)}, {y});
  if (bias_term)
    b.node("Add", l.name + "/bias_add", {y, per_channel_constant(b, l.name + "/bias", bias, x)}, {b.out(l, 0, x.dims)});
}

void map_dropout(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const float scale = l.params.get_float(0, 1.f);
  const BlobInfo x = b.in(l, 0);
  if (scale == 1.f) {
    b.node("Identity", l.name, {x.value}, {b.out(l, 0, x.dims)});
  } else {
    b.node("Mul", l.name, {x.value, b.scalar(l.name + "/scale", scale)}, {b.out(l, 0, x.dims)});
  }
}

void map_softmax(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const int axis = l.params.get_int(0, 0);
  // ncnn refuses these: the original Softmax used the wrong axis on 3-D blobs, and files written before
  // the fix (without 1=1) must be regenerated.
  if (l.params.get_int(1, 0) == 0 && axis != 0)
    throw Error("Softmax with axis " + str(axis) + " and without fixbug0 (1=1) comes from an ncnn param too old " +
                "to run correctly; regenerate it");
  const BlobInfo x = b.in(l, 0);
  if (x.dims > 0 && (axis < -x.dims || axis >= x.dims))
    throw Error("axis " + str(axis) + " is out of range for a " + str(x.dims) + "-D blob");
  Node& n = b.node("Softmax", l.name, {x.value}, {b.out(l, 0, x.dims)});
  n.opset = 13;  // softmax along one axis (not the flattened 2-D form of opset < 13)
  n.attrs.set("axis", Attribute::of_int(axis >= 0 ? axis + 1 : axis));
}

void map_binary_op(Builder& b, const LayerDecl& l, WeightReader&) {
  const int op_type = l.params.get_int(0, 0);
  const int with_scalar = l.params.get_int(1, 0);
  const float scalar = l.params.get_float(2, 0.f);
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sub", "Div", "Pow"};
  if (op_type < 0 || op_type > 9)
    throw Error("op_type (param 0) " + str(op_type) + " is not supported (0..9: add sub mul div max min pow rsub rdiv rpow)");
  const bool reversed = op_type >= 7;  // rsub, rdiv, rpow: b op a
  int a = -1, c = -1, dims = -1;
  if (with_scalar) {
    expect_io(l, 1, 1, 1);
    const BlobInfo x = b.in(l, 0);
    a = x.value;
    dims = x.dims;
    c = b.scalar(l.name + "/b", scalar);
  } else {
    expect_io(l, 2, 2, 1);
    const BlobInfo x = b.in(l, 0);
    const BlobInfo y = b.in(l, 1);
    a = x.value;
    c = y.value;
    dims = std::max(x.dims, y.dims);
    // Blobs of equal rank broadcast as numpy does (size-1 dims stretch). A lower-rank blob is aligned
    // to the other's outer dimensions first (ng.BroadcastAlign), as ncnn does.
    if (x.dims > 0 && y.dims > 0 && x.dims != y.dims) {
      const bool x_lower = x.dims < y.dims;
      int aligned = b.temp(l.name + "/aligned");
      b.node("ng.BroadcastAlign", l.name + "/align", {x_lower ? a : c, x_lower ? c : a}, {aligned});
      (x_lower ? a : c) = aligned;
    }
  }
  std::vector<int> inputs = reversed ? std::vector<int>{c, a} : std::vector<int>{a, c};
  b.node(kOps[op_type], l.name, inputs, {b.out(l, 0, dims)});
}

void map_eltwise(Builder& b, const LayerDecl& l, WeightReader&) {
  if (l.bottoms.size() < 2) throw Error("Eltwise needs at least 2 input blobs, has " + str(l.bottoms.size()));
  expect_io(l, 2, l.bottoms.size(), 1);
  const int op_type = l.params.get_int(0, 0);
  const std::vector<float> coeffs = l.params.get_floats(1);
  if (op_type < 0 || op_type > 2) throw Error("op_type (param 0) must be 0 (prod), 1 (sum) or 2 (max), got " + str(op_type));
  if (!coeffs.empty() && coeffs.size() != l.bottoms.size())
    throw Error("coeffs (param 1) has " + str(coeffs.size()) + " values for " + str(l.bottoms.size()) + " inputs");
  std::vector<BlobInfo> xs;
  for (size_t i = 0; i < l.bottoms.size(); ++i) xs.push_back(b.in(l, i));
  const int dims = xs[0].dims;
  if (op_type == 2) {
    std::vector<int> ins;
    for (const BlobInfo& x : xs) ins.push_back(x.value);
    b.node("Max", l.name, ins, {b.out(l, 0, dims)});
    return;
  }
  const bool sum = op_type == 1;
  auto term = [&](size_t i) {
    if (!sum || coeffs.empty() || coeffs[i] == 1.f) return xs[i].value;
    int t = b.temp(l.name + "/term" + str(i));
    b.node("Mul", l.name + "/coeff" + str(i), {xs[i].value, b.scalar(l.name + "/coeff" + str(i), coeffs[i])}, {t});
    return t;
  };
  int acc = term(0);
  for (size_t i = 1; i < xs.size(); ++i) {
    const bool last = i + 1 == xs.size();
    int next = last ? b.out(l, 0, dims) : b.temp(l.name + "/acc" + str(i));
    b.node(sum ? "Add" : "Mul", last ? l.name : l.name + "/acc" + str(i), {acc, term(i)}, {next});
    acc = next;
  }
}

}  // namespace ncnn
}  // namespace ninegrid
