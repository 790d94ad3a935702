// ONNX QOperator nodes (QLinearConv, QLinearMatMul, and ONNX Runtime's com.microsoft QLinearAdd, QGemm,
// QLinearConcat, ... as its quantiser writes them) rewritten at import into the QDQ form
// DequantizeLinear -> float op -> QuantizeLinear, which graph/passes/fuse_qdq.cpp turns into the same int8
// ops as a QDQ model's: one path for both formats. Unoptimised (opt-level 0), or where a parameter is not
// a constant, the QDQ form runs as it reads.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace ninegrid {

// Whether `op_type` of `domain` (empty or "ai.onnx": the default domain) is a QOperator node rewritten here.
bool is_qoperator(const std::string& domain, const std::string& op_type);

// The names of the com.microsoft operators that are rewritten, for messages ("QLinearAdd, QGemm, ...").
std::string supported_microsoft_ops();

// Appends the QDQ form of `node` (inputs and outputs already value ids of `graph`, attributes converted)
// to `out`, adding the intermediate values and constants to `graph`. Throws Error naming the node on a
// missing input or an unsupported attribute value.
void expand_qoperator(Graph& graph, const Node& node, std::vector<Node>& out);

}  // namespace ninegrid
