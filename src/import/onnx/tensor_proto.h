// ONNX TensorProto -> Tensor. Shared by the model importer (initializers, Constant nodes, tensor
// attributes) and by tests that read ONNX's serialized test data (input_0.pb, output_0.pb).
#pragma once

#include <cstddef>
#include <string>

#include "import/onnx/raw_data_split.h"
#include "ninegrid/tensor.h"

namespace onnx {
class TensorProto;
}

namespace ninegrid {

// Converts a parsed TensorProto into a Tensor with its own storage. Validates everything a hostile file
// could get wrong: dims negative or overflowing, a byte or element count that does not match the dims,
// unknown or unsupported element types (strings, complex), external data. `what` names the tensor in
// error messages ("initializer 'conv1.weight'"). Throws Error.
// `raw`, when given, stands for the proto's raw_data: the bytes split_raw_data left out of its skeleton
// (raw->data null: the tensor has none).
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& what, const RawBytes* raw = nullptr);

// Parses a serialized TensorProto (an ONNX test's input_0.pb) and converts it. Throws Error.
Tensor parse_tensor_proto(const void* data, size_t size);

}  // namespace ninegrid
