// A nearest Resize that adds a tensor of its output's shape as it writes (ng.add_operand = 4,
// ops/resize.cpp, kernels/ref/resize_nearest_add_ref) and the pass that makes one of lateral +
// Resize(top) (graph/passes/fuse_upsample_add.cpp):
//   - the fused op gives the bits of the plain Resize's output plus the addend, added here, plain and
//     channel-blocked (blocks 16, 8, 4 and 12), at 1-3 threads, for up- and downsampling by integer and
//     fractional scales and by sizes, in the coordinate and rounding modes FPNs export with;
//   - it refuses a bad addend, a non-nearest mode and a bad attribute;
//   - the pass fuses both operand orders of the Add after the layout plan, equal to the unoptimised graph at
//     the planned size and another one, and leaves a Resize with another reader, a linear one and a
//     broadcasting Add alone.
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

OpSpec nearest_resize(const Tensor& x, const std::vector<float>& scales, const std::string& coords,
                      const std::string& rounding) {
  OpSpec s{"Resize", {arg(x), eltest::omitted(), konst(eltest::f32({4}, scales))}, {}};
  s.attrs.set("mode", Attribute::of_string("nearest"));
  s.attrs.set("coordinate_transformation_mode", Attribute::of_string(coords));
  s.attrs.set("nearest_mode", Attribute::of_string(rounding));
  return s;
}

// The resize as `plain` computes it, then the addend added here: what the unfused pair computes.
Tensor resize_then_add(const OpSpec& plain, const Tensor& addend) {
  Tensor y = eltest::run_op(plain).at(0);
  EXPECT_EQ(y.shape(), addend.shape());
  for (int64_t i = 0; i < y.numel(); ++i) y.data_as<float>()[i] += addend.data_as<float>()[i];
  return y;
}

// Runs `plain` with the addend fused, plain and with ng.in_block = ng.out_block = block.
void expect_fused_matches(const OpSpec& plain, const Tensor& addend, int64_t block) {
  const Tensor want = resize_then_add(plain, addend);
  std::vector<Tensor> kept;  // every output kept, so no run finds the right answer left by another
  for (int64_t blk : {int64_t(1), block}) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("block " + std::to_string(blk) + ", " + std::to_string(threads) + " threads");
      OpSpec s = plain;
      s.threads = threads;
      s.inputs.push_back(eltest::omitted());  // sizes
      s.inputs.push_back(arg(blk > 1 ? to_blocked(addend, blk) : addend));
      s.attrs.set("ng.add_operand", Attribute::of_int(4));
      if (blk > 1) {
        s.attrs.set("ng.in_block", Attribute::of_int(blk));
        s.attrs.set("ng.out_block", Attribute::of_int(blk));
        s.inputs[0].value = to_blocked(s.inputs[0].value, blk);
      }
      Tensor got;
      try {
        got = eltest::run_op(s).at(0);
      } catch (const Error& e) {
        FAIL() << "fused run failed: " << e.what();
      }
      expect_same_bits(want, blk > 1 ? from_blocked(got, blk) : got);
      kept.push_back(got);
    }
  }
}

TEST(ResizeAdd, MatchesResizeThenAddBitForBit) {
  struct Case {
    Shape x;
    float scale_h, scale_w;
    const char* coords;
    const char* rounding;
    int64_t block;
  };
  const std::vector<Case> cases = {
      {{1, 16, 5, 7}, 2.f, 2.f, "asymmetric", "floor", 16},
      {{1, 32, 6, 4}, 2.f, 2.f, "half_pixel", "round_prefer_floor", 16},
      {{2, 24, 3, 5}, 3.f, 2.f, "asymmetric", "round_prefer_ceil", 8},
      {{1, 8, 7, 6}, 1.5f, 0.5f, "pytorch_half_pixel", "round_prefer_floor", 8},
      {{1, 12, 9, 9}, 0.5f, 1.f, "align_corners", "ceil", 4},
      {{1, 24, 4, 3}, 4.f, 8.f, "asymmetric", "floor", 12},
  };
  unsigned seed = 500;
  for (const Case& c : cases) {
    SCOPED_TRACE("x" + shape_str(c.x) + " scales " + std::to_string(c.scale_h) + "x" + std::to_string(c.scale_w) +
                 " " + c.coords + " " + c.rounding);
    const Tensor x = random_tensor(c.x, ++seed);
    const OpSpec plain = nearest_resize(x, {1.f, 1.f, c.scale_h, c.scale_w}, c.coords, c.rounding);
    const Shape y = {c.x[0], c.x[1], static_cast<int64_t>(std::floor(c.x[2] * c.scale_h)),
                     static_cast<int64_t>(std::floor(c.x[3] * c.scale_w))};
    expect_fused_matches(plain, random_tensor(y, ++seed), c.block);
  }
  // A plane large enough for threads to split it in bands of rows.
  const Tensor x = random_tensor({1, 16, 20, 24}, 600);
  expect_fused_matches(nearest_resize(x, {1.f, 1.f, 2.f, 2.f}, "asymmetric", "floor"),
                       random_tensor({1, 16, 40, 48}, 601), 16);
}

TEST(ResizeAdd, SizesInsteadOfScales) {
  const Tensor x = random_tensor({1, 16, 5, 6}, 610);
  OpSpec plain{"Resize", {arg(x), eltest::omitted(), eltest::omitted(), konst(eltest::i64({4}, {1, 16, 10, 13}))}, {}};
  plain.attrs.set("mode", Attribute::of_string("nearest"));
  const Tensor addend = random_tensor({1, 16, 10, 13}, 611);
  const Tensor want = resize_then_add(plain, addend);
  OpSpec fused = plain;
  fused.inputs.push_back(arg(addend));
  fused.attrs.set("ng.add_operand", Attribute::of_int(4));
  expect_same_bits(want, eltest::run_op(fused).at(0));
}

TEST(ResizeAdd, RefusesWhatItCannotCompute) {
  const Tensor x = random_tensor({1, 16, 4, 4}, 620);
  auto fused_error = [&](const std::string& mode, int64_t add_operand, const Tensor& addend) {
    OpSpec s = nearest_resize(x, {1.f, 1.f, 2.f, 2.f}, "asymmetric", "floor");
    s.attrs.set("mode", Attribute::of_string(mode));
    s.inputs.push_back(eltest::omitted());
    s.inputs.push_back(arg(addend));
    s.attrs.set("ng.add_operand", Attribute::of_int(add_operand));
    return eltest::error_of(s);
  };
  const Tensor good = random_tensor({1, 16, 8, 8}, 621);
  EXPECT_EQ(fused_error("nearest", 4, good), "");
  EXPECT_NE(fused_error("nearest", 3, good).find("must be 4"), std::string::npos);
  EXPECT_NE(fused_error("linear", 4, good).find("nearest"), std::string::npos);
  EXPECT_NE(fused_error("nearest", 4, random_tensor({1, 16, 8, 1}, 622)).find("output's shape"), std::string::npos);
  EXPECT_NE(fused_error("nearest", 4, eltest::i64({1, 16, 8, 8}, std::vector<int64_t>(1024, 1))).find("float32"),
            std::string::npos);
  // Without the addend input.
  OpSpec four = nearest_resize(x, {1.f, 1.f, 2.f, 2.f}, "asymmetric", "floor");
  four.attrs.set("ng.add_operand", Attribute::of_int(4));
  EXPECT_NE(eltest::error_of(four), "");
}

// The resize as `plain` computes it, plus x * g + x for the gate g of each (batch, channel), each step
// rounded here: what the Resize after the gate-residual Mul computes unfused.
Tensor resize_then_gated_add(const OpSpec& plain, const Tensor& x, const Tensor& gate) {
  Tensor y = eltest::run_op(plain).at(0);
  EXPECT_EQ(y.shape(), x.shape());
  const Shape& s = y.shape();
  const int64_t plane = s[2] * s[3];
  const Shape& gs = gate.shape();  // rank 4
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c) {
      const float g = gate.data_as<float>()[(gs[0] == 1 ? 0 : n) * gs[1] + (gs[1] == 1 ? 0 : c)];
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t at = (n * s[1] + c) * plane + i;
        const float a = x.data_as<float>()[at];
        const float product = a * g;
        const float lateral = product + a;
        y.data_as<float>()[at] += lateral;
      }
    }
  return y;
}

TEST(ResizeAdd, GatedAddendMatchesTheMulThenTheAddBitForBit) {
  struct Case {
    Shape top, gate;
    int64_t block;
  };
  const std::vector<Case> cases = {
      {{1, 32, 6, 5}, {1, 32, 1, 1}, 16},
      {{2, 24, 4, 7}, {2, 24, 1, 1}, 8},
      {{2, 12, 5, 3}, {1, 1, 1, 1}, 4},
      {{1, 16, 20, 24}, {1, 16, 1, 1}, 16},  // bands of rows
  };
  unsigned seed = 650;
  for (const Case& c : cases) {
    SCOPED_TRACE("top" + shape_str(c.top) + " gate" + shape_str(c.gate));
    const Tensor top = random_tensor(c.top, ++seed);
    const OpSpec plain = nearest_resize(top, {1.f, 1.f, 2.f, 2.f}, "asymmetric", "floor");
    const Tensor x = random_tensor({c.top[0], c.top[1], 2 * c.top[2], 2 * c.top[3]}, ++seed);
    const Tensor gate = random_tensor(c.gate, ++seed, 0.f, 1.f);
    const Tensor want = resize_then_gated_add(plain, x, gate);
    std::vector<Tensor> kept;
    for (int64_t blk : {int64_t(1), c.block}) {
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE("block " + std::to_string(blk) + ", " + std::to_string(threads) + " threads");
        OpSpec s = plain;
        s.threads = threads;
        s.inputs.push_back(eltest::omitted());  // sizes
        s.inputs.push_back(arg(blk > 1 ? to_blocked(x, blk) : x));
        s.inputs.push_back(arg(gate));  // one value per (batch, channel): the same bytes in every layout
        s.attrs.set("ng.add_operand", Attribute::of_int(4));
        if (blk > 1) {
          s.attrs.set("ng.in_block", Attribute::of_int(blk));
          s.attrs.set("ng.out_block", Attribute::of_int(blk));
          s.inputs[0].value = to_blocked(s.inputs[0].value, blk);
        }
        const Tensor got = eltest::run_op(s).at(0);
        expect_same_bits(want, blk > 1 ? from_blocked(got, blk) : got);
        kept.push_back(got);
      }
    }
  }
}

TEST(ResizeAdd, RefusesAGateThatIsNotPerChannel) {
  const Tensor top = random_tensor({2, 16, 3, 3}, 660);
  auto gated_error = [&](const Tensor& gate) {
    OpSpec s = nearest_resize(top, {1.f, 1.f, 2.f, 2.f}, "asymmetric", "floor");
    s.inputs.push_back(eltest::omitted());
    s.inputs.push_back(arg(random_tensor({2, 16, 6, 6}, 661)));
    s.inputs.push_back(arg(gate));
    s.attrs.set("ng.add_operand", Attribute::of_int(4));
    return eltest::error_of(s);
  };
  EXPECT_EQ(gated_error(random_tensor({2, 16, 1, 1}, 662)), "");
  EXPECT_EQ(gated_error(random_tensor({16, 1, 1}, 663)), "");
  EXPECT_NE(gated_error(random_tensor({1, 16, 6, 6}, 664)).find("one value per batch and channel"), std::string::npos);
  EXPECT_NE(gated_error(random_tensor({3, 16, 1, 1}, 665)).find("one value per batch and channel"), std::string::npos);
  EXPECT_NE(gated_error(random_tensor({1, 8, 1, 1}, 666)).find("one value per batch and channel"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// fuse_upsample_add

using test_graph::GraphBuilder;

// x [1, 3, 16, 16] -> 3x3 conv and a 3x3 MaxPool "lat" (32 channels, 16x16; not a conv's output, which
// would take the Add in as its residual) and 3x3 stride-2 conv "top" (32 channels, 8x8); up = Resize(top) x2
// in `mode`; y = Add(lat, up) (or Add(up, lat)); z = 1x1 conv of y.
GraphBuilder fpn_merge(bool up_first, const std::string& mode = "nearest") {
  GraphBuilder b;
  b.input("x", {1, 3, 16, 16});
  auto conv = [&](const std::string& in, const std::string& out, int64_t cin, int64_t cout, int64_t k,
                  int64_t stride) {
    b.constant(out + "_w", {cout, cin, k, k});
    b.constant(out + "_b", {cout});
    Node& n = b.node("Conv", {in, out + "_w", out + "_b"}, {out});
    n.attrs.set("pads", Attribute::of_ints({k / 2, k / 2, k / 2, k / 2}));
    n.attrs.set("strides", Attribute::of_ints({stride, stride}));
  };
  conv("x", "lat_conv", 3, 32, 3, 1);
  Node& pool = b.node("MaxPool", {"lat_conv"}, {"lat"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({3, 3}));
  pool.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  conv("x", "top", 3, 32, 3, 2);
  test_graph::add_const<float>(b, "scales", DataType::Float32, {4}, {1.f, 1.f, 2.f, 2.f});
  Node& r = b.node("Resize", {"top", "", "scales"}, {"up"});
  r.attrs.set("mode", Attribute::of_string(mode));
  r.attrs.set("coordinate_transformation_mode", Attribute::of_string("asymmetric"));
  r.attrs.set("nearest_mode", Attribute::of_string("floor"));
  b.node("Add", up_first ? std::vector<std::string>{"up", "lat"} : std::vector<std::string>{"lat", "up"}, {"y"});
  conv("y", "z", 32, 16, 1, 1);
  b.output("z");
  return b;
}

const Node* only_node(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes)
    if (n.op_type == op) {
      EXPECT_EQ(found, nullptr) << "more than one " << op;
      found = &n;
    }
  return found;
}

using test_graph::expect_close;
using test_graph::run_planned;

TEST(FuseUpsampleAdd, TheResizeTakesTheAddIn) {
  for (bool up_first : {false, true}) {
    SCOPED_TRACE(up_first ? "Add(up, lat)" : "Add(lat, up)");
    const GraphBuilder b = fpn_merge(up_first);
    Graph g = b.g;
    optimize_graph(g, 2, isa_block(hardware_isa()), ResourceLimits());
    EXPECT_EQ(only_node(g, "Add"), nullptr);
    const Node* r = only_node(g, "Resize");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->attrs.get_int("ng.add_operand", -1), 4);
    ASSERT_EQ(r->inputs.size(), 5u);
    EXPECT_EQ(g.values[r->inputs[4]].name, "lat");
    EXPECT_EQ(g.values[r->outputs[0]].name, "y");
    // The layout plan stays as it was: the merge reads and writes the blocked maps with no reorder.
    EXPECT_EQ(only_node(g, "ng.Reorder"), nullptr);
    EXPECT_EQ(r->attrs.get_int("ng.out_block", 1), isa_block(hardware_isa()));
    for (int64_t size : {16, 24}) {  // at the planned size and another one
      const Tensor x = test_graph::random_input({1, 3, size, size}, 700 + static_cast<unsigned>(size));
      expect_close(run_planned(b.g, x), run_planned(g, x));
    }
  }
}

// fpn_merge with the lateral a squeeze-and-excitation residual: lat + lat * sigmoid(mean(lat)), as
// PP-OCRv4 det's neck has before each of its merges.
GraphBuilder gated_fpn_merge(bool up_first) {
  GraphBuilder b = fpn_merge(up_first);
  for (Node& n : b.g.nodes)
    if (n.op_type == "Add") n.inputs[up_first ? 1 : 0] = b.value("lat_se");
  // Inserted before the merge's Add, which reads lat_se.
  std::vector<Node> se;
  auto make = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
    Node n;
    n.name = out;
    n.op_type = op;
    for (const std::string& i : ins) n.inputs.push_back(b.value(i));
    n.outputs = {b.value(out)};
    se.push_back(n);
  };
  make("GlobalAveragePool", {"lat"}, "lat_mean");
  make("Sigmoid", {"lat_mean"}, "gate");
  make("Mul", {"lat", "gate"}, "lat_gated");
  make("Add", {"lat", "lat_gated"}, "lat_se");
  for (size_t i = 0; i < b.g.nodes.size(); ++i)
    if (b.g.nodes[i].op_type == "Add") {
      b.g.nodes.insert(b.g.nodes.begin() + static_cast<std::ptrdiff_t>(i), se.begin(), se.end());
      break;
    }
  return b;
}

TEST(FuseUpsampleAdd, TheResizeAlsoGatesASqueezeExciteLateral) {
  for (bool up_first : {false, true}) {
    SCOPED_TRACE(up_first ? "Add(up, lateral)" : "Add(lateral, up)");
    const GraphBuilder b = gated_fpn_merge(up_first);
    Graph g = b.g;
    optimize_graph(g, 2, isa_block(hardware_isa()), ResourceLimits());
    EXPECT_EQ(only_node(g, "Add"), nullptr);
    EXPECT_EQ(only_node(g, "Mul"), nullptr);
    const Node* r = only_node(g, "Resize");
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(r->inputs.size(), 6u);
    EXPECT_EQ(g.values[r->inputs[4]].name, "lat");
    EXPECT_EQ(g.values[r->inputs[5]].name, "gate");
    EXPECT_EQ(only_node(g, "ng.Reorder"), nullptr);
    for (int64_t size : {16, 24}) {
      const Tensor x = test_graph::random_input({1, 3, size, size}, 720 + static_cast<unsigned>(size));
      expect_close(run_planned(b.g, x), run_planned(g, x));
    }
  }
  {  // the gated lateral read elsewhere too: the Mul stays, the Resize adds its output
    GraphBuilder b = gated_fpn_merge(false);
    b.output("lat_se");
    Graph g = b.g;
    optimize_graph(g, 2, isa_block(hardware_isa()), ResourceLimits());
    const Node* r = only_node(g, "Resize");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->inputs.size(), 5u);
    EXPECT_NE(only_node(g, "Mul"), nullptr);
  }
}

TEST(FuseUpsampleAdd, NotWhereTheResizeIsReadElsewhereIsLinearOrTheAddBroadcasts) {
  auto adds_left = [](const GraphBuilder& b) { return test_graph::ops_of(*test_graph::model_of(b.g, 2))["Add"]; };
  EXPECT_EQ(adds_left(fpn_merge(false)), 0);
  EXPECT_EQ(adds_left(fpn_merge(false, "linear")), 1);
  {  // the upsampled map is also a graph output
    GraphBuilder b = fpn_merge(false);
    b.output("up");
    EXPECT_EQ(adds_left(b), 1);
  }
  {  // a per-channel lateral broadcast over the upsampled map
    GraphBuilder b = fpn_merge(false);
    b.constant("bias", {1, 32, 1, 1});
    for (Node& n : b.g.nodes)
      if (n.op_type == "Add") n.inputs[0] = b.value("bias");
    EXPECT_EQ(adds_left(b), 1);
  }
}

}  // namespace
}  // namespace ninegrid
