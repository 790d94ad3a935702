// Layers that move data without arithmetic on it: Split, Concat, Crop, Reshape, Flatten, Permute,
// Padding, and the resampling Interp.
#include <cmath>

#include "import/ncnn/ncnn_layers.h"

namespace ninegrid {
namespace ncnn {

namespace {

constexpr int kAbsent = -233;  // ncnn's "parameter not given" marker
constexpr int kMaxInterpSize = 1 << 20;  // per side; far beyond any image a CNN resamples

std::string str(int64_t v) { return std::to_string(v); }

int require_dims(const BlobInfo& x, const char* layer) {
  if (x.dims < 1)
    throw Error(std::string(layer) + " needs the rank of its input blob, which is unknown at import time");
  return x.dims;
}

bool is_power_of_two_at_least_one(float s) {
  if (!(s >= 1.f) || !(s <= 1024.f)) return false;  // larger scales go to ng.Interp, which bounds sizes
  int e = 0;
  return std::frexp(s, &e) == 0.5f;
}

}  // namespace

void map_split(Builder& b, const LayerDecl& l, WeightReader&) {
  if (l.tops.empty()) throw Error("Split needs at least one output blob");
  expect_io(l, 1, 1, l.tops.size());
  const BlobInfo x = b.in(l, 0);
  for (size_t i = 0; i < l.tops.size(); ++i) b.alias(l, i, x);
}

void map_concat(Builder& b, const LayerDecl& l, WeightReader&) {
  if (l.bottoms.empty()) throw Error("Concat needs at least one input blob");
  expect_io(l, 1, l.bottoms.size(), 1);
  const int axis = l.params.get_int(0, 0);
  std::vector<int> ins;
  int dims = -1;
  for (size_t i = 0; i < l.bottoms.size(); ++i) {
    const BlobInfo x = b.in(l, i);
    if (x.dims > 0 && dims > 0 && x.dims != dims)
      throw Error("input blobs have different ranks (" + str(dims) + "-D and " + str(x.dims) + "-D)");
    if (x.dims > 0) dims = x.dims;
    ins.push_back(x.value);
  }
  if (dims > 0 && (axis < -dims || axis >= dims))
    throw Error("axis " + str(axis) + " is out of range for " + str(dims) + "-D blobs");
  Node& n = b.node("Concat", l.name, ins, {b.out(l, 0, dims)});
  n.attrs.set("axis", Attribute::of_int(axis >= 0 ? axis + 1 : axis));
}

void map_crop(Builder& b, const LayerDecl& l, WeightReader&) {
  const ParamDict& p = l.params;
  expect_io(l, 1, 2, 1);
  const BlobInfo x = b.in(l, 0);
  const int woffset = p.get_int(0, 0), hoffset = p.get_int(1, 0), doffset = p.get_int(13, 0), coffset = p.get_int(2, 0);
  auto require_offsets = [&](std::initializer_list<int> offs) {
    for (int o : offs)
      if (o < 0)
        throw Error("negative or -233 crop offsets (axis-selecting Crop forms) are not supported, got " + str(o));
  };
  if (l.bottoms.size() == 2) {
    // Crop the first blob to the second's size, starting at the offsets.
    require_offsets({woffset, hoffset, doffset, coffset});
    const BlobInfo ref = b.in(l, 1);
    Node& n = b.node("ng.Crop", l.name, {x.value, ref.value}, {b.out(l, 0, x.dims)});
    n.attrs.set("mode", Attribute::of_string("reference"));
    n.attrs.set("offsets", Attribute::of_ints({coffset, doffset, hoffset, woffset}));
    return;
  }
  const std::vector<int> starts = p.get_ints(9), ends = p.get_ints(10), axes = p.get_ints(11);
  if (!starts.empty() && !ends.empty()) {
    if (starts.size() != ends.size()) throw Error("starts (param 9) and ends (param 10) differ in length");
    if (!axes.empty() && axes.size() != starts.size()) throw Error("axes (param 11) and starts (param 9) differ in length");
    if (starts.size() > 4) throw Error("at most 4 axes can be cropped");
    Node& n = b.node("ng.Crop", l.name, {x.value}, {b.out(l, 0, x.dims)});
    n.attrs.set("mode", Attribute::of_string("slice"));
    n.attrs.set("starts", Attribute::of_ints(std::vector<int64_t>(starts.begin(), starts.end())));
    n.attrs.set("ends", Attribute::of_ints(std::vector<int64_t>(ends.begin(), ends.end())));
    n.attrs.set("axes", Attribute::of_ints(std::vector<int64_t>(axes.begin(), axes.end())));
    return;
  }
  const int w2 = p.get_int(6, 0), h2 = p.get_int(7, 0), d2 = p.get_int(15, 0), c2 = p.get_int(8, 0);
  require_offsets({woffset, hoffset, doffset, coffset, w2, h2, d2, c2});
  Node& n = b.node("ng.Crop", l.name, {x.value}, {b.out(l, 0, x.dims)});
  n.attrs.set("mode", Attribute::of_string("offsets"));
  n.attrs.set("offsets", Attribute::of_ints({coffset, doffset, hoffset, woffset}));
  n.attrs.set("end_offsets", Attribute::of_ints({c2, d2, h2, w2}));
  // 0 and -233 both leave a size unconstrained.
  n.attrs.set("sizes", Attribute::of_ints({p.get_int(5, 0), p.get_int(14, 0), p.get_int(4, 0), p.get_int(3, 0)}));
}

void map_reshape(Builder& b, const LayerDecl& l, WeightReader&) {
  const ParamDict& p = l.params;
  expect_io(l, 1, 1, 1);
  const int w = p.get_int(0, kAbsent), h = p.get_int(1, kAbsent), d = p.get_int(11, kAbsent), c = p.get_int(2, kAbsent);
  const int permute = p.get_int(3, 0);
  if (permute != 0 && permute != 1) throw Error("permute (param 3) must be 0 or 1, got " + str(permute));
  // ncnn's rule for the output rank: each missing outer dimension lowers it.
  int ndim = 4;
  if (d == kAbsent) ndim = 3;
  if (c == kAbsent) ndim = 2;
  if (h == kAbsent) ndim = 1;
  if (w == kAbsent) ndim = 0;
  const BlobInfo x = b.in(l, 0);
  if (ndim == 0) {  // no shape at all: ncnn passes the blob through
    b.alias(l, 0, x);
    return;
  }
  // Outer to inner, as the graph orders dimensions.
  std::vector<int> target;
  if (ndim == 4) target = {c, d, h, w};
  if (ndim == 3) target = {c, h, w};
  if (ndim == 2) target = {h, w};
  if (ndim == 1) target = {w};
  int inferred = 0;
  bool all_positive = true;
  for (int t : target) {
    if (t == -1) ++inferred;
    if (t < -1) throw Error("target dimension " + str(t) + " is invalid (use > 0, 0 to keep, -1 to infer)");
    if (t <= 0) all_positive = false;
  }
  if (inferred > 1) throw Error("more than one target dimension is -1");
  if (all_positive && permute == 0) {
    std::vector<int64_t> shape{1};
    for (int t : target) shape.push_back(t);
    b.node("Reshape", l.name, {x.value, b.ints(l.name + "/shape", shape)}, {b.out(l, 0, ndim)});
    return;
  }
  Node& n = b.node("ng.Reshape", l.name, {x.value}, {b.out(l, 0, ndim)});
  n.attrs.set("shape", Attribute::of_ints(std::vector<int64_t>(target.begin(), target.end())));
  n.attrs.set("permute", Attribute::of_int(permute));
}

void map_flatten(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const BlobInfo x = b.in(l, 0);
  b.node("Flatten", l.name, {x.value}, {b.out(l, 0, 1)}).attrs.set("axis", Attribute::of_int(1));
}

void map_permute(Builder& b, const LayerDecl& l, WeightReader&) {
  expect_io(l, 1, 1, 1);
  const int order = l.params.get_int(0, 0);
  const BlobInfo x = b.in(l, 0);
  const int dims = require_dims(x, "Permute");
  // ncnn names orders innermost first ("h w c" = w-major planes of h...); as permutations of (c,h,w):
  static const std::vector<int64_t> kOrders3[6] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::vector<int64_t> perm;
  if (dims == 1 && order == 0) perm = {0};
  if (dims == 2 && (order == 0 || order == 1)) perm = order == 0 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0};
  if (dims == 3 && order >= 0 && order < 6) perm = kOrders3[order];
  if (perm.empty()) throw Error("order_type " + str(order) + " on a " + str(dims) + "-D blob is not supported");
  std::vector<int64_t> full{0};
  for (int64_t a : perm) full.push_back(a + 1);
  Node& n = b.node("Transpose", l.name, {x.value}, {b.out(l, 0, dims)});
  n.attrs.set("perm", Attribute::of_ints(full));
}

void map_padding(Builder& b, const LayerDecl& l, WeightReader&) {
  const ParamDict& p = l.params;
  expect_io(l, 1, 1, 1);
  const int64_t top = p.get_int(0, 0), bottom = p.get_int(1, 0), left = p.get_int(2, 0), right = p.get_int(3, 0);
  const int type = p.get_int(4, 0);
  const float value = p.get_float(5, 0.f);
  const int64_t front = p.get_int(7, 0), behind = p.get_int(8, static_cast<int>(front));
  if (p.get_int(6, 0) != 0) throw Error("per-channel pad values (param 6) are not supported");
  if (top < 0 || bottom < 0 || left < 0 || right < 0 || front < 0 || behind < 0)
    throw Error("negative padding is not supported");
  static const char* const kModes[] = {"constant", "edge", "reflect"};
  if (type < 0 || type > 2) throw Error("type (param 4) must be 0 (constant), 1 (replicate) or 2 (reflect), got " + str(type));
  const BlobInfo x = b.in(l, 0);
  const int dims = require_dims(x, "Padding");
  std::vector<int64_t> begin, end;
  if (dims == 1) begin = {0, left}, end = {0, right};
  if (dims == 2) begin = {0, top, left}, end = {0, bottom, right};
  if (dims == 3) begin = {0, front, top, left}, end = {0, behind, bottom, right};  // front/behind pad channels
  if (dims == 4) begin = {0, 0, front, top, left}, end = {0, 0, behind, bottom, right};  // ... or depth
  if (begin.empty()) throw Error("Padding of a " + str(dims) + "-D blob is not supported");
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  int pv = b.ints(l.name + "/pads", pads);
  int cv = b.scalar(l.name + "/value", value);
  Node& n = b.node("Pad", l.name, {x.value, pv, cv}, {b.out(l, 0, dims)});
  n.attrs.set("mode", Attribute::of_string(kModes[type]));
}

void map_interp(Builder& b, const LayerDecl& l, WeightReader&) {
  const ParamDict& p = l.params;
  const int resize_type = p.get_int(0, 0);
  const float height_scale = p.get_float(1, 1.f);
  const float width_scale = p.get_float(2, 1.f);
  const int output_height = p.get_int(3, 0);
  const int output_width = p.get_int(4, 0);
  const int align_corner = p.get_int(6, 0);
  if (p.get_int(5, 0) != 0 || l.bottoms.size() == 2)
    throw Error("Interp sized by a second input blob (dynamic_target_size) is not supported");
  expect_io(l, 1, 1, 1);
  if (resize_type < 1 || resize_type > 3)
    throw Error("resize_type (param 0) must be 1 (nearest), 2 (bilinear) or 3 (bicubic), got " + str(resize_type));
  if (output_height < 0 || output_width < 0 || output_height > kMaxInterpSize || output_width > kMaxInterpSize)
    throw Error("output size (params 3, 4) must be between 0 and " + str(kMaxInterpSize));
  if (!(height_scale > 0.f) || !(width_scale > 0.f) || !std::isfinite(height_scale) || !std::isfinite(width_scale))
    throw Error("scales (params 1, 2) must be positive and finite");
  const BlobInfo x = b.in(l, 0);
  if (x.dims != -1 && x.dims != 3)
    throw Error("Interp of a " + str(x.dims) + "-D blob is not supported (only 3-D c,h,w blobs)");
  const int y = b.out(l, 0, 3);

  // ONNX Resize computes the same function when the size comes from power-of-two scales: then ncnn's
  // size ratio equals the scale exactly, and nearest's x * (1/scale) equals ONNX's x / scale.
  const bool by_scale = output_height == 0 && output_width == 0;
  if (by_scale && is_power_of_two_at_least_one(height_scale) && is_power_of_two_at_least_one(width_scale) &&
      (resize_type == 1 || (resize_type == 2 && align_corner == 0))) {
    int scales = b.constant(l.name + "/scales", float_tensor({4}, {1.f, 1.f, height_scale, width_scale}));
    Node& n = b.node("Resize", l.name, {x.value, -1, scales}, {y});
    if (resize_type == 1) {
      n.attrs.set("mode", Attribute::of_string("nearest"));
      n.attrs.set("coordinate_transformation_mode", Attribute::of_string("asymmetric"));
      n.attrs.set("nearest_mode", Attribute::of_string("floor"));
    } else {
      n.attrs.set("mode", Attribute::of_string("linear"));
      n.attrs.set("coordinate_transformation_mode", Attribute::of_string("half_pixel"));
    }
    return;
  }
  Node& n = b.node("ng.Interp", l.name, {x.value}, {y});
  n.attrs.set("resize_type", Attribute::of_int(resize_type));
  n.attrs.set("scales", Attribute::of_floats({height_scale, width_scale}));
  n.attrs.set("output_size", Attribute::of_ints({output_height, output_width}));
  n.attrs.set("align_corner", Attribute::of_int(align_corner ? 1 : 0));
}

}  // namespace ncnn
}  // namespace ninegrid
