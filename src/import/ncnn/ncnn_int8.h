// ncnn's int8 layers, as its quantiser (ncnn2table, then ncnn2int8) writes them: Convolution,
// ConvolutionDepthWise and InnerProduct with int8_scale_term (param 8) set. After the weights (int8 data,
// tag 0x000D4B38, or float weights that ncnn quantises when it loads them) and the float bias come, as
// raw float32 blobs, the weight scales (one per output channel; per group or one for the layer in a
// ConvolutionDepthWise), the input's scale, and with int8_scale_term > 100 the output's.
//
// ncnn's arithmetic (src/layer/convolution.cpp and its x86 twin): a scale s is 127 / threshold, so
//   x_q = float2int8(x * s_in)                              (core/ncnn_int8.h: half away from zero, [-127, 127])
//   y   = act(float(sum of x_q * w_q) * (1 / (s_in * s_w[c])) + bias[c])
//   y_q = float2int8(y * s_out)                             only with int8_scale_term > 100; the int8 result
//                                                           is read as it is by the int8 layers after it
// The importer writes that as ONNX's QDQ form, so that the QDQ fusion (graph/passes/fuse_qdq.cpp) makes
// the integer ops of it as it does for ONNX models:
//   x -> QuantizeLinear(1 / s_in, int8 0, ncnn rounding) -> DequantizeLinear -> Conv(DequantizeLinear(w_q,
//   1 / s_w), bias) -> act [-> QuantizeLinear(1 / s_out) -> DequantizeLinear]
// A layer's output that the next int8 layer quantises (ncnn's float output, then float2int8 in the next
// layer; or its fused requantisation) fuses into ng.QConv's requantisation; an output read in float
// (concatenations, additions, the network's outputs) leaves the layer a float Conv over the dequantised
// int8 values, which computes ncnn's values up to float summation order.
//
// Where ninegrid's result can differ from ncnn's by a rounding (all else is exact):
//   - the float conv sums float products (x_q / s_in) * (w_q / s_w) where ncnn scales an exact int32 sum;
//   - a fused ng.QConv rounds its requantisation half to even (kernels/quantized.h) where ncnn rounds half
//     away from zero, and it computes float(sum + round(bias / unit)) * m with one multiplier
//     m = (1 / s_in) * (1 / s_w) / (1 / s_out), where ncnn computes (float(sum) * scale_in + bias) * s_out:
//     the bias is rounded to the accumulator's unit and the products round differently, so a value within
//     a float rounding of k + 0.5 units may land one int8 step away;
//   - ncnn's x86 build dequantises with a fused multiply-add (one rounding where the formula has two), and
//     its scalar tails round with round(), not its SIMD code's +-0.5 (core/ncnn_int8.h);
//   - ncnn's x86 build also departs from its own formula: its int8 depthwise convolution on 8-channel packs
//     takes an approximate reciprocal (rcp_ps, relative error up to 1.5 * 2^-12) for 1 / (s_in * s_w), so
//     its requantised value can be one step from the formula's where the exact value lies that close (up to
//     0.05 of a step at 127) to a rounding boundary.
//
// A weight scale of 0 (or +inf, what ncnn2table writes for an all-zero filter: 127 / 0) makes ncnn's
// dequantisation factor 0, so that channel's output is its bias: its int8 weights are replaced by zeros,
// which gives the same. Other scales must be positive and finite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "import/ncnn/ncnn_builder.h"

namespace ninegrid {
namespace ncnn {

enum class Int8Layer { Convolution, ConvolutionDepthWise, InnerProduct };

struct Int8Scales {
  std::vector<float> weight;  // one per output channel (a depthwise layer's per-group scale repeated)
  float bottom = 0.f;         // the input's: x_q = float2int8(x * bottom)
  float top = 0.f;            // int8_scale_term > 100: the output requantised with it (else 0)
};

// Whether int8_scale_term is one ncnn reads for that layer (Convolution 1, 2, 101, 102; depthwise 1/101
// per group, 2/102 per layer; InnerProduct 1, 2); throws Error naming the value otherwise.
void check_int8_scale_term(Int8Layer kind, int int8_scale_term);

// Reads the scales that follow the weights and bias and checks them (throws Error naming the scale).
Int8Scales read_int8_scales(WeightReader& wr, const std::string& layer, Int8Layer kind, int int8_scale_term,
                            int64_t num_output, int64_t group);

// The int8 weights, [num_output][per_output]: as stored, or float weights quantised as ncnn's load_model
// does (float2int8(w * scale[o])); channels whose scale is 0 or +inf are zeros.
std::vector<int8_t> int8_weights(const WeightReader::Blob& blob, const std::vector<float>& scale, int64_t per_output);

// DequantizeLinear(int8 constant of `shape`, 1 / scale along `axis`) for a layer's weights; a channel
// with scale 0 or +inf (all-zero weights) gets the finest scale of the others.
int dequantized_weights(Builder& b, const std::string& layer, const std::vector<int8_t>& w, const Shape& shape,
                        const std::vector<float>& scale, int axis);

// The float value an int8 layer computes on: its input x quantised with ncnn's scale s and dequantised
// again, shared by every int8 layer reading x with the same scale. When x is the int8 output of a
// requantising layer (int8_scale_term > 100), ncnn reads that int8 tensor as it is, and so does this
// (dequantised with the reader's own scale, as ncnn's reader does).
int quantized_input(Builder& b, int x, float s, const std::string& layer);

// int8_scale_term > 100: the layer's float result y is requantised with ncnn's scale s (its int8 output),
// the layer's output blob (`dims` ncnn dimensions) is bound to its dequantised value, and the int8 tensor
// is kept for the int8 layers that read the blob.
void requantized_output(Builder& b, const LayerDecl& l, int y, float s, int dims);

}  // namespace ncnn
}  // namespace ninegrid
