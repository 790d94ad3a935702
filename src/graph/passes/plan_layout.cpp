// Layout planning (NeoCPU §3.2, DESIGN.md techniques 2 and 3): decides, for every 4-D float tensor and
// every 4-D int8 tensor (uint8 activations, kernels/quantized.h), whether it is stored plain (NCHW) or
// channel-blocked (NCHW[P]c), and inserts ng.Reorder nodes only where a reader cannot take its input's
// layout. Logical shapes never change (blocks divide the channel count exactly), so layout-oblivious ops
// need no rewriting at all.
//
// Node kinds:
//   Conv                 reads any block (a kernel parameter), writes the block chosen for its output;
//                        a Conv whose output only feeds layout-dependent readers writes plain NCHW itself.
//   QConv                ng.QConv, the same with the int8 blocks (int8_block_for), except that a depthwise
//                        one reads its output's block (the int8 depthwise kernels keep the block), and it
//                        also writes plain NCHW when its readers are element-wise ops (DequantizeLinear,
//                        ...) whose own readers all want plain data (a detection head's DequantizeLinear
//                        before a Reshape or a graph output).
//   layout-oblivious     unary activations, same-shape binary ops, Concat on channels: output block =
//                        the inputs' common block (mismatched inputs are reordered to it). Add, Sub, Mul
//                        and Div also broadcast a per-(batch, channel) operand [N or 1, C or 1, 1, 1] that
//                        is a constant or layout-free over a blocked input (the squeeze-and-excitation
//                        gate); they then get ng.in_block = ng.out_block like the layout-tolerant ops.
//   layout-tolerant      ops with blocked kernels (see kBlockedOps): same as oblivious, with their block
//                        recorded in ng.in_block / ng.out_block. Only their input 0 carries the layout
//                        (the others are parameters or read for their shape), and only when their
//                        attributes and inputs keep the batch and channel axes (blocked_path_valid).
//                        DepthToSpace (DCR) is the one that changes the channel count: it keeps its block
//                        where the block divides its output channels (whole blocks per tap; a conv writing
//                        its input takes such a block, shuffle_block), else reads blocks and writes plain.
//   layout-dependent     everything else (Reshape, Softmax, Flatten, Gemm, ...) and graph outputs: plain.
//                        A 2-D ConvTranspose run by its GEMM reads blocks of 8 or 16 as they are
//                        (blocked_input_conv_transpose), so its producer need not write plain data for it.
//
// The int8 ops: ng.QAdd (same shape) and ng.QConcat are element-wise like Add and Concat, ng.QRequantize
// and QuantizeLinear and DequantizeLinear with one scale for the whole tensor are unary element-wise (float
// blocked in, uint8 blocked out, and back: a model's float and int8 parts meet without a reorder), and
// MaxPool, GlobalMaxPool, Pad, Slice and (nearest) Resize on int8 data and ng.QAveragePool /
// ng.QGlobalAveragePool are layout-tolerant (blocked_dtype_ok).
//
// Layout-free values (see layout_free_values) are [N, C, 1, 1] at every input size and have the same
// bytes in every layout: they are never reordered, and the nodes computing them run on plain data.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "ir/fused_conv.h"
#include "ops/conv_select.h"

namespace ninegrid {

namespace {

const std::set<std::string> kUnaryOblivious = {
    "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "ng.Silu", "Elu", "Selu", "Softplus", "Softsign",
    "Exp", "Abs", "Neg", "Sqrt", "Erf", "Identity", "Dropout", "Clip", "Floor", "Ceil", "Round", "Reciprocal",
    "ng.QRequantize"};
const std::set<std::string> kBinaryOblivious = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean",
                                                 "ng.QAdd"};
// Binary ops whose kernels broadcast a per-(batch, channel) operand over a blocked input
// (ops/layout_tolerant_binary_op.h).
const std::set<std::string> kChannelBroadcastOps = {"Add", "Sub", "Mul", "Div"};
// Ops that implement blocked input/output themselves (they read ng.in_block / ng.out_block) for 4-D float
// data, when blocked_path_valid says their batch and channel axes pass through unchanged.
const std::set<std::string> kBlockedOps = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                                           "Resize",  "Upsample",    "ng.Crop",           "Pad",
                                           "Slice",   "ng.Interp",   "ng.QAveragePool",   "ng.QGlobalAveragePool",
                                           "DepthToSpace"};
// QuantizeLinear and DequantizeLinear: element-wise when their scale and zero point are one constant each
// (per_tensor_qdq).
bool is_qdq(const std::string& op) { return op == "QuantizeLinear" || op == "DequantizeLinear"; }

// Inputs read for their shape only: their layout does not matter, so they never need a reorder.
bool shape_only_input(const Node& n, size_t slot) {
  return (n.op_type == "ng.Crop" && slot == 1) || ((n.op_type == "Shape" || n.op_type == "Size") && slot == 0);
}

bool is_int8_type(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

// The tensors the planner lays out: 4-D float32 and int8 (uint8 or int8) values computed at run time.
bool is_4d_data(const Value& v) {
  return v.shape_known && v.shape.size() == 4 && (v.dtype == DataType::Float32 || is_int8_type(v.dtype)) &&
         !v.is_constant();
}
bool is_4d_float(const Value& v) { return is_4d_data(v) && v.dtype == DataType::Float32; }

bool is_scalar_constant(const Value& v) { return v.is_constant() && v.constant.numel() == 1; }

// A 4-D float constant of zeros: its bytes are the same in every layout whose block divides its channels
// (channel padding by Concat, which widen_channels leaves in whole blocks of 8).
bool zero_constant_4d(const Value& v) {
  return v.is_constant() && v.constant.rank() == 4 && is_float_zeros(v.constant);
}

// Whether a constant broadcasts as one value per (batch, channel) at most: its height and width are 1.
bool spatially_1x1_constant(const Value& v) {
  if (!v.is_constant() || !v.shape_known) return false;
  const Shape s = as_rank4(v.shape);
  return !s.empty() && s[2] == 1 && s[3] == 1;
}

// Conv attributes that make every output pixel read exactly the input pixel at its own position: a 1x1
// kernel, stride 1, no padding. (Dilation does not matter for a 1x1 kernel.)
bool pointwise_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const Value& w = g.values[n.inputs[1]];
  if (!w.shape_known || w.shape.size() != 4 || w.shape[2] != 1 || w.shape[3] != 1) return false;
  try {
    for (int64_t k : n.attrs.get_ints("kernel_shape"))
      if (k != 1) return false;
    for (int64_t s : n.attrs.get_ints("strides"))
      if (s != 1) return false;
    for (int64_t p : n.attrs.get_ints("pads"))
      if (p != 0) return false;
    // SAME_* pads a 1x1 stride-1 kernel by nothing; any other value is the op's error to report.
    const std::string auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
    return auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  } catch (const Error&) {
    return false;
  }
}

// Values whose layout does not matter: an [N, C, 1, 1] tensor has element (n, c) at n * C + c in NCHW and
// in every NCHW[P]c alike, so no reorder is ever needed to or from it. A value qualifies by how it is
// computed, not by its shape now: a session may run another input size with the plan made here, and a
// map that merely happens to be 1x1 at this size (a 7x7 AveragePool on a 7x7 map) grows at a larger one.
// Spatially 1x1 at every input size are:
//   - a global pool's output (ng.QGlobalAveragePool's included);
//   - a pointwise Conv's or ng.QConv's output (fused epilogue included) whose input, and fused residual
//     if any, is layout-free or constant: each output pixel is computed from the one input pixel;
//   - a unary element-wise op's output on a layout-free value (QuantizeLinear and DequantizeLinear with
//     scalar parameters included);
//   - a binary element-wise op's output when every input is layout-free or a constant of height and
//     width 1 (a constant never changes shape).
// The shape check below is a consistency guard, not the reason.
std::vector<char> layout_free_values(const Graph& g) {
  std::vector<char> free(g.values.size(), 0);
  auto is_free = [&](int v) { return v >= 0 && free[v]; };
  // Nodes are topologically sorted, so one forward sweep sees every input's status first.
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] < 0) continue;
    const Value& out = g.values[n.outputs[0]];
    if (!out.shape_known || out.shape.size() != 4) continue;
    bool qualifies = false;
    if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool" || n.op_type == "ng.QGlobalAveragePool") {
      qualifies = true;
    } else if (out.shape[2] != 1 || out.shape[3] != 1 || n.outputs.size() != 1) {
      qualifies = false;
    } else if (n.op_type == "Conv" || n.op_type == "ng.QConv") {
      const bool residual_ok = !fused::has_residual(n) || is_free(n.inputs[fused::kResidualInput]) ||
                               g.values[n.inputs[fused::kResidualInput]].is_constant();
      qualifies = is_free(n.inputs[0]) && pointwise_conv(g, n) && residual_ok;
    } else if (kUnaryOblivious.count(n.op_type) || is_qdq(n.op_type)) {
      qualifies = !n.inputs.empty() && is_free(n.inputs[0]);
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (n.inputs[i] >= 0 && !is_scalar_constant(g.values[n.inputs[i]])) qualifies = false;
    } else if (kBinaryOblivious.count(n.op_type)) {
      bool any_free = false, all_ok = true;
      for (int i : n.inputs) {
        if (i < 0) continue;
        any_free = any_free || is_free(i);
        all_ok = all_ok && (is_free(i) || spatially_1x1_constant(g.values[i]));
      }
      qualifies = any_free && all_ok;
    }
    if (qualifies) free[n.outputs[0]] = 1;
  }
  return free;
}

// A per-(batch, channel) operand of a binary op with output shape `out`: a constant or layout-free value
// of shape [N or 1, C or 1, 1, 1] (leading axes may be missing). Its bytes are the same in every layout,
// and ops/layout_tolerant_binary_op.h broadcasts it over a blocked input.
bool channel_operand(const Value& v, bool layout_free, const Shape& out) {
  return (layout_free || v.is_constant()) && per_channel_float(v, out);
}

// The values of a constant float or integer tensor, or empty if the value is not a constant.
std::vector<double> constant_numbers(const Graph& g, const Node& n, size_t slot) {
  std::vector<double> v;
  if (slot >= n.inputs.size() || n.inputs[slot] < 0 || !g.values[n.inputs[slot]].is_constant()) return v;
  const Tensor& t = g.values[n.inputs[slot]].constant;
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DataType::Float32: v.push_back(t.data_as<float>()[i]); break;
      case DataType::Float64: v.push_back(t.data_as<double>()[i]); break;
      case DataType::Int64: v.push_back(static_cast<double>(t.data_as<int64_t>()[i])); break;
      case DataType::Int32: v.push_back(t.data_as<int32_t>()[i]); break;
      default: return {};
    }
  }
  return v;
}

bool input_given(const Node& n, size_t slot) { return slot < n.inputs.size() && n.inputs[slot] >= 0; }

// Whether a kBlockedOps node has a blocked kernel for its data type: all of them for float32; for int8
// data (uint8 activations, or int8) the ones that only move or compare values, and the int8 average pools.
bool blocked_dtype_ok(const std::string& op, DataType t) {
  if (t == DataType::Float32) return op != "ng.QAveragePool" && op != "ng.QGlobalAveragePool";
  if (!is_int8_type(t)) return false;
  if (op == "ng.QAveragePool" || op == "ng.QGlobalAveragePool") return t == DataType::UInt8;
  // Resize: nearest only on int8 data (the op refuses the other modes), a copy of pixels.
  return op == "MaxPool" || op == "GlobalMaxPool" || op == "Pad" || op == "Slice" || op == "Resize" ||
         op == "Upsample";
}

// Whether a kBlockedOps node can run on blocked data: its input 0 is a 4-D tensor of a type its blocked
// kernels take (the output was checked by classify) and the operation leaves the batch and channel axes
// alone, so NCHW[P]c in gives NCHW[P]c out with the same P. Anything unexpected (non-constant parameters,
// odd attribute kinds) keeps the node layout-dependent.
bool blocked_path_valid(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] < 0 || !is_4d_data(g.values[n.inputs[0]])) return false;
  if (!blocked_dtype_ok(n.op_type, g.values[n.inputs[0]].dtype)) return false;
  const Shape& in = g.values[n.inputs[0]].shape;
  const Shape& out = g.values[n.outputs[0]].shape;
  const std::string& op = n.op_type;
  try {
    // The one that changes the channels: in DCR order each tap's channels are one contiguous run of the
    // output's, so whole blocks move when the block divides the output channels (shuffle_block).
    if (op == "DepthToSpace")
      return in[0] == out[0] && g.values[n.inputs[0]].dtype == DataType::Float32 &&
             n.attrs.get_string("mode", "DCR") == "DCR";
  } catch (const Error&) {
    return false;
  }
  if (in[0] != out[0] || in[1] != out[1]) return false;
  try {
    if (op == "MaxPool") return n.outputs.size() < 2 || n.outputs[1] < 0;  // no Indices output
    if (op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "ng.Crop" ||
        op == "ng.Interp" || op == "ng.QAveragePool" || op == "ng.QGlobalAveragePool")
      return true;
    if (op == "Pad") {
      // pads (and axes) constant, zero on the batch and channel axes.
      const std::vector<double> pads = constant_numbers(g, n, 1);
      std::vector<double> axes = {0, 1, 2, 3};
      if (input_given(n, 3)) axes = constant_numbers(g, n, 3);
      if (pads.empty() || axes.empty() || pads.size() != 2 * axes.size()) return false;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double a = axes[i] < 0 ? axes[i] + 4 : axes[i];
        if ((a == 0 || a == 1) && (pads[i] != 0 || pads[axes.size() + i] != 0)) return false;
      }
      return true;
    }
    if (op == "Slice") {
      // starts/ends (and axes, steps) constant; the batch and channel axes, if listed, taken whole with step 1
      // (same length alone would allow a reversed channel order). The batch must be taken "to the end":
      // a session may run another batch size than the one planned.
      const std::vector<double> starts = constant_numbers(g, n, 1), ends = constant_numbers(g, n, 2);
      std::vector<double> axes, steps;
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<double>(i));
      if (input_given(n, 3)) axes = constant_numbers(g, n, 3);
      steps.assign(starts.size(), 1.0);
      if (input_given(n, 4)) steps = constant_numbers(g, n, 4);
      if (starts.empty() || ends.size() != starts.size() || axes.size() != starts.size() ||
          steps.size() != starts.size())
        return false;
      for (size_t i = 0; i < axes.size(); ++i) {
        const double a = axes[i] < 0 ? axes[i] + 4 : axes[i];
        if ((a == 0 || a == 1) && steps[i] != 1) return false;
        if (a == 0 && (starts[i] != 0 || ends[i] < 2147483647.0)) return false;
      }
      return true;
    }
    if (op == "Resize" || op == "Upsample") {
      // Same sizes on N and C are not enough: the batch and channel taps must be the identity. With a
      // scale of exactly 1 they are, in every coordinate mode but these two (x + 0.5 rounds up, roi shifts).
      const std::string coords = n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
      if (coords == "tf_half_pixel_for_nn" || coords == "tf_crop_and_resize") return false;
      const bool legacy = op == "Upsample" || (n.opset > 0 && n.opset < 11);
      std::vector<int64_t> axes = n.attrs.get_ints("axes");
      if (axes.empty()) axes = {0, 1, 2, 3};
      const size_t scales_slot = legacy ? 1 : 2;
      std::vector<double> factors = constant_numbers(g, n, scales_slot);
      if (factors.empty()) {
        // sizes: the scale is size / in = 1 on N and C (checked above), unless keep_aspect_ratio_policy
        // imposes one common scale on every listed axis.
        if (legacy || !input_given(n, 3) || !g.values[n.inputs[3]].is_constant()) return false;
        if (n.attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch")
          for (int64_t a : axes)
            if (a == 0 || a == 1 || a == -4 || a == -3) return false;
        return true;
      }
      if (factors.size() != axes.size()) return false;
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
        if ((a == 0 || a == 1) && factors[i] != 1.0) return false;
      }
      return true;
    }
  } catch (const Error&) {
    return false;  // an attribute of the wrong kind: the op itself will report it
  }
  return false;
}

// A conv with one group per channel (input channels = output channels = groups).
bool depthwise_conv(const Graph& g, const Node& n) {
  const Value& x = g.values[n.inputs[0]];
  const Value& y = g.values[n.outputs[0]];
  const int64_t groups = n.attrs.get_int("group", 1);
  return groups > 1 && x.shape_known && y.shape_known && x.shape.size() == 4 && y.shape.size() == 4 &&
         x.shape[1] == groups && y.shape[1] == groups;
}

enum class Kind { Conv, QConv, Oblivious, Dependent };

// A 2-D ConvTranspose (layout-dependent: it writes plain NCHW) whose GEMM (ops/conv_transpose_fast.h) reads
// its input in blocks of 8 or 16 as they are, so a conv before it need not write plain data for it. Under
// NEON's 4-channel blocks it runs the reference, which reads plain data.
bool blocked_input_conv_transpose(const Graph& g, const Node& n, int max_block) {
  if (n.op_type != "ConvTranspose" || max_block < 8 || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0)
    return false;
  const Value& x = g.values[n.inputs[0]];
  const Value& w = g.values[n.inputs[1]];
  if (!is_4d_float(x) || x.shape[1] % 8 != 0 || !w.is_constant() || w.shape.size() != 4) return false;
  try {
    return n.attrs.get_int("group", 1) == 1;
  } catch (const Error&) {
    return false;  // the op names the attribute's problem
  }
}

// The largest block not above `b` that a blocked DepthToSpace with `out_channels` output channels takes: it
// must divide them (each tap then moves whole blocks), and be one the kernels take (from 8 on x86, NEON's 4).
int64_t shuffle_block(int64_t b, int64_t out_channels, int max_block) {
  while (b > 1 && out_channels % b != 0) b /= 2;
  return b < std::min<int64_t>(8, max_block) ? 1 : b;
}

// QuantizeLinear / DequantizeLinear with one constant scale (and zero point) for the whole tensor: each
// element is converted alone, so the op runs the same in every layout.
bool per_tensor_qdq(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[0] < 0 || !is_4d_data(g.values[n.inputs[0]])) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (i > 2 || (n.inputs[i] >= 0 && !is_scalar_constant(g.values[n.inputs[i]]))) return false;
  if (n.inputs[1] < 0) return false;
  try {
    return n.attrs.get_int("block_size", 0) == 0;
  } catch (const Error&) {
    return false;  // the op names the attribute's problem
  }
}

Kind classify(const Graph& g, const Node& n, const std::vector<char>& layout_free) {
  if (n.op_type == "Conv") {
    const Value& x = g.values[n.inputs[0]];
    bool ok = is_4d_float(x) && n.inputs.size() > 1 && n.inputs[1] >= 0 && g.values[n.inputs[1]].is_constant();
    return ok ? Kind::Conv : Kind::Dependent;
  }
  if (n.op_type == "ng.QConv") {
    if (n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.outputs.empty() || n.outputs[0] < 0)
      return Kind::Dependent;
    const Value& x = g.values[n.inputs[0]];
    const Value& y = g.values[n.outputs[0]];
    const bool ok =
        is_4d_data(x) && x.dtype == DataType::UInt8 && is_4d_data(y) && g.values[n.inputs[1]].is_constant();
    return ok ? Kind::QConv : Kind::Dependent;
  }
  if (n.outputs.empty() || n.outputs[0] < 0 || !is_4d_data(g.values[n.outputs[0]])) return Kind::Dependent;
  const Shape& out = g.values[n.outputs[0]].shape;
  if (kBlockedOps.count(n.op_type)) return blocked_path_valid(g, n) ? Kind::Oblivious : Kind::Dependent;
  if (is_qdq(n.op_type)) return per_tensor_qdq(g, n) ? Kind::Oblivious : Kind::Dependent;
  if (kUnaryOblivious.count(n.op_type)) {
    // Extra inputs (Clip's min/max) must be scalars.
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 && !is_scalar_constant(g.values[n.inputs[i]])) return Kind::Dependent;
    return Kind::Oblivious;
  }
  if (kBinaryOblivious.count(n.op_type)) {
    bool full_input = false;
    for (int i : n.inputs) {
      if (i < 0) continue;
      const Value& v = g.values[i];
      if (is_4d_data(v) && v.shape == out) {
        full_input = true;
      } else if (!is_scalar_constant(v) &&
                 !(kChannelBroadcastOps.count(n.op_type) && channel_operand(v, layout_free[i], out))) {
        return Kind::Dependent;
      }
    }
    return full_input ? Kind::Oblivious : Kind::Dependent;
  }
  // Concat, and ng.QConcat (each input requantised element by element), on the channel axis.
  if (n.op_type == "Concat" || n.op_type == "ng.QConcat") {
    int64_t axis = 0;
    try {
      axis = n.attrs.get_int("axis", n.op_type == "Concat" ? 1 : 0);
    } catch (const Error&) {
      return Kind::Dependent;
    }
    if (axis != 1 && axis != -3) return Kind::Dependent;
    for (int i : n.inputs)
      if (i < 0 || !(is_4d_data(g.values[i]) || zero_constant_4d(g.values[i]))) return Kind::Dependent;
    return Kind::Oblivious;
  }
  return Kind::Dependent;
}

}  // namespace

int plan_layout(Graph& g, int max_block, const std::vector<int64_t>* conv_blocks) {
  if (max_block <= 1 || !ensure_shapes(g)) return 0;
  // The int8 kernels' blocks (the same ISA's: 16 under AVX-512, 8 under AVX2, 4 under NEON), down to 4:
  // an int8 pixel of 4 channels is one 32-bit word, the unit the dot-product instructions read.
  const int64_t int8_block = max_block;
  auto int8_block_for = [&](int64_t channels) -> int64_t {
    for (int64_t b = int8_block; b >= 4; b /= 2)
      if (channels % b == 0) return b;
    return 1;
  };

  // block[v]: the block value v is stored with. For a layout-free value (stored with any block alike)
  // it is the block its readers should prefer, so a blocked reader such as a Resize of a pooled map
  // stays blocked; the node computing it still runs on plain data.
  std::vector<int64_t> block(g.values.size(), 1);
  const std::vector<char> layout_free = layout_free_values(g);
  auto is_free = [&](int v) { return v >= 0 && static_cast<size_t>(v) < layout_free.size() && layout_free[v]; };
  // Whether value v stored with block a is already what a reader expecting block b needs.
  auto same_bytes = [&](int v, int64_t a, int64_t b) { return a == b || is_free(v); };
  std::vector<Kind> kind(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) kind[n] = classify(g, g.nodes[n], layout_free);

  // Which values only layout-dependent readers (or the graph's outputs) consume: a Conv writing those
  // writes plain NCHW directly.
  Uses uses = find_uses(g);
  auto only_plain_readers = [&](int v) {
    if (uses.is_graph_output[v] && uses.readers[v].empty()) return true;
    for (auto& r : uses.readers[v])
      if (kind[r.first] != Kind::Dependent ||
          (r.second == 0 && blocked_input_conv_transpose(g, g.nodes[r.first], max_block)))
        return false;
    return true;
  };
  // The same for an ng.QConv's output, looking also through unary element-wise readers (a detection
  // head's DequantizeLinear before a Reshape or a graph output): such a reader's output has its input's
  // layout, so if every reader of that output wants plain data the conv writes plain NCHW.
  std::function<bool(int, int)> wants_plain = [&](int v, int depth) {
    if (uses.is_graph_output[v] && uses.readers[v].empty()) return true;
    for (const auto& [r, slot] : uses.readers[v]) {
      if (kind[r] == Kind::Dependent) continue;
      const Node& reader = g.nodes[r];
      const bool unary = kind[r] == Kind::Oblivious && slot == 0 && reader.outputs.size() == 1 &&
                         reader.outputs[0] >= 0 && (kUnaryOblivious.count(reader.op_type) || is_qdq(reader.op_type));
      if (!unary || depth >= 16 || !wants_plain(reader.outputs[0], depth + 1)) return false;
    }
    return true;
  };

  // Forward: choose each output's block, and remember which inputs need a reorder to what.
  struct Fix {
    size_t node;
    size_t slot;
    int64_t to;
  };
  std::vector<Fix> fixes;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    int out = node.outputs.empty() ? -1 : node.outputs[0];
    switch (kind[n]) {
      case Kind::Conv: {
        // The block itself is the conv policy's (ops/conv_select.h).
        const int64_t channels = g.values[out].shape[1];
        const bool plain = only_plain_readers(out);
        if (is_free(out)) {
          // Its input (and residual) are layout-free or constant too: read and write plain data.
          block[out] = plain ? 1 : rule_conv_out_block(channels, max_block, 1, false);
          node.attrs.set(fused::kInBlock, Attribute::of_int(1));
          node.attrs.set(fused::kOutBlock, Attribute::of_int(1));
          break;
        }
        // A fused residual has the output's layout: adopt the residual's block rather than reorder it.
        int64_t b = fused::has_residual(node) ? block[node.inputs[fused::kResidualInput]]
                    : plain                   ? 1
                            : rule_conv_out_block(channels, max_block, block[node.inputs[0]], depthwise_conv(g, node));
        // The global layout search's choice, where the block is free to choose.
        const int64_t chosen = conv_blocks && n < conv_blocks->size() ? (*conv_blocks)[n] : 0;
        if (chosen > 1 && b > 1 && !fused::has_residual(node) && chosen <= max_block && channels % chosen == 0) b = chosen;
        // A DepthToSpace reader (a ConvTranspose made pointwise) keeps blocks if one divides its output
        // channels; where none does, it reads this block and writes plain data.
        if (!fused::has_residual(node))
          for (const auto& [r, slot] : uses.readers[out])
            if (kind[r] == Kind::Oblivious && g.nodes[r].op_type == "DepthToSpace") {
              const int64_t kept = shuffle_block(b, g.values[g.nodes[r].outputs[0]].shape[1], max_block);
              if (kept > 1) b = kept;
            }
        block[out] = b;
        node.attrs.set(fused::kInBlock, Attribute::of_int(block[node.inputs[0]]));
        node.attrs.set(fused::kOutBlock, Attribute::of_int(b));
        break;
      }
      case Kind::QConv: {
        const int x = node.inputs[0];
        const int64_t channels = g.values[out].shape[1];
        if (is_free(out)) {
          // A pointwise conv of a layout-free input (and residual): reads and writes plain data.
          block[out] = wants_plain(out, 0) ? 1 : int8_block_for(channels);
          node.attrs.set(fused::kInBlock, Attribute::of_int(1));
          node.attrs.set(fused::kOutBlock, Attribute::of_int(1));
          break;
        }
        // A depthwise conv reads its output's block (input block = output block = the int8 block); a
        // plain one stays plain only if its input is plain already.
        const bool depthwise = depthwise_conv(g, node);
        int64_t b = wants_plain(out, 0) && (!depthwise || block[x] == 1) ? 1 : int8_block_for(channels);
        // A fused residual has the output's layout: adopt the residual's block rather than reorder it.
        if (fused::has_residual(node)) b = block[node.inputs[fused::kResidualInput]];
        const int64_t in_b = depthwise ? b : block[x];
        if (!same_bytes(x, block[x], in_b)) fixes.push_back({n, 0, in_b});
        block[out] = b;
        node.attrs.set(fused::kInBlock, Attribute::of_int(in_b));
        node.attrs.set(fused::kOutBlock, Attribute::of_int(b));
        break;
      }
      case Kind::Oblivious: {
        // The common block of the tensor inputs; if they disagree, the first input's block if it divides
        // every input's channels, else plain.
        // A layout-tolerant op's layout is its input 0's (see blocked_path_valid); a binary op's is its
        // inputs' of the output's shape (a per-channel operand is constant or layout-free).
        const Shape& out_shape = g.values[out].shape;
        std::vector<size_t> layout_slots;
        for (size_t s = 0; s < (kBlockedOps.count(node.op_type) ? 1 : node.inputs.size()); ++s) {
          const int i = node.inputs[s];
          if (i < 0 || g.values[i].is_constant()) continue;
          if (kBinaryOblivious.count(node.op_type) && g.values[i].shape != out_shape) continue;
          layout_slots.push_back(s);
        }
        int64_t b = -1;
        bool agree = true;
        for (size_t s : layout_slots) {
          const int i = node.inputs[s];
          if (b < 0) b = block[i];
          else if (block[i] != b) agree = false;
        }
        if (b < 0) b = 1;
        if (!agree)
          for (size_t s : layout_slots)
            if (g.values[node.inputs[s]].shape[1] % b != 0) b = 1;
        // A Concat's zero constants (not among the layout slots) take the block only if it divides them.
        if (node.op_type == "Concat")
          for (int i : node.inputs)
            if (g.values[i].is_constant() && g.values[i].constant.dim(1) % b != 0) b = 1;
        if (node.op_type == "DepthToSpace" && b > 1 && shuffle_block(b, out_shape[1], max_block) != b) {
          // No block divides the output channels: blocked in, plain out (each output row gathers lanes).
          block[out] = 1;
          node.attrs.set(fused::kInBlock, Attribute::of_int(b));
          node.attrs.set(fused::kOutBlock, Attribute::of_int(1));
          break;
        }
        for (size_t s : layout_slots) {
          int i = node.inputs[s];
          if (!same_bytes(i, block[i], b)) fixes.push_back({n, s, b});
        }
        block[out] = b;
        // A layout-free output is computed on plain data (its inputs are layout-free or constant);
        // b is only its readers' preference.
        if (b > 1 && !is_free(out)) {
          node.attrs.set(fused::kOutBlock, Attribute::of_int(b));
          if (kChannelBroadcastOps.count(node.op_type)) node.attrs.set(fused::kInBlock, Attribute::of_int(b));
        }
        if (kBlockedOps.count(node.op_type)) {
          node.attrs.set(fused::kInBlock, Attribute::of_int(b));
          node.attrs.set(fused::kOutBlock, Attribute::of_int(b));
        }
        break;
      }
      case Kind::Dependent:
        for (size_t s = 0; s < node.inputs.size(); ++s) {
          int i = node.inputs[s];
          if (s == 0 && i >= 0 && !is_free(i) && (block[i] == 8 || block[i] == 16) &&
              blocked_input_conv_transpose(g, node, max_block)) {
            node.attrs.set(fused::kInBlock, Attribute::of_int(block[i]));
            continue;
          }
          if (i >= 0 && !same_bytes(i, block[i], 1) && !shape_only_input(node, s)) fixes.push_back({n, s, 1});
        }
        break;
    }
  }

  // A blocked graph output keeps its name: its producer writes a new internal value, and a reorder
  // writes the output's plain version under the original name.
  std::vector<Node> inserts;
  for (int o : std::vector<int>(g.outputs)) {
    if (same_bytes(o, block[o], 1)) continue;
    int inner = g.add_value(g.unique_value_name(g.values[o].name + "_blocked"));
    g.values[inner].dtype = g.values[o].dtype;
    g.values[inner].shape = g.values[o].shape;
    g.values[inner].shape_known = true;
    block.push_back(block[o]);
    for (Node& node : g.nodes) {
      for (int& i : node.inputs)
        if (i == o) i = inner;
      for (int& x : node.outputs)
        if (x == o) x = inner;
    }
    Node r;
    r.name = g.values[o].name + "_to_nchw";
    r.op_type = "ng.Reorder";
    r.inputs = {inner};
    r.outputs = {o};
    r.attrs.set("from_block", Attribute::of_int(block[inner]));
    r.attrs.set("to_block", Attribute::of_int(1));
    inserts.push_back(r);
    block[o] = 1;
  }

  // Reorders for readers: one per (value, target block), shared by every reader that needs it.
  std::map<std::pair<int, int64_t>, int> made;
  for (const Fix& f : fixes) {
    int v = g.nodes[f.node].inputs[f.slot];
    auto key = std::make_pair(v, f.to);
    auto it = made.find(key);
    if (it == made.end()) {
      int id = g.add_value(g.unique_value_name(g.values[v].name + (f.to == 1 ? "_nchw" : "_nchw" + std::to_string(f.to) + "c")));
      g.values[id].dtype = g.values[v].dtype;
      g.values[id].shape = g.values[v].shape;
      g.values[id].shape_known = true;
      block.push_back(f.to);
      Node r;
      r.name = g.values[id].name;
      r.op_type = "ng.Reorder";
      r.inputs = {v};
      r.outputs = {id};
      r.attrs.set("from_block", Attribute::of_int(block[v]));
      r.attrs.set("to_block", Attribute::of_int(f.to));
      if (f.to > 1) r.attrs.set(fused::kOutBlock, Attribute::of_int(f.to));
      inserts.push_back(r);
      it = made.emplace(key, id).first;
    }
    g.nodes[f.node].inputs[f.slot] = it->second;
  }
  const int transforms = static_cast<int>(inserts.size());
  for (auto& r : inserts) g.nodes.push_back(std::move(r));
  g.topo_sort();
  return transforms;
}

// ---- The global layout search's view (graph/layout_search.h) ----
// The same classification and rules as plan_layout above, as a problem for the dynamic programme.

LayoutProblem layout_problem(Graph& g, int max_block) {
  LayoutProblem pb;
  if (max_block <= 1 || !ensure_shapes(g)) return pb;
  const int64_t smallest_block = max_block < 8 ? max_block : 8;
  const std::vector<char> layout_free = layout_free_values(g);
  auto is_free = [&](int v) { return v >= 0 && static_cast<size_t>(v) < layout_free.size() && layout_free[v]; };
  std::vector<Kind> kind(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) kind[n] = classify(g, g.nodes[n], layout_free);
  // A quantised model's int8 convs follow their own block rules (plan_layout's Kind::QConv: the int8
  // block, a depthwise conv reading its output's block, plain writes looking through DequantizeLinear),
  // which the problem does not model: such a graph keeps the rules' layout (no problem to search).
  for (Kind k : kind)
    if (k == Kind::QConv) return pb;
  Uses uses = find_uses(g);
  auto only_plain_readers = [&](int v) {
    if (uses.is_graph_output[v] && uses.readers[v].empty()) return true;
    for (auto& r : uses.readers[v])
      if (kind[r.first] != Kind::Dependent) return false;
    return true;
  };
  pb.values.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    pb.values[v].channels = val.shape_known && val.shape.size() >= 2 && val.shape[1] > 0 ? val.shape[1] : 1;
    pb.values[v].free = is_free(static_cast<int>(v));
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    const int out = node.outputs.empty() ? -1 : node.outputs[0];
    LayoutProblem::Node p;
    switch (kind[n]) {
      case Kind::Conv: {
        const int64_t channels = g.values[out].shape[1];
        p.kind = LayoutProblem::Kind::Conv;
        p.output = out;
        p.tag = static_cast<int>(n);
        if (is_free(out)) {
          // Plain data in and out; its block is its readers' preference only.
          p.choices = {only_plain_readers(out) ? 1 : rule_conv_out_block(channels, max_block, 1, false)};
          p.tag = -1;
          break;
        }
        p.inputs = {node.inputs[0]};
        if (fused::has_residual(node)) {
          p.residual = node.inputs[fused::kResidualInput];
        } else if (only_plain_readers(out)) {
          p.choices = {1};
        } else {
          // The rules' block (which depends on the input's block for a depthwise conv: the caller's cost
          // of that pair decides) first, then the others.
          p.choices = {rule_conv_out_block(channels, max_block, max_block, false)};
          p.keep_narrower_input = depthwise_conv(g, node);
          for (int64_t b = max_block; b >= smallest_block && b > 1; b /= 2)
            if (channels % b == 0 && b != p.choices.front()) p.choices.push_back(b);
        }
        break;
      }
      case Kind::Oblivious: {
        p.kind = LayoutProblem::Kind::Follow;
        p.output = out;
        const Shape& out_shape = g.values[out].shape;
        for (size_t s = 0; s < (kBlockedOps.count(node.op_type) ? 1 : node.inputs.size()); ++s) {
          const int i = node.inputs[s];
          if (i < 0 || g.values[i].is_constant()) continue;
          if (kBinaryOblivious.count(node.op_type) && g.values[i].shape != out_shape) continue;
          p.inputs.push_back(i);
        }
        // A Concat's zero constants take the block only if it divides them.
        if (node.op_type == "Concat")
          for (int i : node.inputs)
            if (i >= 0 && g.values[i].is_constant()) p.must_divide = std::gcd(p.must_divide, g.values[i].constant.dim(1));
        break;
      }
      case Kind::QConv:  // excluded above
      case Kind::Dependent:
        p.kind = LayoutProblem::Kind::Plain;
        for (size_t s = 0; s < node.inputs.size(); ++s)
          if (node.inputs[s] >= 0 && !shape_only_input(node, s)) p.inputs.push_back(node.inputs[s]);
        break;
    }
    pb.nodes.push_back(std::move(p));
  }
  // Blocked graph outputs get a reorder to plain NCHW.
  LayoutProblem::Node outputs;
  outputs.kind = LayoutProblem::Kind::Plain;
  outputs.inputs = g.outputs;
  pb.nodes.push_back(std::move(outputs));
  return pb;
}

}  // namespace ninegrid
