// Reading a float ONNX model for `ninegrid quantize` and bringing it into the form quantisation works on,
// and the copies the tool runs (with more of its values made graph outputs).
#pragma once

#include <string>
#include <vector>

#include "ninegrid_onnx/onnx.pb.h"

namespace ninegrid::quant {

// Reads an ONNX file (at most max_bytes; 0 = no limit). Throws Error naming the file for an ncnn model
// (.param, or ncnn's magic number), a file that does not parse, external data, or a model that is
// already quantised.
onnx::ModelProto read_onnx_model(const std::string& path, int64_t max_bytes);
std::string serialize_model(const onnx::ModelProto& model);

// What prepare_model changed.
struct PrepareNotes {
  int constants = 0;     // Constant nodes turned into initializers
  int identities = 0;    // Identity nodes removed (their readers read the input)
  int batchnorms = 0;    // BatchNormalization nodes folded into the Conv before them
  int64_t old_opset = 0, new_opset = 0;
};
// Brings a float model into the form quantisation works on: Constant nodes become initializers (so
// weights behind them are seen as weights), Identity nodes go, a BatchNormalization whose input is a
// Conv's only output is folded into that Conv's weights and bias (as any int8 deployment does: a
// quantised conv cannot be followed by a float BatchNorm without a float round trip), and the default
// domain's opset is raised to 13 when it is lower. Throws Error naming the node whose meaning would
// change at opset 13 (the user then re-exports the model at opset 13).
PrepareNotes prepare_model(onnx::ModelProto& model);

// Makes these values graph outputs too (for reading them after a run), without a declared type (ninegrid
// infers it); names already outputs or that are graph inputs are skipped.
void add_graph_outputs(onnx::ModelProto& model, const std::vector<std::string>& names);

// Every output of the top-level graph's nodes, in node order.
std::vector<std::string> node_outputs(const onnx::ModelProto& model);

// The real (non-initializer) graph inputs.
std::vector<std::string> graph_inputs(const onnx::ModelProto& model);

}  // namespace ninegrid::quant
