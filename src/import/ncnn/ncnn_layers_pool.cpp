// Pooling: global pooling becomes GlobalMaxPool/GlobalAveragePool (ncnn returns a 1-D blob of channels,
// hence the Flatten); windowed max pooling becomes ONNX MaxPool where that is provably the same function;
// everything else becomes ng.Pooling, which reproduces ncnn's padding and averaging rules exactly.
#include "import/ncnn/ncnn_layers.h"

namespace ninegrid {
namespace ncnn {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// ONNX MaxPool ignores padding when taking the max; ncnn pads with -FLT_MAX. They agree whenever every
// window holds at least one real element, and ONNX's output size (ceil_mode for ncnn's "full" padding,
// whose extra tail pad is always less than the stride) agrees when no window starts past the input plus
// its leading pad. Both hold for any input size if each side's padding, counting the tail, is less than
// the kernel.
bool maxpool_is_exact(int pad_mode, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end) {
  const int64_t tail = pad_mode == 0 ? stride - 1 : 0;
  return pad_begin < kernel && pad_end + tail < kernel;
}

}  // namespace

void map_pooling(Builder& b, const LayerDecl& l, WeightReader&) {
  const ParamDict& p = l.params;
  expect_io(l, 1, 1, 1);
  const int pooling_type = p.get_int(0, 0);
  const int64_t kernel_w = p.get_int(1, 0);
  const int64_t kernel_h = p.get_int(11, static_cast<int>(kernel_w));
  const int64_t stride_w = p.get_int(2, 1);
  const int64_t stride_h = p.get_int(12, static_cast<int>(stride_w));
  const int64_t pad_left = p.get_int(3, 0);
  const int64_t pad_right = p.get_int(14, static_cast<int>(pad_left));
  const int64_t pad_top = p.get_int(13, static_cast<int>(pad_left));
  const int64_t pad_bottom = p.get_int(15, static_cast<int>(pad_top));
  const int global_pooling = p.get_int(4, 0);
  const int pad_mode = p.get_int(5, 0);
  const int count_include_pad = p.get_int(6, 0);
  if (p.get_int(7, 0) != 0) throw Error("adaptive pooling (param 7) is not supported");
  if (pooling_type != 0 && pooling_type != 1)
    throw Error("pooling_type (param 0) must be 0 (max) or 1 (average), got " + str(pooling_type));
  const BlobInfo x = b.in(l, 0);
  if (x.dims != -1 && x.dims != 3)
    throw Error("Pooling needs a 3-D (c,h,w) input blob, but its input has " + str(x.dims) + " dimensions");

  if (global_pooling) {
    int pooled = b.temp(l.name + "/pool");
    b.node(pooling_type == 0 ? "GlobalMaxPool" : "GlobalAveragePool", l.name, {x.value}, {pooled});
    b.node("Flatten", l.name + "/flatten", {pooled}, {b.out(l, 0, 1)}).attrs.set("axis", Attribute::of_int(1));
    return;
  }

  if (kernel_w <= 0 || kernel_h <= 0) throw Error("kernel size must be positive, got " + str(kernel_h) + "x" + str(kernel_w));
  if (stride_w <= 0 || stride_h <= 0) throw Error("stride must be positive, got " + str(stride_h) + "x" + str(stride_w));
  if (pad_left < 0 || pad_right < 0 || pad_top < 0 || pad_bottom < 0) throw Error("pads must be >= 0");
  if (pad_mode < 0 || pad_mode > 3) throw Error("pad_mode (param 5) must be 0..3, got " + str(pad_mode));

  const int y = b.out(l, 0, 3);
  if (pooling_type == 0 && (pad_mode == 0 || pad_mode == 1) &&
      maxpool_is_exact(pad_mode, kernel_h, stride_h, pad_top, pad_bottom) &&
      maxpool_is_exact(pad_mode, kernel_w, stride_w, pad_left, pad_right)) {
    Node& n = b.node("MaxPool", l.name, {x.value}, {y});
    n.attrs.set("kernel_shape", Attribute::of_ints({kernel_h, kernel_w}));
    n.attrs.set("strides", Attribute::of_ints({stride_h, stride_w}));
    n.attrs.set("pads", Attribute::of_ints({pad_top, pad_left, pad_bottom, pad_right}));
    n.attrs.set("ceil_mode", Attribute::of_int(pad_mode == 0 ? 1 : 0));
    return;
  }
  Node& n = b.node("ng.Pooling", l.name, {x.value}, {y});
  n.attrs.set("pooling_type", Attribute::of_int(pooling_type));
  n.attrs.set("kernel_shape", Attribute::of_ints({kernel_h, kernel_w}));
  n.attrs.set("strides", Attribute::of_ints({stride_h, stride_w}));
  n.attrs.set("pads", Attribute::of_ints({pad_top, pad_left, pad_bottom, pad_right}));
  n.attrs.set("pad_mode", Attribute::of_int(pad_mode));
  n.attrs.set("count_include_pad", Attribute::of_int(count_include_pad ? 1 : 0));
}

}  // namespace ncnn
}  // namespace ninegrid
