// Channel widening (graph/passes/widen_channels.cpp) and the layout planner's handling of what it leaves:
// BlazeFace's residual blocks in miniature, checked for where the pass fires, where it must not, the
// shapes users see, and that the optimised graph computes what the original did.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "runtime/model_impl.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace {

struct Builder : test_graph::GraphBuilder {
  Builder() : GraphBuilder(11) {}

  Node& conv(const std::string& x, const std::string& y, int64_t in, int64_t out, int64_t k, int64_t group = 1,
             int64_t stride = 1) {
    constant(y + "_w", {out, in / group, k, k}, -0.5f, 0.5f);
    constant(y + "_b", {out}, -0.5f, 0.5f);
    Node& n = node("Conv", {x, y + "_w", y + "_b"}, {y});
    const int64_t pad = k / 2;
    n.attrs.set("pads", Attribute::of_ints({pad, pad, pad, pad}));
    n.attrs.set("strides", Attribute::of_ints({stride, stride}));
    if (group > 1) n.attrs.set("group", Attribute::of_int(group));
    return n;
  }
  // TensorFlow's channel padding: Concat(x, zeros).
  void pad_channels(const std::string& x, const std::string& y, Shape zeros) {
    constant(y + "_zeros", zeros, 0.f, 0.f);
    node("Concat", {x, y + "_zeros"}, {y}).attrs.set("axis", Attribute::of_int(1));
  }
};

// x [1,24,16,16] -> BlazeFace blocks: y1 = relu(pw(dw(x)) 24->28 + pad(x)); y2 = relu(pw(dw_s2(y1)) 28->36
// + pad(maxpool(y1))); out = pw 36->16 (y2).
Builder blaze_blocks(bool odd_output) {
  Builder b;
  b.input("x", {1, 24, 16, 16});
  b.conv("x", "d1", 24, 24, 3, 24);
  b.conv("d1", "p1", 24, 28, 1);
  b.pad_channels("x", "x_padded", {1, 4, 16, 16});
  b.node("Add", {"p1", "x_padded"}, {"s1"});
  b.node("Relu", {"s1"}, {"y1"});
  b.conv("y1", "d2", 28, 28, 3, 28, 2);
  b.conv("d2", "p2", 28, 36, 1);
  Node& pool = b.node("MaxPool", {"y1"}, {"m1"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({2, 2}));
  pool.attrs.set("strides", Attribute::of_ints({2, 2}));
  b.pad_channels("m1", "m1_padded", {1, 8, 8, 8});
  b.node("Add", {"p2", "m1_padded"}, {"s2"});
  b.node("Relu", {"s2"}, {"y2"});
  if (odd_output) {
    b.g.outputs.push_back(b.value("y2"));
  } else {
    b.conv("y2", "out", 36, 16, 1);
    b.g.outputs.push_back(b.value("out"));
  }
  return b;
}

using test_graph::run_at;

Tensor random_input(unsigned seed) { return test_graph::random_input({1, 24, 16, 16}, seed); }

const Value& value_named(const Graph& g, const std::string& name) { return g.values[g.find_value(name)]; }

TEST(WidenChannels, WidensOddTensorsToWholeBlocksOfEight) {
  Builder b = blaze_blocks(false);
  Graph g = b.g;
  EXPECT_GT(widen_channels(g, 8), 0);
  // 28 -> 32 and 36 -> 40, everything touching them alike; 24 and the output's 16 stay.
  EXPECT_EQ(value_named(g, "y1").shape, (Shape{1, 32, 16, 16}));
  EXPECT_EQ(value_named(g, "d2").shape, (Shape{1, 32, 8, 8}));
  EXPECT_EQ(value_named(g, "m1").shape, (Shape{1, 32, 8, 8}));
  EXPECT_EQ(value_named(g, "y2").shape, (Shape{1, 40, 8, 8}));
  EXPECT_EQ(value_named(g, "x").shape, (Shape{1, 24, 16, 16}));
  EXPECT_EQ(value_named(g, "out").shape, (Shape{1, 16, 8, 8}));
  // The padding Concat of x keeps 8 zero channels (24 + 8 = 32); the one of the widened pool output only
  // the 8 beyond its 32 (40).
  for (const Node& n : g.nodes)
    if (n.op_type == "Concat") {
      EXPECT_EQ(g.values[n.inputs[1]].constant.dim(1), 8) << n.name;
    }
}

TEST(WidenChannels, OptimisedGraphComputesTheOriginal) {
  for (bool odd_output : {false, true}) {
    Builder b = blaze_blocks(odd_output);
    const std::string out = odd_output ? "y2" : "out";
    for (unsigned seed : {1u, 2u}) {
      const Tensor x = random_input(seed);
      const Tensor ref = run_at(b.g, 0, x).at(out), opt = run_at(b.g, 2, x).at(out);
      ASSERT_EQ(opt.shape(), ref.shape()) << out;
      for (int64_t i = 0; i < ref.numel(); ++i)
        ASSERT_NEAR(opt.data_as<float>()[i], ref.data_as<float>()[i], 1e-4f) << out << " at " << i;
    }
  }
}

TEST(WidenChannels, NeverWidensWhatUsersSee) {
  // y2 (36 channels) is the graph output: its group (the Add, the Relu, the pw conv's output, the pool's
  // padding) keeps 36 channels, while y1's group (28) still widens.
  Builder b = blaze_blocks(true);
  Graph g = b.g;
  EXPECT_GT(widen_channels(g, 8), 0);
  EXPECT_EQ(value_named(g, "y2").shape, (Shape{1, 36, 8, 8}));
  EXPECT_EQ(value_named(g, "p2").shape, (Shape{1, 36, 8, 8}));
  EXPECT_EQ(value_named(g, "y1").shape, (Shape{1, 32, 16, 16}));
}

TEST(WidenChannels, LeavesTensorsWithOtherReadersAlone) {
  // A Concat with a constant that is not zeros, and a Softmax: neither keeps the zero channels zero.
  Builder b;
  b.input("x", {1, 8, 8, 8});
  b.conv("x", "c", 8, 12, 1);
  b.constant("k", {1, 4, 8, 8}, -0.5f, 0.5f);
  b.node("Concat", {"c", "k"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.conv("cat", "out", 16, 16, 1);
  b.conv("x", "e", 8, 20, 1);
  b.node("Softmax", {"e"}, {"soft"}).attrs.set("axis", Attribute::of_int(1));
  b.conv("soft", "out2", 20, 8, 1);
  b.g.outputs = {b.value("out"), b.value("out2")};
  Graph g = b.g;
  EXPECT_EQ(widen_channels(g, 8), 0);
  EXPECT_EQ(value_named(g, "c").shape, (Shape{1, 12, 8, 8}));
  EXPECT_EQ(value_named(g, "e").shape, (Shape{1, 20, 8, 8}));
}

// A depthwise conv keeps the block of its (8-channel-blocked) input even when its channel count would
// allow 16: a wider output block would make the kernel restage its input on every run.
TEST(PlanLayout, DepthwiseKeepsItsInputsBlock) {
  Builder b;
  b.input("x", {1, 24, 16, 16});
  b.conv("x", "c", 24, 24, 1);
  b.pad_channels("c", "c_padded", {1, 8, 16, 16});  // 32 channels in 8-channel blocks (24 is no multiple of 16)
  b.conv("c_padded", "d", 32, 32, 3, 32);
  b.conv("d", "out", 32, 16, 1);
  b.g.outputs = {b.value("out")};
  Graph g = b.g;
  ASSERT_TRUE(annotate_shapes(g));
  plan_layout(g, 16);
  bool found = false;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Conv" || n.attrs.get_int("group", 1) != 32) continue;
    found = true;
    EXPECT_EQ(n.attrs.get_int("ng.in_block", 0), 8);
    EXPECT_EQ(n.attrs.get_int("ng.out_block", 0), 8);
  }
  EXPECT_TRUE(found);
  // No reorder: the padding Concat's zero constant is stored alike in every layout.
  for (const Node& n : g.nodes) EXPECT_NE(n.op_type, "ng.Reorder") << n.name;
  const Tensor x = random_input(3);
  const Tensor ref = run_at(b.g, 0, x).at("out"), opt = run_at(b.g, 2, x).at("out");
  for (int64_t i = 0; i < ref.numel(); ++i) ASSERT_NEAR(opt.data_as<float>()[i], ref.data_as<float>()[i], 1e-4f) << i;
}

}  // namespace
}  // namespace ninegrid
