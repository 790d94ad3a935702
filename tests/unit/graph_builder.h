// Hand-built graphs for the optimisation-pass tests: named values, seeded random constants, nodes in the
// order they are added (already topological when built input to output).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace test_graph {

struct GraphBuilder {
  Graph g;
  std::mt19937 rng;

  explicit GraphBuilder(unsigned seed = 7) : rng(seed) {}

  int value(const std::string& name) {
    int id = g.find_value(name);
    return id >= 0 ? id : g.add_value(name);
  }
  int input(const std::string& name, Shape shape) {
    int id = value(name);
    g.values[id].dtype = DataType::Float32;
    g.values[id].shape = shape;
    g.values[id].shape_known = true;
    g.inputs.push_back(id);
    return id;
  }
  // A constant uniform in [lo, hi) (all zeros when lo == hi == 0).
  int constant(const std::string& name, Shape shape, float lo = -1.f, float hi = 1.f) {
    Tensor t = Tensor::empty(DataType::Float32, shape);
    if (lo == hi) {
      for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = lo;
    } else {
      std::uniform_real_distribution<float> u(lo, hi);
      for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
    }
    int id = value(name);
    g.values[id].constant = t;
    g.values[id].dtype = DataType::Float32;
    g.values[id].shape = shape;
    g.values[id].shape_known = true;
    return id;
  }
  // An empty input name is an omitted optional input.
  Node& node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op_type = op;
    for (auto& i : ins) n.inputs.push_back(i.empty() ? -1 : value(i));
    for (auto& o : outs) n.outputs.push_back(value(o));
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  void output(const std::string& name) { g.outputs.push_back(value(name)); }
  int count(const std::string& op) const {
    int c = 0;
    for (const Node& n : g.nodes) c += n.op_type == op;
    return c;
  }
};

// A constant of any element type, e.g. a quantisation parameter: add_const<uint8_t>(b, "x_z", DataType::UInt8, {}, {128}).
template <class T>
int add_const(GraphBuilder& b, const std::string& name, DataType t, Shape shape, std::vector<T> values) {
  const int id = b.value(name);
  b.g.values[id].constant = Tensor::from_vector<T>(t, shape, values);
  b.g.values[id].dtype = t;
  b.g.values[id].shape = shape;
  b.g.values[id].shape_known = true;
  return id;
}

// The graph as a model at an optimisation level, on one thread.
inline std::shared_ptr<Model> model_of(const Graph& g, int level = 2) {
  Options o;
  o.opt_level = level;
  o.threads = 1;
  return std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
}

// How many nodes of each type the model's optimised graph has.
inline std::map<std::string, int> ops_of(const Model& m) {
  std::map<std::string, int> ops;
  for (const Node& n : InternalAccess::impl(m).graph().nodes) ++ops[n.op_type];
  return ops;
}

// Uniform in [lo, hi).
inline Tensor uniform(Shape shape, float lo, float hi, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// Uniform in [-2, 2), like a normalised image.
inline Tensor random_input(Shape shape, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// Runs the graph (one input, named "x") at the given optimisation level, on one thread.
inline std::map<std::string, Tensor> run_at(const Graph& g, int level, const Tensor& x) {
  Options o;
  o.opt_level = level;
  o.threads = 1;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
  return model->create_session()->run({{"x", x}});
}

// Runs `g` as it is (opt_level 0, one thread) with input x at x's size, whatever size the graph was planned
// for, and returns its output `output`.
inline Tensor run_planned(Graph g, const Tensor& x, const std::string& output = "z") {
  for (int v : g.inputs) g.values[v].shape = x.shape();
  return run_at(g, 0, x).at(output);
}

// An optimised graph's output against the original's: every element within 1e-4 * (1 + |want|).
inline void expect_close(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], 1e-4 * (1 + std::fabs(want.data_as<float>()[i])))
        << "element " << i;
}

}  // namespace test_graph
}  // namespace ninegrid
