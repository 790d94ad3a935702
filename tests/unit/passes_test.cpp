// The graph optimisation passes on small hand-built graphs: where each must fire, where it must not,
// and that the optimised graph computes what the original did.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/passes/passes.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace {

struct Builder {
  Graph g;
  std::mt19937 rng{7};

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
  int constant(const std::string& name, Shape shape, float lo = -1.f, float hi = 1.f) {
    Tensor t = Tensor::empty(DataType::Float32, shape);
    std::uniform_real_distribution<float> u(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
    int id = value(name);
    g.values[id].constant = t;
    g.values[id].dtype = DataType::Float32;
    g.values[id].shape = shape;
    g.values[id].shape_known = true;
    return id;
  }
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

// conv(x) -> BN -> y, with BN statistics that make the fold non-trivial.
Builder conv_bn(bool second_reader) {
  Builder b;
  b.input("x", {1, 3, 8, 8});
  b.constant("w", {4, 3, 3, 3});
  b.constant("bias", {4});
  b.constant("gamma", {4}, 0.5f, 2.f);
  b.constant("beta", {4});
  b.constant("mean", {4});
  b.constant("var", {4}, 0.1f, 3.f);
  Node& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  conv.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"});
  b.output("y");
  if (second_reader) {
    b.node("Relu", {"c"}, {"r"});
    b.output("r");
  }
  return b;
}

Tensor random_input(Shape shape, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// Runs the graph at the given optimisation level on `x`.
std::map<std::string, Tensor> run_at(const Graph& g, int level, const Tensor& x) {
  Options o;
  o.opt_level = level;
  o.threads = 1;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
  return model->create_session()->run({{"x", x}});
}

void expect_close(const Tensor& a, const Tensor& b, float tol) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.data_as<float>()[i], b.data_as<float>()[i], tol) << "at " << i;
}

TEST(FoldBatchnorm, FoldsIntoConvAndKeepsTheResult) {
  Builder b = conv_bn(false);
  Graph folded = b.g;
  EXPECT_EQ(fold_batchnorm(folded), 1);
  int bn = 0;
  for (const Node& n : folded.nodes) bn += n.op_type == "BatchNormalization";
  EXPECT_EQ(bn, 0);
  ASSERT_EQ(folded.nodes.size(), 1u);
  EXPECT_EQ(folded.values[folded.nodes[0].outputs[0]].name, "y");

  Tensor x = random_input({1, 3, 8, 8}, 1);
  auto ref = run_at(b.g, 0, x);
  auto opt = run_at(b.g, 1, x);
  expect_close(opt.at("y"), ref.at("y"), 1e-4f);
}

TEST(FoldBatchnorm, DoesNotFireWhenTheConvOutputHasAnotherReader) {
  Builder b = conv_bn(true);
  EXPECT_EQ(fold_batchnorm(b.g), 0);
  EXPECT_EQ(b.count("BatchNormalization"), 1);
}

TEST(FoldBatchnorm, DoesNotFireWhenStatisticsAreNotConstant) {
  Builder b = conv_bn(false);
  int mean = b.g.find_value("mean");
  b.g.values[mean].constant = Tensor();
  b.g.inputs.push_back(mean);
  EXPECT_EQ(fold_batchnorm(b.g), 0);
}

TEST(FoldChannelAffine, FoldsPerChannelMulAndAdd) {
  Builder b;
  b.input("x", {1, 3, 6, 6});
  b.constant("w", {5, 3, 1, 1});
  b.constant("s", {1, 5, 1, 1});
  b.constant("t", {5, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Mul", {"c", "s"}, {"m"});
  b.node("Add", {"t", "m"}, {"y"});
  b.output("y");
  Graph g = b.g;
  EXPECT_EQ(fold_channel_affine(g), 2);
  ASSERT_EQ(g.nodes.size(), 1u);
  Tensor x = random_input({1, 3, 6, 6}, 2);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-4f);
}

TEST(FoldChannelAffine, LeavesSpatialBroadcastsAlone) {
  Builder b;
  b.input("x", {1, 3, 6, 6});
  b.constant("w", {5, 3, 1, 1});
  b.constant("s", {6});  // broadcasts along W, not channels
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Mul", {"c", "s"}, {"y"});
  b.output("y");
  EXPECT_EQ(fold_channel_affine(b.g), 0);
  EXPECT_EQ(b.count("Mul"), 1);
}

TEST(RemoveIdentity, BypassesAndKeepsGraphOutputNames) {
  Builder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"a"});
  b.node("Identity", {"a"}, {"b"});
  b.node("Dropout", {"b"}, {"y"});
  b.output("y");
  EXPECT_EQ(remove_identity(b.g), 2);
  ASSERT_EQ(b.g.nodes.size(), 1u);
  EXPECT_EQ(b.g.values[b.g.nodes[0].outputs[0]].name, "y");
}

TEST(RemoveIdentity, KeepsIdentityFromGraphInputToGraphOutput) {
  Builder b;
  b.input("x", {2, 3});
  b.node("Identity", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(remove_identity(b.g), 0);
}

TEST(RemoveDeadNodes, DropsUnreadBranches) {
  Builder b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"y"});
  b.node("Sigmoid", {"x"}, {"unused"});
  b.node("Relu", {"unused"}, {"unused2"});
  b.output("y");
  EXPECT_EQ(remove_dead_nodes(b.g), 2);
  EXPECT_EQ(b.g.nodes.size(), 1u);
}

}  // namespace
}  // namespace ninegrid
