// ncnn import: parse the .param text, walk the layers in order (reading each one's weights from the .bin
// in that same order, as ncnn's Net::load_model does), and map every layer onto graph nodes.
#include "import/ncnn/ncnn_importer.h"

#include "import/ncnn/ncnn_builder.h"
#include "import/ncnn/ncnn_layers.h"
#include "import/ncnn/ncnn_param.h"
#include "import/ncnn/ncnn_weights.h"

namespace ninegrid {

namespace ncnn {

void map_input(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 0, 0, 1);
  const int w = l.params.get_int(0, 0), h = l.params.get_int(1, 0), c = l.params.get_int(2, 0);
  const int d = l.params.get_int(11, 0);
  if (w < 0 || h < 0 || c < 0 || d < 0) throw Error("input dimensions (params 0, 1, 2, 11) must be >= 0");
  auto dim = [](int v) { return v > 0 ? int64_t(v) : int64_t(-1); };
  // The blob's rank follows the outermost dimension given; with none given it is an image (c,h,w) of
  // unknown size, which is what ncnn models without input shapes expect.
  Shape shape;
  int dims;
  if (d > 0) {
    shape = {1, dim(c), d, dim(h), dim(w)};
    dims = 4;
  } else if (c > 0 || (w == 0 && h == 0)) {
    shape = {1, dim(c), dim(h), dim(w)};
    dims = 3;
  } else if (h > 0) {
    shape = {1, h, dim(w)};
    dims = 2;
  } else {
    shape = {1, w};
    dims = 1;
  }
  int v = b.out(l, 0, dims);
  Value& val = b.graph.values[v];
  val.dtype = DataType::Float32;
  val.shape = shape;
  val.shape_known = true;
  b.graph.inputs.push_back(v);
}

const std::map<std::string, LayerMapper>& layer_mappers() {
  static const std::map<std::string, LayerMapper> table = {
      {"Input", map_input},
      {"Convolution", map_convolution},
      {"ConvolutionDepthWise", map_convolution},
      {"Deconvolution", map_deconvolution},
      {"DeconvolutionDepthWise", map_deconvolution},
      {"InnerProduct", map_inner_product},
      {"Pooling", map_pooling},
      {"ReLU", map_relu},
      {"Sigmoid", map_unary},
      {"TanH", map_unary},
      {"AbsVal", map_unary},
      {"Clip", map_clip},
      {"HardSigmoid", map_hard_sigmoid},
      {"HardSwish", map_hard_swish},
      {"PReLU", map_prelu},
      {"BatchNorm", map_batch_norm},
      {"Scale", map_scale},
      {"Dropout", map_dropout},
      {"Softmax", map_softmax},
      {"BinaryOp", map_binary_op},
      {"Eltwise", map_eltwise},
      {"Split", map_split},
      {"Concat", map_concat},
      {"Crop", map_crop},
      {"Reshape", map_reshape},
      {"Flatten", map_flatten},
      {"Permute", map_permute},
      {"Padding", map_padding},
      {"Interp", map_interp},
  };
  return table;
}

}  // namespace ncnn

Graph import_ncnn(const std::string& param_text, const void* weights, size_t weights_size) {
  using namespace ncnn;
  const ParamFile file = parse_param_text(param_text);
  Builder builder(file);
  WeightReader reader(weights, weights_size);
  const auto& mappers = layer_mappers();
  for (const LayerDecl& layer : file.layers) {
    auto it = mappers.find(layer.type);
    if (it == mappers.end())
      throw Error("unsupported ncnn layer type '" + layer.type + "' (layer '" + layer.name + "')");
    try {
      it->second(builder, layer, reader);
    } catch (const Error& e) {
      const std::string msg = e.what();
      // Truncation errors already name the layer; everything else gets the layer's name and type.
      if (msg.rfind("ncnn weights file is truncated", 0) == 0) throw;
      throw Error("ncnn layer '" + layer.name + "' (" + layer.type + "): " + msg);
    }
  }
  if (builder.graph.inputs.empty()) throw Error("ncnn model has no Input layer");
  builder.finish(file);
  builder.graph.validate();
  return std::move(builder.graph);
}

}  // namespace ninegrid
