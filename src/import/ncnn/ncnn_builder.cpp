#include "import/ncnn/ncnn_builder.h"

namespace ninegrid {
namespace ncnn {

Builder::Builder(const ParamFile& file) {
  for (const LayerDecl& l : file.layers)
    for (const std::string& t : l.tops) blob_names_.insert(t);
}

const BlobInfo& Builder::in(const LayerDecl& layer, size_t i) const {
  auto it = blobs_.find(layer.bottoms.at(i));
  // parse_param_text guarantees every input is produced earlier; a layer that failed to bind its
  // outputs would already have thrown.
  if (it == blobs_.end()) throw Error("input blob '" + layer.bottoms[i] + "' has no value");
  return it->second;
}

int Builder::out(const LayerDecl& layer, size_t i, int dims) {
  int v = graph.add_value(layer.tops.at(i));
  graph.values[v].dtype = DataType::Float32;
  blobs_[layer.tops[i]] = {v, dims};
  return v;
}

void Builder::alias(const LayerDecl& layer, size_t i, const BlobInfo& blob) { blobs_[layer.tops.at(i)] = blob; }

int Builder::temp(const std::string& base) {
  std::string name = base;
  for (int k = 1; blob_names_.count(name) || graph.find_value(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  int v = graph.add_value(name);
  graph.values[v].dtype = DataType::Float32;
  return v;
}

int Builder::constant(const std::string& base, Tensor t) {
  int v = temp(base);
  Value& val = graph.values[v];
  val.dtype = t.dtype();
  val.shape = t.shape();
  val.shape_known = true;
  val.constant = std::move(t);
  return v;
}

int Builder::scalar(const std::string& base, float v) { return constant(base, float_tensor({}, {v})); }

int Builder::ints(const std::string& base, const std::vector<int64_t>& v) {
  return constant(base, Tensor::from_vector<int64_t>(DataType::Int64, {static_cast<int64_t>(v.size())}, v));
}

Node& Builder::node(const std::string& op_type, const std::string& name, std::vector<int> inputs,
                    std::vector<int> outputs) {
  Node n;
  n.name = name;
  n.op_type = op_type;
  n.opset = op_type.compare(0, 3, "ng.") == 0 ? 0 : kEmittedOpset;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  graph.nodes.push_back(std::move(n));
  return graph.nodes.back();
}

void Builder::finish(const ParamFile& file) {
  std::unordered_set<std::string> consumed;
  for (const LayerDecl& l : file.layers)
    for (const std::string& b : l.bottoms) consumed.insert(b);
  for (const LayerDecl& l : file.layers) {
    for (const std::string& t : l.tops) {
      if (consumed.count(t)) continue;
      const BlobInfo& b = blobs_.at(t);
      int v = b.value;
      if (graph.values[v].name != t) {
        // A Split output nobody reads: give it its own value so the output keeps the blob's name.
        int o = graph.add_value(t);
        graph.values[o].dtype = DataType::Float32;
        node("Identity", l.name + "/" + t, {v}, {o});
        v = o;
      }
      graph.outputs.push_back(v);
    }
  }
}

void expect_io(const LayerDecl& layer, size_t min_in, size_t max_in, size_t n_out) {
  size_t n = layer.bottoms.size();
  if (n < min_in || n > max_in) {
    std::string want = min_in == max_in ? std::to_string(min_in) : std::to_string(min_in) + " to " + std::to_string(max_in);
    throw Error("expects " + want + " input blobs, has " + std::to_string(n));
  }
  if (layer.tops.size() != n_out)
    throw Error("expects " + std::to_string(n_out) + " output blobs, has " + std::to_string(layer.tops.size()));
}

Tensor float_tensor(const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(DataType::Float32, shape, values);
}

}  // namespace ncnn
}  // namespace ninegrid
