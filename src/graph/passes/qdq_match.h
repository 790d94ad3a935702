// What the QDQ fusion passes (fuse_qdq.cpp, fuse_qdq_ops.cpp) recognise around a float op: a uint8
// input behind a DequantizeLinear, int8 constant weights behind one, an int32 or float bias, and the
// [Relu | Clip ->] QuantizeLinear its output goes to. Each matcher returns false when the pattern (or a
// parameter it needs as a constant) is not there, and the op then stays float.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/passes/graph_edit.h"
#include "ir/graph.h"

namespace ninegrid {
namespace qdq {

// A node's constant float input as a vector, or false.
bool constant_floats(const Graph& g, const Node& n, size_t slot, std::vector<float>* out);

// The per-tensor scale and zero point of a QuantizeLinear or DequantizeLinear node, when both are
// constants (an absent zero point is uint8 0), with the zero point's type.
struct TensorParams {
  float scale = 0.f;
  int32_t zero_point = 0;
  DataType type = DataType::UInt8;
};
bool per_tensor_params(const Graph& g, const Node& n, TensorParams* p);
bool same_params(const TensorParams& a, const TensorParams& b);

// The int8 weights and scales behind W = DequantizeLinear(int8 constant of rank `rank`), symmetric (zero
// point 0), one scale or one per index of `channel_axis` (the DequantizeLinear's axis).
struct QuantWeights {
  int wq = -1;               // the int8 constant's value id
  std::vector<float> scale;  // 1 value or one per channel
};
bool quantized_weights(const Graph& g, const std::vector<int>& prod, int w, int rank, int channel_axis,
                       QuantWeights* out);

// The bias value `b` (-1: none, all zeros) as m int32 values in units of x_scale * w_scale[c]: from
// DequantizeLinear(int32 constant) or a float constant. False when it is neither (or does not fit int32).
bool quantized_bias(const Graph& g, const std::vector<int>& prod, int b, int64_t m, float x_scale,
                    const std::vector<float>& w_scale, std::vector<int32_t>* out);

// The clamp an activation (Relu or Clip with constant bounds) before a QuantizeLinear with parameters `y`
// imposes on the quantised output, or false for an activation that is not such a clamp.
bool activation_clamp(const Graph& g, const Node& act, const TensorParams& y, int32_t* qmin, int32_t* qmax);

// The uint8 tensor behind a float value v = DequantizeLinear(q) with per-tensor constant parameters.
struct DequantizedInput {
  int q = -1;  // the uint8 value
  TensorParams params;
};
bool dequantized_input(const Graph& g, const std::vector<int>& prod, int v, DequantizedInput* out);

// Where a float output y goes: [Relu | Clip ->] QuantizeLinear(uint8), each step the only reader of the
// one before. `act` is -1 without an activation (or when activations are not allowed).
struct QuantizedOutput {
  int act = -1, quantize = -1;  // node indices
  int q = -1;                   // the uint8 value the QuantizeLinear writes
  TensorParams params;
  int32_t qmin = 0, qmax = 255;
};
bool quantized_output(const Graph& g, const Uses& uses, int y, bool allow_activation, QuantizedOutput* out);
// Whether that output takes the whole [0, 255]: not so after an ncnn QuantizeLinear ([1, 255] around 128),
// whose clamp the ops without one (value-moving ops, ng.QConcat, the average pools) cannot apply.
inline bool full_range(const QuantizedOutput& y) { return y.qmin == 0 && y.qmax == 255; }

}  // namespace qdq
}  // namespace ninegrid
