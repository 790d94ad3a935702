// ncnn reader: a .param text and its .bin weights in, a validated Graph out (ONNX operator semantics,
// batch dimension 1 prepended to ncnn's c/h/w blobs). Never crashes on malformed input.
#pragma once

#include <cstddef>
#include <string>

#include "ir/graph.h"

namespace ninegrid {

// Throws Error on malformed param text, truncated weights or unsupported layers (naming the layer).
Graph import_ncnn(const std::string& param_text, const void* weights, size_t weights_size);

}  // namespace ninegrid
