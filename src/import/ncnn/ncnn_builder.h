// Graph construction for the ncnn importer: maps ncnn blob names onto graph values, invents unique names
// for intermediate values, and adds nodes and weights. Shared by the per-layer mapping functions.
//
// Shapes: ncnn blobs are (w), (h,w), (c,h,w) or (c,d,h,w) with no batch; the graph prepends a batch
// dimension of 1, so an ncnn blob of `dims` dimensions is a tensor of rank dims + 1 and ncnn's axis a is
// the graph's axis a + 1. The builder tracks each blob's ncnn dims where the layer types determine it
// (-1 where they do not), because several ncnn layers change behaviour with the rank of their input.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "import/ncnn/ncnn_param.h"
#include "import/ncnn/ncnn_weights.h"

namespace ninegrid {
namespace ncnn {

struct BlobInfo {
  int value = -1;
  int dims = -1;  // ncnn dimensions (1..4), -1 if not known at import time
};

// The ONNX opset whose semantics the emitted standard nodes follow.
constexpr int kEmittedOpset = 17;

class Builder {
 public:
  explicit Builder(const ParamFile& file);

  Graph graph;

  // The i-th input blob of a layer (validated by the caller's expect_io).
  const BlobInfo& in(const LayerDecl& layer, size_t i) const;
  // Creates the value for the layer's i-th output blob, named like the blob.
  int out(const LayerDecl& layer, size_t i, int dims);
  // Makes the layer's i-th output blob another name for an existing value (no node), as Split does.
  void alias(const LayerDecl& layer, size_t i, const BlobInfo& blob);
  // A new intermediate value whose name starts with `base` and clashes with no blob or value.
  int temp(const std::string& base);
  // A weight/constant value.
  int constant(const std::string& base, Tensor t);
  int scalar(const std::string& base, float v);
  int ints(const std::string& base, const std::vector<int64_t>& v);
  // Adds a node (ONNX ops get opset kEmittedOpset, "ng." ops 0) and returns it for attributes.
  Node& node(const std::string& op_type, const std::string& name, std::vector<int> inputs, std::vector<int> outputs);

  // Graph outputs: the blobs no layer consumes, in the order they are produced.
  void finish(const ParamFile& file);

  // The int8 layers' tensors (ncnn_int8.cpp): (float value, ncnn scale) -> the dequantised value that int8
  // layers reading it with that scale compute on; float value -> the int8 tensor a requantising layer
  // (int8_scale_term > 100) wrote for it.
  std::map<std::pair<int, float>, int> int8_inputs;
  std::map<int, int> int8_outputs;

 private:
  std::unordered_map<std::string, BlobInfo> blobs_;
  std::unordered_set<std::string> blob_names_;  // every blob of the file, reserved for out()
};

// Throws Error unless the layer has inputs in [min_in, max_in] and exactly n_out outputs.
void expect_io(const LayerDecl& layer, size_t min_in, size_t max_in, size_t n_out);

// A float32 tensor from values, with the given shape (element counts must agree; checked).
Tensor float_tensor(const Shape& shape, const std::vector<float>& values);

}  // namespace ncnn
}  // namespace ninegrid
