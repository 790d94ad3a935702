// The graph optimisation passes on small hand-built graphs: where each must fire, where it must not,
// and that the optimised graph computes what the original did.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "graph/passes/passes.h"
#include "runtime/model_impl.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace {

using Builder = test_graph::GraphBuilder;

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

using test_graph::random_input;
using test_graph::run_at;

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

// The fold scales the conv's weights in place when nothing else holds them (a loaded model's graph: no
// second copy of the weights while it loads), and into a new constant when another tensor shares their
// storage: here the graph it was copied from, whose weights must stay as they were.
TEST(FoldBatchnorm, ScalesWeightsInPlaceOnlyWhenNothingElseHoldsThem) {
  Builder b = conv_bn(false);
  const int w = b.g.find_value("w");
  const Tensor original = b.g.values[w].constant.clone();
  auto same_bytes = [](const Tensor& x, const Tensor& y) {
    return x.nbytes() == y.nbytes() && std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
  };

  Graph copy = b.g;  // shares the weights' storage with b.g
  ASSERT_EQ(fold_batchnorm(copy), 1);
  EXPECT_TRUE(same_bytes(b.g.values[w].constant, original)) << "the fold wrote into the original graph's weights";
  const int copy_w = copy.nodes[0].inputs[1];
  EXPECT_NE(copy_w, w) << "a shared weight was not given a new constant";
  const Tensor scaled = copy.values[copy_w].constant;
  EXPECT_FALSE(same_bytes(scaled, original));

  Graph own = b.g;
  own.values[w].constant = own.values[w].constant.clone();  // only `own` holds these
  const void* storage = own.values[w].constant.data();
  ASSERT_EQ(fold_batchnorm(own), 1);
  EXPECT_EQ(own.nodes[0].inputs[1], w) << "weights only the conv held were copied";
  EXPECT_EQ(own.values[w].constant.data(), storage);
  EXPECT_TRUE(same_bytes(own.values[w].constant, scaled)) << "in place and copied folds differ";
  EXPECT_TRUE(same_bytes(b.g.values[w].constant, original));
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

TEST(RemoveIdentity, WholeSlicesGoPartialAndReversingOnesStay) {
  auto slice_graph = [](std::vector<int64_t> ends, std::vector<int64_t> steps) {
    Builder b;
    b.input("x", {1, 2, 4, 4});
    auto ints = [&](const char* name, std::vector<int64_t> v) {
      const int64_t n = static_cast<int64_t>(v.size());
      b.g.values[b.value(name)].constant = Tensor::from_vector<int64_t>(DataType::Int64, {n}, v);
    };
    ints("starts", {0, 0});
    ints("ends", ends);
    ints("axes", {2, 3});
    ints("steps", steps);
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"});
    b.node("Relu", {"s"}, {"y"});
    b.output("y");
    return b;
  };
  Builder whole = slice_graph({4, 100}, {1, 1});  // ends past the end clamp: the whole input
  EXPECT_EQ(remove_identity(whole.g), 1);
  ASSERT_EQ(whole.g.nodes.size(), 1u);
  EXPECT_EQ(whole.g.values[whole.g.nodes[0].inputs[0]].name, "x");
  Builder partial = slice_graph({3, 4}, {1, 1});
  EXPECT_EQ(remove_identity(partial.g), 0);
  Builder reversed = slice_graph({-100, -100}, {-1, -1});  // same shape, reversed: not an identity
  reversed.g.values[reversed.value("starts")].constant =
      Tensor::from_vector<int64_t>(DataType::Int64, {2}, {-1, -1});
  EXPECT_EQ(remove_identity(reversed.g), 0);
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

// x [1, 4, 7, 7] -> a padded 3x3 conv to 6 channels -> c.
Builder conv_4_to_6() {
  Builder b;
  b.input("x", {1, 4, 7, 7});
  b.constant("w", {6, 4, 3, 3});
  b.constant("bias", {6});
  Node& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  conv.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  return b;
}

// conv(x) -> act -> y.
Builder conv_then(const std::string& act) {
  Builder b = conv_4_to_6();
  if (act == "Clip") {
    Tensor lo = Tensor::from_vector<float>(DataType::Float32, {}, {0.f});
    Tensor hi = Tensor::from_vector<float>(DataType::Float32, {}, {0.5f});
    b.g.values[b.value("lo")].constant = lo;
    b.g.values[b.value("hi")].constant = hi;
    b.node("Clip", {"c", "lo", "hi"}, {"y"});
  } else if (act == "PRelu") {
    b.constant("slope", {6, 1, 1});
    b.node("PRelu", {"c", "slope"}, {"y"});
  } else {
    Node& a = b.node(act, {"c"}, {"y"});
    if (act == "LeakyRelu") a.attrs.set("alpha", Attribute::of_float(0.3f));
    if (act == "HardSigmoid") a.attrs.set("alpha", Attribute::of_float(0.25f));
  }
  b.output("y");
  return b;
}

class FuseActivation : public testing::TestWithParam<const char*> {};

TEST_P(FuseActivation, MovesIntoTheConvAndKeepsTheResult) {
  Builder b = conv_then(GetParam());
  Graph g = b.g;
  EXPECT_EQ(fuse_activation(g), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs.get_string("ng.activation", ""), GetParam());
  Tensor x = random_input({1, 4, 7, 7}, 3);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

INSTANTIATE_TEST_SUITE_P(Activations, FuseActivation,
                         testing::Values("Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish"));

TEST(FuseActivation, NotWhenTheConvOutputIsAGraphOutput) {
  Builder b = conv_then("Relu");
  b.output("c");
  EXPECT_EQ(fuse_activation(b.g), 0);
}

TEST(FuseActivation, NotWhenTheConvOutputHasAnotherReader) {
  Builder b = conv_then("Relu");
  b.node("Sigmoid", {"c"}, {"z"});
  b.output("z");
  EXPECT_EQ(fuse_activation(b.g), 0);
}

// conv(x) -> HardSwish -> then the ops `after` names in order, the last one's output "y": "mul" and "add" by
// scalars, "mul_left" with the scalar ([1, 1, 1, 1]) as Mul's first operand, "mul_rank5" by a [1, 1, 1, 1, 1]
// scalar (which broadcasts the result to five dimensions), "mul_per_channel" by a [6, 1, 1] constant.
Builder conv_hardswish_then(const std::vector<std::string>& after) {
  Builder b = conv_4_to_6();
  b.node("HardSwish", {"c"}, {"h"});
  auto scalar = [&](const std::string& name, float v, std::vector<int64_t> shape) {
    b.g.values[b.value(name)].constant = Tensor::from_vector<float>(DataType::Float32, shape, {v});
  };
  std::string last = "h";
  for (size_t i = 0; i < after.size(); ++i) {
    const std::string out = i + 1 == after.size() ? "y" : "t" + std::to_string(i), k = "k" + std::to_string(i);
    if (after[i] == "mul") scalar(k, 0.75f, {}), b.node("Mul", {last, k}, {out});
    if (after[i] == "mul_left") scalar(k, -1.25f, {1, 1, 1, 1}), b.node("Mul", {k, last}, {out});
    if (after[i] == "mul_rank5") scalar(k, 0.75f, {1, 1, 1, 1, 1}), b.node("Mul", {last, k}, {out});
    if (after[i] == "mul_per_channel") b.constant(k, {6, 1, 1}), b.node("Mul", {last, k}, {out});
    if (after[i] == "add") scalar(k, 0.375f, {1}), b.node("Add", {last, k}, {out});
    last = out;
  }
  b.output("y");
  return b;
}

// The affine [scale, shift] fused into the graph's one Conv, after running the passes up to it.
std::vector<float> fused_affine(Graph& g, int expect_fused, size_t expect_nodes) {
  EXPECT_EQ(fuse_activation(g), 1);
  EXPECT_EQ(fuse_affine_after_activation(g), expect_fused);
  EXPECT_EQ(g.nodes.size(), expect_nodes);
  return g.nodes[0].attrs.get_floats("ng.affine_after");
}

TEST(FuseAffineAfterActivation, ScalarMulAndAddJoinTheEpilogue) {
  Builder b = conv_hardswish_then({"mul", "add"});
  Graph g = b.g;
  EXPECT_EQ(fused_affine(g, 1, 1), (std::vector<float>{0.75f, 0.375f}));
  EXPECT_EQ(g.values[g.nodes[0].outputs[0]].name, "y");
  Tensor x = random_input({1, 4, 7, 7}, 3);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

TEST(FuseAffineAfterActivation, AMulOrAnAddAlone) {
  for (const auto& after : {std::vector<std::string>{"mul_left"}, std::vector<std::string>{"add"}}) {
    Builder b = conv_hardswish_then(after);
    Graph g = b.g;
    const std::vector<float> affine = fused_affine(g, 1, 1);
    EXPECT_EQ(affine, after[0] == "add" ? (std::vector<float>{1.f, 0.375f}) : (std::vector<float>{-1.25f, 0.f}));
    Tensor x = random_input({1, 4, 7, 7}, 4);
    expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
  }
}

TEST(FuseAffineAfterActivation, NotPerChannelNorBroadcastingToMoreDimensions) {
  for (const char* op : {"mul_per_channel", "mul_rank5"}) {
    Builder b = conv_hardswish_then({op});
    EXPECT_EQ(fuse_activation(b.g), 1);
    EXPECT_EQ(fuse_affine_after_activation(b.g), 0) << op;
    EXPECT_EQ(b.g.nodes.size(), 2u) << op;
  }
}

TEST(FuseAffineAfterActivation, StopsWhereAValueHasAnotherReader) {
  // The Mul's output is also a graph output: the Mul joins, the Add stays.
  Builder b = conv_hardswish_then({"mul", "add"});
  b.output("t0");
  Graph g = b.g;
  EXPECT_EQ(fused_affine(g, 1, 2), (std::vector<float>{0.75f, 0.f}));
  Tensor x = random_input({1, 4, 7, 7}, 5);
  const auto opt = run_at(b.g, 1, x), ref = run_at(b.g, 0, x);
  expect_close(opt.at("t0"), ref.at("t0"), 1e-5f);
  expect_close(opt.at("y"), ref.at("y"), 1e-5f);
  // The activation's output is read twice (by the Mul and as a graph output): it joins the conv, nothing
  // after it does.
  Builder c = conv_hardswish_then({"mul", "add"});
  c.output("h");
  EXPECT_EQ(fuse_activation(c.g), 1);
  EXPECT_EQ(fuse_affine_after_activation(c.g), 0);
  EXPECT_EQ(c.g.nodes.size(), 3u);
}

TEST(FuseAffineAfterActivation, NotWithoutAnActivation) {
  // (fold_channel_affine puts a scalar Mul or Add after a bare conv into its weights and bias.)
  Builder b;
  b.input("x", {1, 4, 5, 5});
  b.constant("w", {4, 4, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  b.g.values[b.value("k")].constant = Tensor::from_vector<float>(DataType::Float32, {}, {2.f});
  b.node("Mul", {"c", "k"}, {"y"});
  b.output("y");
  EXPECT_EQ(fuse_affine_after_activation(b.g), 0);
}

TEST(FuseResidual, AddThenReluBecomeTheEpilogue) {
  Builder b;
  b.input("x", {1, 4, 5, 5});
  b.constant("w", {4, 4, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Add", {"x", "c"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  b.output("y");
  Graph g = b.g;
  EXPECT_EQ(fuse_residual_add(g), 1);
  EXPECT_EQ(fuse_activation(g), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.values[g.nodes[0].inputs[3]].name, "x");
  Tensor x = random_input({1, 4, 5, 5}, 4);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

TEST(FuseResidual, OtherOperandComputedAfterTheConv) {
  // FPN order: the conv first, then the operand it is added to; the conv moves after that operand.
  Builder b;
  b.input("x", {1, 4, 5, 5});
  b.constant("w", {4, 4, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Sigmoid", {"x"}, {"t"});
  b.node("Add", {"c", "t"}, {"y"});
  b.output("y");
  Graph g = b.g;
  EXPECT_EQ(fuse_residual_add(g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Sigmoid");
  EXPECT_EQ(g.nodes[1].op_type, "Conv");
  EXPECT_EQ(g.values[g.nodes[1].inputs[3]].name, "t");
  Tensor x = random_input({1, 4, 5, 5}, 6);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

// SSH-module shape: conv parts -> Concat -> Relu. The Relu moves into every conv.
Builder convs_concat_relu(bool part_is_input) {
  Builder b;
  b.input("x", {1, 4, 5, 5});
  b.constant("w1", {3, 4, 3, 3});
  b.constant("w2", {2, 4, 1, 1});
  Node& c1 = b.node("Conv", {"x", "w1"}, {"a"});
  c1.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.node("Conv", {"x", "w2"}, {"b"});
  Node& cat = b.node("Concat", {"a", "b", part_is_input ? "x" : "b"}, {"c"});
  cat.attrs.set("axis", Attribute::of_int(1));
  if (!part_is_input) cat.inputs.pop_back();
  b.node("Relu", {"c"}, {"y"});
  b.output("y");
  return b;
}

TEST(FuseActivationThroughConcat, ReluMovesIntoEveryPart) {
  Builder b = convs_concat_relu(false);
  Graph g = b.g;
  EXPECT_EQ(fuse_activation_through_concat(g), 1);
  ASSERT_EQ(g.nodes.size(), 3u);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(g.nodes[i].attrs.get_string("ng.activation", ""), "Relu");
  EXPECT_EQ(g.nodes[2].op_type, "Concat");
  Tensor x = random_input({1, 4, 5, 5}, 7);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

TEST(FuseActivationThroughConcat, NotWhenAPartIsNotAConvOutput) {
  Builder b = convs_concat_relu(true);
  EXPECT_EQ(fuse_activation_through_concat(b.g), 0);
}

// A detection head: three 1x1 convs (4, 8 and 20 channels, one without bias) read one feature map; a
// fourth conv reads it with another stride. `last_channels` can widen the last head past the merge limit.
Builder sibling_heads(int64_t last_channels) {
  Builder b;
  b.input("x", {1, 16, 6, 7});
  b.constant("w_cls", {4, 16, 1, 1});
  b.constant("b_cls", {4});
  b.constant("w_box", {8, 16, 1, 1});
  b.constant("b_box", {8});
  b.constant("w_lmk", {last_channels, 16, 1, 1});
  b.constant("w_s2", {4, 16, 1, 1});
  b.node("Conv", {"x", "w_cls", "b_cls"}, {"cls"});
  b.node("Conv", {"x", "w_box", "b_box"}, {"box"});
  b.node("Conv", {"x", "w_lmk"}, {"lmk"});
  b.node("Conv", {"x", "w_s2"}, {"s2"}).attrs.set("strides", Attribute::of_ints({2, 2}));
  for (const char* out : {"cls", "box", "lmk", "s2"}) b.output(out);
  return b;
}

TEST(MergeSiblingConvs, HeadsBecomeOneConvAndASplit) {
  Builder b = sibling_heads(20);
  Graph g = b.g;
  EXPECT_EQ(merge_sibling_convs(g), 1);
  // The three stride-1 heads merged (the strided conv differs in geometry and stays on its own).
  EXPECT_EQ(g.nodes.size(), 3u);
  int splits = 0;
  for (const Node& n : g.nodes)
    if (n.op_type == "Split") {
      ++splits;
      EXPECT_EQ(n.attrs.get_ints("split"), (std::vector<int64_t>{4, 8, 20}));
      ASSERT_EQ(n.outputs.size(), 3u);
      EXPECT_EQ(g.values[n.outputs[2]].name, "lmk");
    }
  EXPECT_EQ(splits, 1);
  Tensor x = random_input({1, 16, 6, 7}, 9);
  const auto ref = run_at(b.g, 0, x), opt = run_at(b.g, 2, x);
  for (const char* out : {"cls", "box", "lmk", "s2"}) expect_close(opt.at(out), ref.at(out), 1e-5f);
}

TEST(MergeSiblingConvs, NotPastTheChannelLimitNorAcrossActivations) {
  Builder wide = sibling_heads(60);  // 4 + 8 + 60 output channels: wide enough on their own
  EXPECT_EQ(merge_sibling_convs(wide.g), 0);
  Builder relu = sibling_heads(20);
  relu.g.nodes[1].attrs.set("ng.activation", Attribute::of_string("Relu"));  // box head fused a Relu
  Graph g = relu.g;
  EXPECT_EQ(merge_sibling_convs(g), 1);  // cls and lmk still merge; box keeps its own epilogue
  for (const Node& n : g.nodes)
    if (n.op_type == "Split") {
      EXPECT_EQ(n.attrs.get_ints("split"), (std::vector<int64_t>{4, 20}));
    }
}

TEST(FuseResidual, NotWhenTheAddBroadcasts) {
  Builder b;
  b.input("x", {1, 4, 5, 5});
  b.constant("w", {4, 4, 1, 1});
  b.constant("k", {1, 1, 5, 5});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Add", {"c", "k"}, {"y"});
  b.output("y");
  EXPECT_EQ(fuse_residual_add(b.g), 0);
}

TEST(RecognizeHardswish, PaddleSpelling) {
  // Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6), as PP-OCR exports it.
  Builder b;
  b.input("x", {1, 3, 4, 4});
  auto scalar = [&](const char* name, float v) {
    b.g.values[b.value(name)].constant = Tensor::from_vector<float>(DataType::Float32, {1}, {v});
  };
  scalar("three", 3.f);
  scalar("zero", 0.f);
  scalar("six", 6.f);
  b.node("Add", {"x", "three"}, {"a"});
  b.node("Clip", {"a", "zero", "six"}, {"r"});
  b.node("Mul", {"x", "r"}, {"m"});
  b.node("Div", {"m", "six"}, {"y"});
  b.output("y");
  Graph g = b.g;
  EXPECT_EQ(recognize_hardswish(g), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "HardSwish");
  Tensor x = random_input({1, 3, 4, 4}, 5);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

TEST(RecognizeHardswish, NotWhenTheGateReadsAnotherTensor) {
  Builder b;
  b.input("x", {1, 3, 4, 4});
  b.input("z", {1, 3, 4, 4});
  Node& hs = b.node("HardSigmoid", {"z"}, {"h"});
  hs.attrs.set("alpha", Attribute::of_float(1.f / 6.f));
  b.node("Mul", {"x", "h"}, {"y"});
  b.output("y");
  EXPECT_EQ(recognize_hardswish(b.g), 0);
}

// Mul(x, Sigmoid(x)) after a conv, as PyTorch exports SiLU: one ng.Silu node, then fused into the conv.
Builder conv_silu(bool sigmoid_is_output, bool gate_of_other) {
  Builder b;
  b.input("x", {1, 4, 7, 7});
  b.constant("w", {6, 4, 3, 3});
  b.constant("bias", {6});
  b.node("Conv", {"x", "w", "bias"}, {"c"}).attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  if (gate_of_other) {
    b.node("Relu", {"c"}, {"r"});
    b.node("Sigmoid", {"r"}, {"s"});
  } else {
    b.node("Sigmoid", {"c"}, {"s"});
  }
  b.node("Mul", {"s", "c"}, {"y"});
  b.output("y");
  if (sigmoid_is_output) b.output("s");
  return b;
}

TEST(RecognizeSilu, BecomesOneNodeAndFusesIntoTheConv) {
  Builder b = conv_silu(false, false);
  Graph g = b.g;
  EXPECT_EQ(recognize_silu(g), 1);
  EXPECT_EQ(b.count("Sigmoid"), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].op_type, "ng.Silu");
  EXPECT_EQ(g.nodes[1].inputs, std::vector<int>{b.value("c")});
  EXPECT_EQ(fuse_activation(g), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs.get_string("ng.activation", ""), "Silu");
  Tensor x = random_input({1, 4, 7, 7}, 9);
  expect_close(run_at(b.g, 2, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
  expect_close(run_at(b.g, 1, x).at("y"), run_at(b.g, 0, x).at("y"), 1e-5f);
}

TEST(RecognizeSilu, NotWhenTheGateIsReadElsewhereOrGatesAnotherTensor) {
  Builder shared = conv_silu(true, false);
  EXPECT_EQ(recognize_silu(shared.g), 0);
  Builder other = conv_silu(false, true);
  EXPECT_EQ(recognize_silu(other.g), 0);
}

}  // namespace
}  // namespace ninegrid
