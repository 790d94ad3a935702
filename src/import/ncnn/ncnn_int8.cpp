#include "import/ncnn/ncnn_int8.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/ncnn_int8.h"
#include "ir/quant_attrs.h"

namespace ninegrid {
namespace ncnn {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string fstr(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const char* kind_name(Int8Layer kind) {
  switch (kind) {
    case Int8Layer::Convolution: return "Convolution";
    case Int8Layer::ConvolutionDepthWise: return "ConvolutionDepthWise";
    default: return "InnerProduct";
  }
}

// An activation scale (input or output): ncnn divides by it, so it must be a positive finite number.
float checked_activation_scale(float s, const char* what) {
  if (!(s > 0.f) || !std::isfinite(s))
    throw Error(std::string(what) + " " + fstr(s) + " is not a positive finite number");
  return s;
}

// A weight scale whose channel ncnn dequantises with factor 0 (its output is the bias alone).
bool zero_channel(float s) { return s == 0.f || s == std::numeric_limits<float>::infinity(); }

int scalar_int8_zero(Builder& b, const std::string& base) {
  return b.constant(base, Tensor::from_vector<int8_t>(DataType::Int8, {}, {0}));
}

}  // namespace

void check_int8_scale_term(Int8Layer kind, int t) {
  const bool ok = kind == Int8Layer::InnerProduct ? (t == 1 || t == 2) : (t == 1 || t == 2 || t == 101 || t == 102);
  if (!ok)
    throw Error("unsupported int8_scale_term (param 8) " + str(t) + " for " + kind_name(kind) + " (ncnn reads " +
                (kind == Int8Layer::InnerProduct ? "1 or 2" : "1, 2, 101 or 102") + ")");
}

Int8Scales read_int8_scales(WeightReader& wr, const std::string& layer, Int8Layer kind, int int8_scale_term,
                            int64_t num_output, int64_t group) {
  check_int8_scale_term(kind, int8_scale_term);
  Int8Scales s;
  // ncnn's load_model order: weight scales, the input's scale, then (> 100) the output's.
  if (kind == Int8Layer::ConvolutionDepthWise) {
    const bool per_group = int8_scale_term % 100 == 1;
    const std::vector<float> w = wr.load(per_group ? group : 1, 1, layer);
    s.weight.resize(static_cast<size_t>(num_output));
    const int64_t per = num_output / group;
    for (int64_t o = 0; o < num_output; ++o) s.weight[o] = w[per_group ? o / per : 0];
  } else {
    s.weight = wr.load(num_output, 1, layer);
  }
  s.bottom = wr.load(1, 1, layer)[0];
  if (int8_scale_term > 100) s.top = wr.load(1, 1, layer)[0];

  for (size_t c = 0; c < s.weight.size(); ++c) {
    const float v = s.weight[c];
    if (!(v >= 0.f))  // negative, -inf or NaN
      throw Error("weight scale " + fstr(v) + " of output channel " + str(static_cast<int64_t>(c)) +
                  " is not a positive number (nor 0 or inf, which ncnn takes for an all-zero filter)");
  }
  checked_activation_scale(s.bottom, "input scale (bottom_blob_int8_scale)");
  if (int8_scale_term > 100) checked_activation_scale(s.top, "output scale (top_blob_int8_scale)");
  return s;
}

std::vector<int8_t> int8_weights(const WeightReader::Blob& blob, const std::vector<float>& scale, int64_t per_output) {
  const int64_t outputs = static_cast<int64_t>(scale.size());
  std::vector<int8_t> q(static_cast<size_t>(outputs * per_output));
  for (int64_t o = 0; o < outputs; ++o) {
    const bool zero = zero_channel(scale[o]);
    for (int64_t i = 0; i < per_output; ++i) {
      const int64_t k = o * per_output + i;
      if (zero) q[k] = 0;
      else if (blob.is_int8) q[k] = blob.int8[k];
      else q[k] = static_cast<int8_t>(ncnn_float2int8(blob.floats[k] * scale[o]));
    }
  }
  return q;
}

int dequantized_weights(Builder& b, const std::string& layer, const std::vector<int8_t>& w, const Shape& shape,
                        const std::vector<float>& scale, int axis) {
  // A channel ncnn ignores has zero weights here; its scale only sets the unit its bias is rounded to in
  // an integer op, so it gets the finest of the other channels'.
  float finest = 0.f;
  for (float s : scale)
    if (!zero_channel(s) && (finest == 0.f || 1.f / s < finest)) finest = 1.f / s;
  std::vector<float> inv(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) inv[c] = zero_channel(scale[c]) ? (finest > 0.f ? finest : 1.f) : 1.f / scale[c];
  const int64_t n = static_cast<int64_t>(scale.size());
  const int wq = b.constant(layer + "/weight_int8", Tensor::from_vector<int8_t>(DataType::Int8, shape, w));
  const int ws = b.constant(layer + "/weight_scale", float_tensor({n}, inv));
  const int wz = b.constant(layer + "/weight_zero_point",
                            Tensor::from_vector<int8_t>(DataType::Int8, {n}, std::vector<int8_t>(inv.size(), 0)));
  const int wf = b.temp(layer + "/weight");
  b.node("DequantizeLinear", layer + "/weight_dequantize", {wq, ws, wz}, {wf}).attrs.set("axis", Attribute::of_int(axis));
  return wf;
}

int quantized_input(Builder& b, int x, float s, const std::string& layer) {
  auto cached = b.int8_inputs.find({x, s});
  if (cached != b.int8_inputs.end()) return cached->second;
  const int scale = b.scalar(layer + "/input_scale", 1.f / s);
  const int zero_point = scalar_int8_zero(b, layer + "/input_zero_point");
  int q;
  auto stored = b.int8_outputs.find(x);
  if (stored != b.int8_outputs.end()) {
    q = stored->second;  // ncnn's int8 blob, read as it is
  } else {
    q = b.temp(layer + "/input_int8");
    b.graph.values[q].dtype = DataType::Int8;
    b.node("QuantizeLinear", layer + "/input_quantize", {x, scale, zero_point}, {q})
        .attrs.set(kNcnnScale, Attribute::of_float(s));
  }
  const int xf = b.temp(layer + "/input_dequantized");
  b.node("DequantizeLinear", layer + "/input_dequantize", {q, scale, zero_point}, {xf});
  b.int8_inputs[{x, s}] = xf;
  return xf;
}

void requantized_output(Builder& b, const LayerDecl& l, int y, float s, int dims) {
  const int scale = b.scalar(l.name + "/output_scale", 1.f / s);
  const int zero_point = scalar_int8_zero(b, l.name + "/output_zero_point");
  const int q = b.temp(l.name + "/output_int8");
  b.graph.values[q].dtype = DataType::Int8;
  b.node("QuantizeLinear", l.name + "/output_quantize", {y, scale, zero_point}, {q})
      .attrs.set(kNcnnScale, Attribute::of_float(s));
  const int out = b.out(l, 0, dims);
  b.node("DequantizeLinear", l.name + "/output_dequantize", {q, scale, zero_point}, {out});
  b.int8_outputs[out] = q;
}

}  // namespace ncnn
}  // namespace ninegrid
