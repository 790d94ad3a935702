// Test helpers for the element-wise, softmax and reduction operators: typed tensor literals and a
// one-node graph run through a real Model/Session (opt_level 0, so the operator itself is what runs).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace eltest {

inline Tensor f32(const Shape& shape, const std::vector<float>& v) { return Tensor::from_vector(DataType::Float32, shape, v); }
inline Tensor f64(const Shape& shape, const std::vector<double>& v) { return Tensor::from_vector(DataType::Float64, shape, v); }
inline Tensor i32(const Shape& shape, const std::vector<int32_t>& v) { return Tensor::from_vector(DataType::Int32, shape, v); }
inline Tensor i64(const Shape& shape, const std::vector<int64_t>& v) { return Tensor::from_vector(DataType::Int64, shape, v); }
inline Tensor i8(const Shape& shape, const std::vector<int8_t>& v) { return Tensor::from_vector(DataType::Int8, shape, v); }
inline Tensor u8(const Shape& shape, const std::vector<uint8_t>& v) { return Tensor::from_vector(DataType::UInt8, shape, v); }
inline Tensor boolean(const Shape& shape, const std::vector<int>& v) {
  Tensor t = Tensor::empty(DataType::Bool, shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
  for (size_t i = 0; i < v.size() && i < static_cast<size_t>(t.numel()); ++i) t.data_as<bool>()[i] = v[i] != 0;
  return t;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.numel());
}

// One input of the node under test: a graph input bound at run time, a constant (known when planning),
// or an omitted optional input.
struct In {
  Tensor value;
  bool constant = false;
  bool omitted = false;
};
inline In arg(Tensor t) { return {std::move(t), false, false}; }
inline In konst(Tensor t) { return {std::move(t), true, false}; }
inline In omitted() { return {Tensor(), false, true}; }

struct OpSpec {
  std::string op_type;
  std::vector<In> inputs;
  Attributes attrs;
  int num_outputs = 1;
  int opset = 0;    // 0: latest semantics
  int threads = 1;
  std::string isa = {};  // Options::isa ("" : the best the CPU has)
};

// Builds the one-node graph, loads it (opt_level 0), runs it once and returns the outputs in order.
// Errors (node construction, inference, run) propagate as ninegrid::Error.
inline std::vector<Tensor> run_op(const OpSpec& spec) {
  Graph g;
  Node n;
  n.name = "node_under_test";
  n.op_type = spec.op_type;
  n.opset = spec.opset;
  n.attrs = spec.attrs;
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const In& in = spec.inputs[i];
    if (in.omitted) {
      n.inputs.push_back(-1);
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    const int id = g.add_value(name);
    Value& v = g.values[id];
    v.dtype = in.value.dtype();
    v.shape = in.value.shape();
    v.shape_known = true;
    if (in.constant) {
      v.constant = in.value;
    } else {
      g.inputs.push_back(id);
      feeds[name] = in.value;
    }
    n.inputs.push_back(id);
  }
  for (int o = 0; o < spec.num_outputs; ++o) {
    const int id = g.add_value("out" + std::to_string(o));
    n.outputs.push_back(id);
    g.outputs.push_back(id);
  }
  g.nodes.push_back(n);
  Options opts;
  opts.opt_level = 0;
  opts.threads = spec.threads;
  opts.isa = spec.isa;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, opts, "onnx"));
  auto session = model->create_session();
  std::map<std::string, Tensor> outs = session->run(feeds);
  std::vector<Tensor> result;
  for (int o = 0; o < spec.num_outputs; ++o) result.push_back(outs.at("out" + std::to_string(o)));
  return result;
}

inline Tensor run1(const std::string& op, std::vector<In> inputs, Attributes attrs = {}, int opset = 0) {
  OpSpec s;
  s.op_type = op;
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  s.opset = opset;
  return run_op(s).at(0);
}

// The error message of running `spec`, or "" if it succeeded.
inline std::string error_of(const OpSpec& spec) {
  try {
    run_op(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline Attributes attrs_of(std::initializer_list<std::pair<const char*, Attribute>> list) {
  Attributes a;
  for (const auto& kv : list) a.set(kv.first, kv.second);
  return a;
}

// Element-wise comparison with a relative tolerance for float results.
inline void expect_near_all(const Tensor& got, const std::vector<double>& want, double rtol = 1e-6,
                            double atol = 1e-6) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got.dtype() == DataType::Float64 ? got.data_as<double>()[i] : got.data_as<float>()[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(g, want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
    }
  }
}

}  // namespace eltest
}  // namespace ninegrid
