#include "ir/quant_attrs.h"

#include <cmath>
#include <string>

namespace ninegrid {

namespace {

float scale_of(const Attributes& attrs, const std::string& name) {
  if (!attrs.has(name)) throw Error("attribute '" + name + "' is required");
  const float s = attrs.get_float(name, 0.f);
  if (!(s > 0.f) || !std::isfinite(s)) throw Error(name + " " + std::to_string(s) + " is not a positive finite number");
  return s;
}

int32_t byte_of(const Attributes& attrs, const std::string& name, int64_t fallback) {
  const int64_t v = attrs.get_int(name, fallback);
  if (v < 0 || v > 255) throw Error(name + " " + std::to_string(v) + " is outside a uint8's range [0, 255]");
  return static_cast<int32_t>(v);
}

}  // namespace

TensorQuant read_tensor_quant(const Attributes& attrs, const std::string& prefix) {
  TensorQuant q;
  q.scale = scale_of(attrs, prefix + "_scale");
  if (!attrs.has(prefix + "_zero_point")) throw Error("attribute '" + prefix + "_zero_point' is required");
  q.zero_point = byte_of(attrs, prefix + "_zero_point", 0);
  return q;
}

void write_tensor_quant(const TensorQuant& q, const std::string& prefix, Attributes& attrs) {
  attrs.set(prefix + "_scale", Attribute::of_float(q.scale));
  attrs.set(prefix + "_zero_point", Attribute::of_int(q.zero_point));
}

QClamp read_qclamp(const Attributes& attrs) {
  QClamp c;
  c.qmin = byte_of(attrs, "qmin", 0);
  c.qmax = byte_of(attrs, "qmax", 255);
  if (c.qmin > c.qmax) throw Error("qmin " + std::to_string(c.qmin) + " exceeds qmax " + std::to_string(c.qmax));
  return c;
}

void write_qclamp(const QClamp& c, Attributes& attrs) {
  attrs.set("qmin", Attribute::of_int(c.qmin));
  attrs.set("qmax", Attribute::of_int(c.qmax));
}

QConvAttrs read_qconv_attrs(const Attributes& attrs) {
  QConvAttrs q;
  const TensorQuant x = read_tensor_quant(attrs, "x"), y = read_tensor_quant(attrs, "y");
  q.x_scale = x.scale, q.x_zero_point = x.zero_point;
  q.y_scale = y.scale, q.y_zero_point = y.zero_point;
  q.w_scale = attrs.get_floats("w_scale");
  if (q.w_scale.empty()) throw Error("attribute 'w_scale' is required");
  for (size_t i = 0; i < q.w_scale.size(); ++i)
    if (!(q.w_scale[i] > 0.f) || !std::isfinite(q.w_scale[i]))
      throw Error("w_scale " + std::to_string(q.w_scale[i]) + " (index " + std::to_string(i) +
                  ") is not a positive finite number");
  const QClamp clamp = read_qclamp(attrs);
  q.qmin = clamp.qmin, q.qmax = clamp.qmax;
  q.has_residual = attrs.has("r_scale");
  if (q.has_residual) {
    const TensorQuant r = read_tensor_quant(attrs, "r");
    q.r_scale = r.scale, q.r_zero_point = r.zero_point;
  }
  q.has_add = attrs.has("add_y_scale");
  if (q.has_add) {
    if (q.has_residual) throw Error("a fused residual (r_scale) and a fused QAdd (add_y_scale) exclude each other");
    q.add_a = read_tensor_quant(attrs, "add_a");
    q.add_b = read_tensor_quant(attrs, "add_b");
    q.add_y = read_tensor_quant(attrs, "add_y");
    q.add_clamp.qmin = byte_of(attrs, "add_qmin", 0);
    q.add_clamp.qmax = byte_of(attrs, "add_qmax", 255);
    if (q.add_clamp.qmin > q.add_clamp.qmax)
      throw Error("add_qmin " + std::to_string(q.add_clamp.qmin) + " exceeds add_qmax " +
                  std::to_string(q.add_clamp.qmax));
    const int64_t input = attrs.get_int("add_conv_input", 0);
    if (input != 0 && input != 1) throw Error("add_conv_input " + std::to_string(input) + " is neither 0 nor 1");
    q.add_conv_input = static_cast<int>(input);
  }
  return q;
}

void write_qconv_attrs(const QConvAttrs& q, Attributes& attrs) {
  write_tensor_quant({q.x_scale, q.x_zero_point}, "x", attrs);
  attrs.set("w_scale", Attribute::of_floats(q.w_scale));
  write_tensor_quant({q.y_scale, q.y_zero_point}, "y", attrs);
  write_qclamp({q.qmin, q.qmax}, attrs);
  if (q.has_residual) write_tensor_quant({q.r_scale, q.r_zero_point}, "r", attrs);
  if (q.has_add) {
    write_tensor_quant(q.add_a, "add_a", attrs);
    write_tensor_quant(q.add_b, "add_b", attrs);
    write_tensor_quant(q.add_y, "add_y", attrs);
    attrs.set("add_qmin", Attribute::of_int(q.add_clamp.qmin));
    attrs.set("add_qmax", Attribute::of_int(q.add_clamp.qmax));
    attrs.set("add_conv_input", Attribute::of_int(q.add_conv_input));
  }
}

}  // namespace ninegrid
