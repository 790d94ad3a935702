// Convolution, ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise and InnerProduct: the layers
// with weight matrices, each followed by ncnn's optional fused activation. Convolutions and InnerProduct
// may be int8 (int8_scale_term, param 8): ncnn_int8.h maps those.
#include <cmath>
#include <limits>

#include "import/ncnn/ncnn_int8.h"
#include "import/ncnn/ncnn_layers.h"

namespace ninegrid {
namespace ncnn {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

void require_positive(int64_t v, const char* what) {
  if (v <= 0) throw Error(std::string(what) + " must be positive, got " + str(v));
}

// Products of layer parameters (each below 2^31) checked against overflow: a garbled file must give an
// error, not undefined behaviour.
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > (int64_t(1) << 40))
    throw Error("layer parameters describe an impossibly large weight tensor (" + str(a) + " x " + str(b) + ")");
  return r;
}

// ncnn's padding parameters: explicit non-negative pads, or all four -233 (SAME_UPPER, TensorFlow's
// "same") or -234 (SAME_LOWER).
struct Pads {
  int left, right, top, bottom;
  std::string auto_pad;  // "" for explicit pads
};

Pads read_pads(const ParamDict& p) {
  Pads pads;
  pads.left = p.get_int(4, 0);
  pads.right = p.get_int(15, pads.left);
  pads.top = p.get_int(14, pads.left);
  pads.bottom = p.get_int(16, pads.top);
  auto all = [&](int v) { return pads.left == v && pads.right == v && pads.top == v && pads.bottom == v; };
  if (all(-233)) {
    pads.auto_pad = "SAME_UPPER";
  } else if (all(-234)) {
    pads.auto_pad = "SAME_LOWER";
  } else if (pads.left < 0 || pads.right < 0 || pads.top < 0 || pads.bottom < 0) {
    throw Error("unsupported padding (left " + str(pads.left) + ", right " + str(pads.right) + ", top " +
                str(pads.top) + ", bottom " + str(pads.bottom) + "): pads must be >= 0, or all -233 or all -234");
  }
  return pads;
}

// The parameters Convolution and Deconvolution (and their depthwise forms) share, read and checked.
struct ConvLayerParams {
  int64_t num_output, kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h;
  Pads pads;
  int bias_term;
  int64_t weight_data_size, group;
  int activation_type;
  std::vector<float> activation_params;
};

ConvLayerParams read_conv_layer_params(const ParamDict& p, bool depthwise) {
  ConvLayerParams c;
  c.num_output = p.get_int(0, 0);
  c.kernel_w = p.get_int(1, 0);
  c.kernel_h = p.get_int(11, static_cast<int>(c.kernel_w));
  c.dilation_w = p.get_int(2, 1);
  c.dilation_h = p.get_int(12, static_cast<int>(c.dilation_w));
  c.stride_w = p.get_int(3, 1);
  c.stride_h = p.get_int(13, static_cast<int>(c.stride_w));
  c.pads = read_pads(p);
  c.bias_term = p.get_int(5, 0);
  c.weight_data_size = p.get_int(6, 0);
  c.group = depthwise ? p.get_int(7, 1) : 1;
  c.activation_type = p.get_int(9, 0);
  c.activation_params = p.get_floats(10);
  require_positive(c.num_output, "num_output (param 0)");
  require_positive(c.kernel_w, "kernel_w (param 1)");
  require_positive(c.kernel_h, "kernel_h (param 11)");
  require_positive(c.dilation_w, "dilation_w (param 2)");
  require_positive(c.dilation_h, "dilation_h (param 12)");
  require_positive(c.stride_w, "stride_w (param 3)");
  require_positive(c.stride_h, "stride_h (param 13)");
  require_positive(c.weight_data_size, "weight_data_size (param 6)");
  require_positive(c.group, "group (param 7)");
  if (c.num_output % c.group != 0)
    throw Error("num_output " + str(c.num_output) + " is not divisible by group " + str(c.group));
  if (c.bias_term != 0 && c.bias_term != 1) throw Error("bias_term (param 5) must be 0 or 1, got " + str(c.bias_term));
  return c;
}

// The window attributes of the ONNX Conv or ConvTranspose node (pads are set by the caller).
void set_window_attrs(Node& n, const ConvLayerParams& c) {
  n.attrs.set("kernel_shape", Attribute::of_ints({c.kernel_h, c.kernel_w}));
  n.attrs.set("strides", Attribute::of_ints({c.stride_h, c.stride_w}));
  n.attrs.set("dilations", Attribute::of_ints({c.dilation_h, c.dilation_w}));
  n.attrs.set("group", Attribute::of_int(c.group));
}

void require_image_input(const BlobInfo& x, const char* layer_kind) {
  if (x.dims != -1 && x.dims != 3)
    throw Error(std::string(layer_kind) + " needs a 3-D (c,h,w) input blob, but its input has " + str(x.dims) +
                " dimensions");
}

}  // namespace

Shape per_channel_shape(int64_t n, int dims) {
  Shape s{n};
  for (int i = 1; i < dims; ++i) s.push_back(1);
  return s;
}

void add_activation(Builder& b, const LayerDecl& layer, int type, const std::vector<float>& params, int x, int y) {
  auto need = [&](size_t n) {
    if (params.size() < n)
      throw Error("activation_type " + str(type) + " needs " + str(static_cast<int64_t>(n)) +
                  " activation_params (param 10), got " + str(static_cast<int64_t>(params.size())));
  };
  const std::string name = layer.name + "/activation";
  switch (type) {
    case 0:
      b.node("Identity", name, {x}, {y});
      return;
    case 1:
      b.node("Relu", name, {x}, {y});
      return;
    case 2: {
      need(1);
      Node& n = b.node("LeakyRelu", name, {x}, {y});
      n.attrs.set("alpha", Attribute::of_float(params[0]));
      return;
    }
    case 3: {
      need(2);
      int lo = b.scalar(layer.name + "/clip_min", params[0]);
      int hi = b.scalar(layer.name + "/clip_max", params[1]);
      b.node("Clip", name, {x, lo, hi}, {y});
      return;
    }
    case 4:
      b.node("Sigmoid", name, {x}, {y});
      return;
    case 5:
      // ONNX Mish (opset 18): x * tanh(softplus(x)), what ncnn computes.
      b.node("Mish", name, {x}, {y}).opset = 18;
      return;
    case 6: {
      need(2);
      // ncnn: x * clamp(alpha * x + beta, 0, 1). ONNX HardSwish fixes alpha = 1/6, beta = 0.5.
      if (params[0] == 1.f / 6.f && params[1] == 0.5f) {
        b.node("HardSwish", name, {x}, {y});
      } else {
        int gate = b.temp(layer.name + "/hardsigmoid");
        Node& hs = b.node("HardSigmoid", layer.name + "/hardsigmoid", {x}, {gate});
        hs.attrs.set("alpha", Attribute::of_float(params[0]));
        hs.attrs.set("beta", Attribute::of_float(params[1]));
        b.node("Mul", name, {x, gate}, {y});
      }
      return;
    }
    default:
      throw Error("unknown activation_type " + str(type));
  }
}

void map_convolution(Builder& b, const LayerDecl& l, WeightReader& wr) {
  const bool depthwise = l.type == "ConvolutionDepthWise";
  const ParamDict& p = l.params;
  if (p.get_int(19, 0) != 0) throw Error("dynamic_weight (weights from input blobs) is not supported");
  expect_io(l, 1, 1, 1);
  const int int8_scale_term = p.get_int(8, 0);
  const Int8Layer int8_kind = depthwise ? Int8Layer::ConvolutionDepthWise : Int8Layer::Convolution;
  if (int8_scale_term != 0) check_int8_scale_term(int8_kind, int8_scale_term);
  const ConvLayerParams c = read_conv_layer_params(p, depthwise);
  const float pad_value = p.get_float(18, 0.f);
  const int64_t per_input = checked_mul(checked_mul(c.num_output, c.kernel_w), c.kernel_h);
  if (c.weight_data_size % per_input != 0)
    throw Error("weight_data_size " + str(c.weight_data_size) + " is not a multiple of num_output x kernel_h x kernel_w = " +
                str(per_input));
  const int64_t in_per_group = c.weight_data_size / per_input;
  const BlobInfo x = b.in(l, 0);
  require_image_input(x, l.type.c_str());
  if (!c.pads.auto_pad.empty() && pad_value != 0.f)
    throw Error("a nonzero pad_value (param 18) with SAME padding is not supported");
  if (int8_scale_term != 0 && pad_value != 0.f)
    throw Error("a nonzero pad_value (param 18) in an int8 convolution is not supported");

  // ncnn stores weights as [num_output][in_channels / group][kernel_h][kernel_w]: ONNX's OIHW.
  const Shape w_shape{c.num_output, in_per_group, c.kernel_h, c.kernel_w};
  std::vector<int> inputs{x.value, -1};
  float requantize_scale = 0.f;
  if (int8_scale_term == 0) {
    inputs[1] = b.constant(l.name + "/weight", float_tensor(w_shape, wr.load(c.weight_data_size, 0, l.name)));
    if (c.bias_term) inputs.push_back(b.constant(l.name + "/bias", float_tensor({c.num_output}, wr.load(c.num_output, 1, l.name))));
  } else {
    const WeightReader::Blob w = wr.load_weights(c.weight_data_size, l.name);
    std::vector<float> bias;
    if (c.bias_term) bias = wr.load(c.num_output, 1, l.name);
    const Int8Scales scales = read_int8_scales(wr, l.name, int8_kind, int8_scale_term, c.num_output, c.group);
    inputs[0] = quantized_input(b, x.value, scales.bottom, l.name);
    inputs[1] = dequantized_weights(b, l.name, int8_weights(w, scales.weight, c.weight_data_size / c.num_output), w_shape,
                                    scales.weight, /*axis=*/0);
    if (c.bias_term) inputs.push_back(b.constant(l.name + "/bias", float_tensor({c.num_output}, bias)));
    requantize_scale = scales.top;
  }

  bool explicit_pad_node = c.pads.auto_pad.empty() && pad_value != 0.f &&
                           (c.pads.left > 0 || c.pads.right > 0 || c.pads.top > 0 || c.pads.bottom > 0);
  if (explicit_pad_node) {
    // ONNX Conv pads with zeros only: pad with ncnn's value first.
    int padded = b.temp(l.name + "/padded");
    int pv = b.ints(l.name + "/pads", {0, 0, c.pads.top, c.pads.left, 0, 0, c.pads.bottom, c.pads.right});
    int val = b.scalar(l.name + "/pad_value", pad_value);
    b.node("Pad", l.name + "/pad", {x.value, pv, val}, {padded}).attrs.set("mode", Attribute::of_string("constant"));
    inputs[0] = padded;
  }

  const bool requantize = requantize_scale > 0.f;
  int conv_out = c.activation_type == 0 && !requantize ? b.out(l, 0, 3) : b.temp(l.name + "/conv");
  Node& n = b.node("Conv", l.name, inputs, {conv_out});
  set_window_attrs(n, c);
  if (!c.pads.auto_pad.empty()) {
    n.attrs.set("auto_pad", Attribute::of_string(c.pads.auto_pad));
  } else if (explicit_pad_node) {
    n.attrs.set("pads", Attribute::of_ints({0, 0, 0, 0}));
  } else {
    n.attrs.set("pads", Attribute::of_ints({c.pads.top, c.pads.left, c.pads.bottom, c.pads.right}));
  }
  if (!requantize) {
    if (c.activation_type != 0) add_activation(b, l, c.activation_type, c.activation_params, conv_out, b.out(l, 0, 3));
    return;
  }
  int y = conv_out;
  if (c.activation_type != 0) {
    y = b.temp(l.name + "/activated");
    add_activation(b, l, c.activation_type, c.activation_params, conv_out, y);
  }
  requantized_output(b, l, y, requantize_scale, 3);
}

void map_deconvolution(Builder& b, const LayerDecl& l, WeightReader& wr) {
  const bool depthwise = l.type == "DeconvolutionDepthWise";
  const ParamDict& p = l.params;
  if (p.get_int(28, 0) != 0) throw Error("dynamic_weight (weights from input blobs) is not supported");
  expect_io(l, 1, 1, 1);
  if (p.get_int(8, 0) != 0) throw Error("int8 quantized deconvolution (param 8) is not supported");
  const ConvLayerParams c = read_conv_layer_params(p, depthwise);
  const int64_t output_pad_right = p.get_int(18, 0);
  const int64_t output_pad_bottom = p.get_int(19, static_cast<int>(output_pad_right));
  const int64_t output_w = p.get_int(20, 0);
  const int64_t output_h = p.get_int(21, static_cast<int>(output_w));
  if (!c.pads.auto_pad.empty()) throw Error("SAME padding (-233/-234) for deconvolution is not supported");
  if (output_w != 0 || output_h != 0) throw Error("a fixed output size (params 20/21) is not supported");
  if (output_pad_right < 0 || output_pad_bottom < 0) throw Error("output padding (params 18/19) must be >= 0");
  const int64_t maxk = checked_mul(c.kernel_w, c.kernel_h);
  const int64_t per_input = checked_mul(c.num_output, maxk);
  if (c.weight_data_size % per_input != 0)
    throw Error("weight_data_size " + str(c.weight_data_size) + " is not a multiple of num_output x kernel_h x kernel_w");
  const int64_t in_per_group = c.weight_data_size / per_input;
  const int64_t out_per_group = c.num_output / c.group;
  const BlobInfo x = b.in(l, 0);
  require_image_input(x, l.type.c_str());

  // ncnn: [group][out_per_group][in_per_group][k] (scattered without flipping, as ConvTranspose does).
  // ONNX ConvTranspose: [in_channels][out_per_group][k], in_channels = group * in_per_group.
  std::vector<float> w = wr.load(c.weight_data_size, 0, l.name);
  std::vector<float> wt(w.size());
  for (int64_t g = 0; g < c.group; ++g)
    for (int64_t o = 0; o < out_per_group; ++o)
      for (int64_t i = 0; i < in_per_group; ++i)
        for (int64_t k = 0; k < maxk; ++k)
          wt[((g * in_per_group + i) * out_per_group + o) * maxk + k] =
              w[((g * out_per_group + o) * in_per_group + i) * maxk + k];
  int weight =
      b.constant(l.name + "/weight", float_tensor({c.group * in_per_group, out_per_group, c.kernel_h, c.kernel_w}, wt));
  std::vector<int> inputs{x.value, weight};
  if (c.bias_term) inputs.push_back(b.constant(l.name + "/bias", float_tensor({c.num_output}, wr.load(c.num_output, 1, l.name))));

  int conv_out = c.activation_type == 0 ? b.out(l, 0, 3) : b.temp(l.name + "/deconv");
  Node& n = b.node("ConvTranspose", l.name, inputs, {conv_out});
  set_window_attrs(n, c);
  n.attrs.set("pads", Attribute::of_ints({c.pads.top, c.pads.left, c.pads.bottom, c.pads.right}));
  n.attrs.set("output_padding", Attribute::of_ints({output_pad_bottom, output_pad_right}));
  if (c.activation_type != 0) add_activation(b, l, c.activation_type, c.activation_params, conv_out, b.out(l, 0, 3));
}

void map_inner_product(Builder& b, const LayerDecl& l, WeightReader& wr) {
  const ParamDict& p = l.params;
  expect_io(l, 1, 1, 1);
  const int64_t num_output = p.get_int(0, 0);
  const int bias_term = p.get_int(1, 0);
  const int64_t weight_data_size = p.get_int(2, 0);
  const int activation_type = p.get_int(9, 0);
  const std::vector<float> activation_params = p.get_floats(10);
  const int int8_scale_term = p.get_int(8, 0);
  if (int8_scale_term != 0) check_int8_scale_term(Int8Layer::InnerProduct, int8_scale_term);
  require_positive(num_output, "num_output (param 0)");
  require_positive(weight_data_size, "weight_data_size (param 2)");
  if (weight_data_size % num_output != 0)
    throw Error("weight_data_size " + str(weight_data_size) + " is not a multiple of num_output " + str(num_output));
  if (bias_term != 0 && bias_term != 1) throw Error("bias_term (param 1) must be 0 or 1, got " + str(bias_term));
  const int64_t num_input = weight_data_size / num_output;
  const BlobInfo x = b.in(l, 0);

  // Weights [num_output][num_input]; an int8 layer's as int8 with their per-output scales.
  std::vector<float> w;
  std::vector<int8_t> wq;
  std::vector<float> bias;
  Int8Scales scales;
  if (int8_scale_term == 0) {
    w = wr.load(weight_data_size, 0, l.name);
    if (bias_term) bias = wr.load(num_output, 1, l.name);
  } else {
    const WeightReader::Blob blob = wr.load_weights(weight_data_size, l.name);
    if (bias_term) bias = wr.load(num_output, 1, l.name);
    scales = read_int8_scales(wr, l.name, Int8Layer::InnerProduct, int8_scale_term, num_output, 1);
    wq = int8_weights(blob, scales.weight, num_input);
  }
  const bool int8 = int8_scale_term != 0;

  if (x.dims == 2) {
    // ncnn applies the layer to each row of a 2-D blob (h rows of num_input): a MatMul with W^T.
    int weight;
    if (int8) {
      std::vector<int8_t> t(wq.size());
      for (int64_t o = 0; o < num_output; ++o)
        for (int64_t i = 0; i < num_input; ++i) t[i * num_output + o] = wq[o * num_input + i];
      weight = dequantized_weights(b, l.name, t, {num_input, num_output}, scales.weight, /*axis=*/1);
    } else {
      std::vector<float> wt(w.size());
      for (int64_t o = 0; o < num_output; ++o)
        for (int64_t i = 0; i < num_input; ++i) wt[i * num_output + o] = w[o * num_input + i];
      weight = b.constant(l.name + "/weight", float_tensor({num_input, num_output}, wt));
    }
    const int in = int8 ? quantized_input(b, x.value, scales.bottom, l.name) : x.value;
    int y = (bias_term || activation_type) ? b.temp(l.name + "/matmul") : b.out(l, 0, 2);
    b.node("MatMul", l.name, {in, weight}, {y});
    if (bias_term) {
      int biased = activation_type ? b.temp(l.name + "/biased") : b.out(l, 0, 2);
      b.node("Add", l.name + "/bias_add", {y, b.constant(l.name + "/bias", float_tensor({num_output}, bias))}, {biased});
      y = biased;
    }
    if (activation_type) add_activation(b, l, activation_type, activation_params, y, b.out(l, 0, 2));
    return;
  }

  // Any other input is flattened to num_input values (ncnn reads the blob as one vector).
  int flat = x.value;
  if (x.dims != 1) {
    flat = b.temp(l.name + "/flatten");
    b.node("Flatten", l.name + "/flatten", {x.value}, {flat}).attrs.set("axis", Attribute::of_int(1));
  }
  int weight;
  if (int8) {
    flat = quantized_input(b, flat, scales.bottom, l.name);
    weight = dequantized_weights(b, l.name, wq, {num_output, num_input}, scales.weight, /*axis=*/0);
  } else {
    weight = b.constant(l.name + "/weight", float_tensor({num_output, num_input}, w));
  }
  std::vector<int> inputs{flat, weight};
  if (bias_term) inputs.push_back(b.constant(l.name + "/bias", float_tensor({num_output}, bias)));
  int y = activation_type ? b.temp(l.name + "/gemm") : b.out(l, 0, 1);
  b.node("Gemm", l.name, inputs, {y}).attrs.set("transB", Attribute::of_int(1));
  if (activation_type) add_activation(b, l, activation_type, activation_params, y, b.out(l, 0, 1));
}

}  // namespace ncnn
}  // namespace ninegrid
