// A ConvTranspose whose kernel equals its stride as a 1x1 Conv and a DepthToSpace
// (graph/passes/conv_transpose_as_pointwise.cpp), and the two layout paths that serve it:
//   - DepthToSpace DCR on channel-blocked data (blocks 16, 8, 4; kernels/ref/depth_to_space_blocked) gives
//     the bits of the plain op, at 1-3 threads, blocksizes 2 and 3, batch 1 and 2; it refuses CRD and an
//     output whose channels the block does not divide;
//   - ConvTranspose reading NCHW8c / NCHW16c input (ng.in_block, ops/conv_transpose_fast.h restaging it
//     as it is) gives the bits of the plain-input run, on the fast path and on the reference;
//   - the pass rewrites only kernel == stride, unpadded, one group, undilated, no output_padding, output
//     channels a multiple of 8, carries the fused activation (per-channel PRelu slopes included) over, and
//     the optimised graph equals the unoptimised one; a conv before a ConvTranspose writes blocked data
//     and no reorder is left between the head's layers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "graph/passes/pipeline.h"
#include "unit/blocked_test_util.h"
#include "unit/elementwise_test_util.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace {

using blocked_test::expect_same_bits;
using blocked_test::from_blocked;
using blocked_test::random_tensor;
using blocked_test::to_blocked;
using eltest::arg;
using eltest::konst;
using eltest::OpSpec;

OpSpec depth_to_space(const Tensor& x, int64_t bs) {
  OpSpec s{"DepthToSpace", {arg(x)}, {}};
  s.attrs.set("blocksize", Attribute::of_int(bs));
  s.attrs.set("mode", Attribute::of_string("DCR"));
  return s;
}

void set_blocks(OpSpec& s, int64_t block) {
  s.attrs.set("ng.in_block", Attribute::of_int(block));
  s.attrs.set("ng.out_block", Attribute::of_int(block));
}

// DepthToSpace DCR by its definition: y[n][c][h*bs + i][w*bs + j] = x[n][(i*bs + j) * C + c][h][w].
Tensor depth_to_space_dcr(const Tensor& x, int64_t bs) {
  const Shape& s = x.shape();
  const int64_t C = s[1] / (bs * bs), H = s[2], W = s[3];
  Tensor y = Tensor::empty(DataType::Float32, {s[0], C, H * bs, W * bs});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H * bs; ++h)
        for (int64_t w = 0; w < W * bs; ++w) {
          const int64_t ch = ((h % bs) * bs + w % bs) * C + c;
          y.data_as<float>()[((n * C + c) * H * bs + h) * W * bs + w] =
              x.data_as<float>()[((n * s[1] + ch) * H + h / bs) * W + w / bs];
        }
  return y;
}

TEST(DepthToSpaceBlocked, MatchesTheDefinitionBitForBit) {
  struct Case {
    Shape x;
    int64_t bs, in_block, out_block;  // blocks 1: plain
  };
  const std::vector<Case> cases = {
      {{1, 64, 5, 7}, 2, 16, 16}, {{2, 96, 4, 3}, 2, 8, 8},    {{1, 72, 3, 4}, 3, 8, 8},
      {{1, 48, 6, 5}, 2, 4, 4},   {{2, 128, 2, 9}, 2, 16, 16}, {{1, 96, 24, 20}, 2, 8, 8},  // bands of rows
      {{1, 16, 6, 5}, 4, 16, 1},  {{2, 48, 3, 4}, 4, 16, 1},   {{1, 24, 5, 3}, 2, 8, 1},  // blocks in, plain out
      {{1, 16, 20, 9}, 4, 8, 1},  {{2, 36, 4, 5}, 3, 1, 1},    {{1, 8, 7, 3}, 2, 1, 1},   // plain
  };
  unsigned seed = 800;
  for (const Case& c : cases) {
    SCOPED_TRACE("x" + shape_str(c.x) + " blocksize " + std::to_string(c.bs) + " blocks " +
                 std::to_string(c.in_block) + " -> " + std::to_string(c.out_block));
    const Tensor x = random_tensor(c.x, ++seed);
    const Tensor want = depth_to_space_dcr(x, c.bs);
    std::vector<Tensor> kept;  // every output kept, so no run finds the right answer left by another
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      OpSpec s = depth_to_space(c.in_block > 1 ? to_blocked(x, c.in_block) : x, c.bs);
      s.attrs.set("ng.in_block", Attribute::of_int(c.in_block));
      s.attrs.set("ng.out_block", Attribute::of_int(c.out_block));
      s.threads = threads;
      const Tensor got = eltest::run_op(s).at(0);
      ASSERT_EQ(got.shape(), want.shape());
      expect_same_bits(want, c.out_block > 1 ? from_blocked(got, c.out_block) : got);
      kept.push_back(got);
    }
  }
  {  // CRD, plain (the strided copy): channel c * bs * bs + i * bs + j
    const Tensor x = random_tensor({1, 8, 3, 2}, 850);
    OpSpec s = depth_to_space(x, 2);
    s.attrs.set("mode", Attribute::of_string("CRD"));
    const Tensor got = eltest::run_op(s).at(0);
    EXPECT_EQ(got.data_as<float>()[1 * 6 * 4 + 3 * 4 + 2], x.data_as<float>()[(1 * 4 + 1 * 2 + 0) * 6 + 1 * 2 + 1]);
  }
}

TEST(DepthToSpaceBlocked, RefusesWhatItCannotCompute) {
  {  // CRD: a tap's channels are not contiguous
    OpSpec s = depth_to_space(random_tensor({1, 64, 2, 2}, 1), 2);
    s.attrs.set("mode", Attribute::of_string("CRD"));
    set_blocks(s, 16);
    EXPECT_NE(eltest::error_of(s).find("needs mode DCR"), std::string::npos) << eltest::error_of(s);
  }
  {  // 8 output channels in blocks of 16
    OpSpec s = depth_to_space(random_tensor({1, 32, 2, 2}, 2), 2);
    set_blocks(s, 16);
    EXPECT_NE(eltest::error_of(s).find("multiple of it"), std::string::npos) << eltest::error_of(s);
  }
  {  // a blocked output from another block than the input's
    OpSpec s = depth_to_space(random_tensor({1, 64, 2, 2}, 3), 2);
    s.attrs.set("ng.in_block", Attribute::of_int(16));
    s.attrs.set("ng.out_block", Attribute::of_int(8));
    EXPECT_NE(eltest::error_of(s).find("must be equal or the output plain"), std::string::npos) << eltest::error_of(s);
  }
}

// ConvTranspose of x [n, c, h, w] by a random [c, m, k, k] weight with the given stride and pads.
OpSpec conv_transpose(const Tensor& x, int64_t m, int64_t k, int64_t stride, int64_t pad, bool const_weights,
                      unsigned seed) {
  const Tensor w = random_tensor({x.shape()[1], m, k, k}, seed, -0.5f, 0.5f);
  const Tensor b = random_tensor({m}, seed + 1);
  OpSpec s{"ConvTranspose", {arg(x), const_weights ? konst(w) : arg(w), konst(b)}, {}};
  s.attrs.set("strides", Attribute::of_ints({stride, stride}));
  s.attrs.set("pads", Attribute::of_ints({pad, pad, pad, pad}));
  s.attrs.set("ng.activation", Attribute::of_string("Relu"));
  return s;
}

TEST(ConvTransposeBlockedInput, MatchesPlainInputBitForBit) {
  struct Case {
    Shape x;
    int64_t m, k, stride, pad, block;
  };
  const std::vector<Case> cases = {
      {{1, 24, 9, 7}, 24, 2, 2, 0, 8}, {{1, 32, 6, 5}, 1, 2, 2, 0, 16}, {{2, 16, 5, 6}, 8, 3, 2, 1, 16},
      {{1, 48, 4, 4}, 5, 4, 1, 1, 8},  {{1, 24, 80, 30}, 24, 2, 2, 0, 8},  // several bands
  };
  unsigned seed = 900;
  for (const Case& c : cases) {
    for (bool const_weights : {true, false}) {  // the fast path, and the reference on a reordered copy
      SCOPED_TRACE("x" + shape_str(c.x) + " m " + std::to_string(c.m) + " k " + std::to_string(c.k) + " block " +
                   std::to_string(c.block) + (const_weights ? " fast" : " reference"));
      seed += 10;
      const Tensor x = random_tensor(c.x, seed);
      const OpSpec plain = conv_transpose(x, c.m, c.k, c.stride, c.pad, const_weights, seed + 1);
      const Tensor want = eltest::run_op(plain).at(0);
      std::vector<Tensor> kept;
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        OpSpec s = plain;
        s.inputs[0] = arg(to_blocked(x, c.block));
        s.attrs.set("ng.in_block", Attribute::of_int(c.block));
        s.threads = threads;
        const Tensor got = eltest::run_op(s).at(0);
        expect_same_bits(want, got);  // the output stays plain
        kept.push_back(got);
      }
    }
  }
}

TEST(ConvTransposeBlockedInput, RefusesABlockItCannotRead) {
  OpSpec s = conv_transpose(random_tensor({1, 24, 3, 3}, 1), 8, 2, 2, 0, true, 2);
  s.attrs.set("ng.in_block", Attribute::of_int(4));
  EXPECT_NE(eltest::error_of(s).find("must be 1, 8 or 16"), std::string::npos) << eltest::error_of(s);
  s.attrs.set("ng.in_block", Attribute::of_int(16));  // 24 channels
  EXPECT_NE(eltest::error_of(s).find("whose channels it divides"), std::string::npos) << eltest::error_of(s);
}

using test_graph::GraphBuilder;

struct Head {
  int64_t m = 24, k = 2, stride = 2, pad = 0, group = 1, dilation = 1, output_padding = 0;
  std::string activation = "Relu";  // after the first ConvTranspose: Relu, PRelu (per channel) or none
  std::string tail = "ConvTranspose";  // after the activation: ConvTranspose (to 1 channel) or Conv (3x3 to 8)
  bool activation_is_output = false;   // the activation's output is also a graph output
};

// x [1, 3, 12, 12] -> 3x3 conv to 24 channels "a" -> ConvTranspose "up" as `h` says -> its activation ->
// the tail: ConvTranspose 2x2 stride 2 to 1 channel and Sigmoid (PP-OCRv4 det's head in small), or a 3x3
// conv to 8 channels -> "z".
GraphBuilder head(const Head& h) {
  GraphBuilder b;
  b.input("x", {1, 3, 12, 12});
  b.constant("a_w", {24, 3, 3, 3});
  b.constant("a_b", {24});
  b.node("Conv", {"x", "a_w", "a_b"}, {"a"}).attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.constant("up_w", {24, h.m / h.group, h.k, h.k}, -0.3f, 0.3f);
  b.constant("up_b", {h.m});
  Node& up = b.node("ConvTranspose", {"a", "up_w", "up_b"}, {"up"});
  up.name = "up";
  up.attrs.set("strides", Attribute::of_ints({h.stride, h.stride}));
  up.attrs.set("pads", Attribute::of_ints({h.pad, h.pad, h.pad, h.pad}));
  up.attrs.set("group", Attribute::of_int(h.group));
  up.attrs.set("dilations", Attribute::of_ints({h.dilation, h.dilation}));
  up.attrs.set("output_padding", Attribute::of_ints({h.output_padding, h.output_padding}));
  std::string act = "up";
  if (h.activation == "Relu") {
    b.node("Relu", {"up"}, {"up_act"});
    act = "up_act";
  } else if (h.activation == "PRelu") {
    b.constant("slope", {h.m, 1, 1});
    b.node("PRelu", {"up", "slope"}, {"up_act"});
    act = "up_act";
  }
  if (h.tail == "Conv") {
    b.constant("z_w", {8, h.m, 3, 3}, -0.3f, 0.3f);
    b.constant("z_b", {8});
    b.node("Conv", {act, "z_w", "z_b"}, {"z"}).attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  } else {
    b.constant("z_w", {h.m, 1, 2, 2}, -0.3f, 0.3f);
    b.constant("z_b", {1});
    Node& last = b.node("ConvTranspose", {act, "z_w", "z_b"}, {"z_logits"});
    last.name = "z_logits";
    last.attrs.set("strides", Attribute::of_ints({2, 2}));
    b.node("Sigmoid", {"z_logits"}, {"z"});
  }
  b.output("z");
  if (h.activation_is_output) b.output(act);
  return b;
}

using test_graph::expect_close;
using test_graph::run_planned;

int count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

// The optimised graph computes what `b`'s graph does, at the planned size and another one.
void expect_same_results(const GraphBuilder& b, const Graph& optimised) {
  for (int64_t size : {12, 10}) {
    const Tensor x = test_graph::random_input({1, 3, size, size}, 700 + static_cast<unsigned>(size));
    expect_close(run_planned(b.g, x), run_planned(optimised, x));
  }
}

TEST(ConvTransposeAsPointwise, KernelEqualToStrideBecomesAConvAndAShuffle) {
  const int64_t block = isa_block(hardware_isa());
  if (block < 8) GTEST_SKIP() << "needs the x86 channel blocks";
  for (const char* activation : {"Relu", "PRelu", "none"}) {
    for (int64_t k : {2, 3}) {
      SCOPED_TRACE(std::string(activation) + ", kernel and stride " + std::to_string(k));
      Head h;
      h.k = h.stride = k;
      h.activation = activation;
      h.tail = "Conv";
      const GraphBuilder b = head(h);
      Graph g = b.g;
      optimize_graph(g, 2, block, ResourceLimits());
      EXPECT_EQ(count(g, "ConvTranspose"), 0);
      EXPECT_EQ(count(g, "ng.Reorder"), 0);  // blocks from the conv through the shuffle to the 3x3 conv
      const Node* shuffle = node_named(g, "up_pixel_shuffle");
      ASSERT_NE(shuffle, nullptr);
      EXPECT_EQ(shuffle->attrs.get_int("blocksize", 0), k);
      EXPECT_EQ(shuffle->attrs.get_int("ng.in_block", 1), 8);  // 8 divides the 24 output channels, 16 does not
      EXPECT_EQ(shuffle->attrs.get_int("ng.out_block", 1), 8);
      const Node* conv = node_named(g, "up");
      ASSERT_NE(conv, nullptr);
      EXPECT_EQ(conv->op_type, "Conv");
      EXPECT_EQ(g.values[conv->inputs[1]].shape, (Shape{24 * k * k, 24, 1, 1}));
      EXPECT_EQ(conv->attrs.get_int("ng.out_block", 1), 8);
      EXPECT_EQ(conv->attrs.get_string("ng.activation", "none"), activation);
      expect_same_results(b, g);
    }
  }
}

TEST(ConvTransposeAsPointwise, TwoInARowBecomeTwoConvsAndOneShuffle) {
  const int64_t block = isa_block(hardware_isa());
  if (block < 8) GTEST_SKIP() << "needs the x86 channel blocks";
  for (const char* activation : {"Relu", "PRelu", "none"}) {
    for (int64_t k : {2, 3}) {
      SCOPED_TRACE(std::string(activation) + ", first kernel and stride " + std::to_string(k));
      Head h;
      h.k = h.stride = k;
      h.activation = activation;
      const GraphBuilder b = head(h);
      Graph g = b.g;
      optimize_graph(g, 2, block, ResourceLimits());
      EXPECT_EQ(count(g, "ConvTranspose"), 0);
      EXPECT_EQ(count(g, "DepthToSpace"), 1);  // the first shuffle is folded into the second conv
      EXPECT_EQ(count(g, "ng.Reorder"), 0);
      const Node* last = node_named(g, "z_logits");
      ASSERT_NE(last, nullptr);
      EXPECT_EQ(last->op_type, "Conv");
      const Node* first = node_named(g, "up");
      ASSERT_NE(first, nullptr);
      EXPECT_EQ(first->op_type, "Conv");
      EXPECT_EQ(last->inputs[0], first->outputs[0]);  // reads the first conv's taps, unshuffled
      EXPECT_EQ(g.values[last->inputs[1]].shape, (Shape{4 * k * k, 24 * k * k, 1, 1}));
      EXPECT_EQ(last->attrs.get_string("ng.activation", "none"), "Sigmoid");
      const Node* shuffle = node_named(g, "z_logits_pixel_shuffle");
      ASSERT_NE(shuffle, nullptr);
      EXPECT_EQ(shuffle->attrs.get_int("blocksize", 0), 2 * k);
      EXPECT_EQ(shuffle->attrs.get_int("ng.out_block", 1), 1);  // the one-channel map, plain
      expect_same_results(b, g);
    }
  }
  {  // the first ConvTranspose's output also read as a graph output: its shuffle stays, the second reads it
    Head h;
    h.activation_is_output = true;
    const GraphBuilder b = head(h);
    Graph g = b.g;
    optimize_graph(g, 2, block, ResourceLimits());
    EXPECT_EQ(count(g, "ConvTranspose"), 1);
    const Node* last = node_named(g, "z_logits");
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->op_type, "ConvTranspose");
    EXPECT_EQ(last->attrs.get_int("ng.in_block", 1), 8);  // reads the shuffle's blocks
    expect_same_results(b, g);
  }
}

TEST(ConvTransposeAsPointwise, NotWhereTapsOverlapOrTheShuffleWouldSplitBlocks) {
  const int64_t block = isa_block(hardware_isa());
  if (block < 8) GTEST_SKIP() << "needs the x86 channel blocks";
  std::vector<std::pair<std::string, Head>> cases;
  Head h;
  h.k = 3;  // stride 2: taps overlap
  cases.push_back({"kernel 3, stride 2", h});
  h = Head();
  h.pad = 1;
  cases.push_back({"pads", h});
  h = Head();
  h.group = 2;
  cases.push_back({"two groups", h});
  h = Head();
  h.dilation = 2;
  cases.push_back({"dilation", h});
  h = Head();
  h.output_padding = 1;
  cases.push_back({"output_padding", h});
  h = Head();
  h.m = 12;
  cases.push_back({"12 output channels", h});
  for (const auto& [what, c] : cases) {
    SCOPED_TRACE(what);
    const GraphBuilder b = head(c);
    Graph g = b.g;
    optimize_graph(g, 2, block, ResourceLimits());
    EXPECT_EQ(count(g, "ConvTranspose"), 2);
    EXPECT_EQ(count(g, "DepthToSpace"), 0);
    const Tensor x = test_graph::random_input({1, 3, 12, 12}, 750);
    expect_close(run_planned(b.g, x), run_planned(g, x));
  }
}

}  // namespace
}  // namespace ninegrid
