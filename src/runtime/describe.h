// What the public API says about a node: the work fused into it and its output layout.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace ninegrid {

// "Add" for a fused residual, then the fused activation's name ("Relu", "Clip" ...).
std::vector<std::string> fused_ops(const Node& node);
// "NCHW" or the channel-blocked "NCHW<block>c" of output 0.
std::string output_layout(const Node& node);
// "fp32", "fp16", "int8" for those element types, otherwise the type's name.
std::string precision_name(DataType dtype);

}  // namespace ninegrid
