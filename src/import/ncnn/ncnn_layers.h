// One mapping function per ncnn layer family: reads the layer's parameters (and its weights, in the
// order ncnn's load_model reads them), adds the equivalent nodes and binds the layer's output blobs.
// They throw Error with a plain message; the importer prefixes the layer's name and type.
#pragma once

#include <map>
#include <string>

#include "import/ncnn/ncnn_builder.h"

namespace ninegrid {
namespace ncnn {

using LayerMapper = void (*)(Builder&, const LayerDecl&, WeightReader&);

// ncnn layer type -> mapping function, for every supported type.
const std::map<std::string, LayerMapper>& layer_mappers();

// Families (defined in ncnn_layers_*.cpp).
void map_input(Builder&, const LayerDecl&, WeightReader&);
void map_convolution(Builder&, const LayerDecl&, WeightReader&);  // Convolution, ConvolutionDepthWise
void map_deconvolution(Builder&, const LayerDecl&, WeightReader&);  // Deconvolution, DeconvolutionDepthWise
void map_inner_product(Builder&, const LayerDecl&, WeightReader&);
void map_pooling(Builder&, const LayerDecl&, WeightReader&);
void map_relu(Builder&, const LayerDecl&, WeightReader&);
void map_unary(Builder&, const LayerDecl&, WeightReader&);  // Sigmoid, TanH, AbsVal
void map_clip(Builder&, const LayerDecl&, WeightReader&);
void map_hard_sigmoid(Builder&, const LayerDecl&, WeightReader&);
void map_hard_swish(Builder&, const LayerDecl&, WeightReader&);
void map_prelu(Builder&, const LayerDecl&, WeightReader&);
void map_batch_norm(Builder&, const LayerDecl&, WeightReader&);
void map_scale(Builder&, const LayerDecl&, WeightReader&);
void map_dropout(Builder&, const LayerDecl&, WeightReader&);
void map_softmax(Builder&, const LayerDecl&, WeightReader&);
void map_binary_op(Builder&, const LayerDecl&, WeightReader&);
void map_eltwise(Builder&, const LayerDecl&, WeightReader&);
void map_split(Builder&, const LayerDecl&, WeightReader&);
void map_concat(Builder&, const LayerDecl&, WeightReader&);
void map_crop(Builder&, const LayerDecl&, WeightReader&);
void map_reshape(Builder&, const LayerDecl&, WeightReader&);
void map_flatten(Builder&, const LayerDecl&, WeightReader&);
void map_permute(Builder&, const LayerDecl&, WeightReader&);
void map_padding(Builder&, const LayerDecl&, WeightReader&);
void map_interp(Builder&, const LayerDecl&, WeightReader&);

// Shared helpers.
// Appends ncnn's fused activation (activation_type 0..6 with its params) after `x`, writing `y`;
// with type 0 it adds an Identity. Used by Convolution, Deconvolution and InnerProduct.
void add_activation(Builder& b, const LayerDecl& layer, int type, const std::vector<float>& params, int x, int y);
// The shape a per-channel parameter vector needs to broadcast against an ncnn blob of `dims`
// dimensions (channel = ncnn's outermost axis): {n} for 1-D, {n,1} for 2-D, {n,1,1} for 3-D, ...
Shape per_channel_shape(int64_t n, int dims);

}  // namespace ncnn
}  // namespace ninegrid
