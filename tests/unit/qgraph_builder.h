// Hand-built quantised graphs for the int8 pass tests: GraphBuilder with the fused int8 ops as
// graph/passes/fuse_qdq.cpp leaves them (ng.QConv with random weights, ng.QAdd) and per-tensor
// QuantizeLinear / DequantizeLinear.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/quant_attrs.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace test_graph {

struct QGraph : GraphBuilder {
  explicit QGraph(unsigned seed = 31) : GraphBuilder(seed) {}

  template <class T>
  int add_const(const std::string& name, DataType t, Shape shape, std::vector<T> v) {
    return test_graph::add_const<T>(*this, name, t, std::move(shape), std::move(v));
  }
  // Per-tensor quantisation parameters of value `name` (uint8, zero point near the middle).
  void quant_params(const std::string& name, float scale, uint8_t zp) {
    add_const<float>(name + "_s", DataType::Float32, {}, {scale});
    add_const<uint8_t>(name + "_z", DataType::UInt8, {}, {zp});
  }
  void quantize(const std::string& x, const std::string& y, float scale, uint8_t zp) {
    quant_params(y, scale, zp);
    node("QuantizeLinear", {x, y + "_s", y + "_z"}, {y});
  }
  void dequantize(const std::string& x, const std::string& y, float scale, uint8_t zp) {
    quant_params(y, scale, zp);
    node("DequantizeLinear", {x, y + "_s", y + "_z"}, {y});
  }
  // ng.QConv with random int8 weights (per-channel scales) and int32 bias; `relu`: qmin = y zero point.
  Node& qconv(const std::string& x, const std::string& y, int64_t cin, int64_t cout, int64_t k, int64_t stride = 1,
              int64_t pad = -1, int64_t group = 1, bool relu = false) {
    if (pad < 0) pad = k / 2;
    std::uniform_int_distribution<int> wd(-127, 127), bd(-3000, 3000);
    std::vector<int8_t> w(static_cast<size_t>(cout * (cin / group) * k * k));
    for (auto& v : w) v = static_cast<int8_t>(wd(rng));
    std::vector<int32_t> b(static_cast<size_t>(cout));
    for (auto& v : b) v = bd(rng);
    add_const<int8_t>(y + "_w", DataType::Int8, {cout, cin / group, k, k}, w);
    add_const<int32_t>(y + "_b", DataType::Int32, {cout}, b);
    Node& n = node("ng.QConv", {x, y + "_w", y + "_b"}, {y});
    n.name = y;
    n.attrs.set("kernel_shape", Attribute::of_ints({k, k}));
    n.attrs.set("strides", Attribute::of_ints({stride, stride}));
    n.attrs.set("pads", Attribute::of_ints({pad, pad, pad, pad}));
    n.attrs.set("group", Attribute::of_int(group));
    QConvAttrs q;
    q.x_scale = 0.05f, q.x_zero_point = 120;
    std::uniform_real_distribution<float> sd(0.0005f, 0.002f);
    for (int64_t c = 0; c < cout; ++c) q.w_scale.push_back(sd(rng) * 8.f / static_cast<float>(cin / group * k));
    q.y_scale = 0.05f, q.y_zero_point = 118;
    q.qmin = relu ? 118 : 0;
    write_qconv_attrs(q, n.attrs);
    return n;
  }
  // y = ng.QAdd(a, b) with these operand and output parameters and clamp.
  Node& qadd(const std::string& a, const std::string& b, const std::string& y, TensorQuant qa, TensorQuant qb,
             TensorQuant qy, QClamp clamp = {}) {
    Node& n = node("ng.QAdd", {a, b}, {y});
    n.name = y;
    write_tensor_quant(qa, "a", n.attrs);
    write_tensor_quant(qb, "b", n.attrs);
    write_tensor_quant(qy, "y", n.attrs);
    write_qclamp(clamp, n.attrs);
    return n;
  }
};

}  // namespace test_graph
}  // namespace ninegrid
