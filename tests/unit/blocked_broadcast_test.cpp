// Add, Sub, Mul and Div on channel-blocked data (ops/layout_tolerant_binary_op.h), and the layout pass's
// layout-free values (squeeze-and-excitation gates, plan_layout.cpp):
//   - the blocked op, run as a one-node session on a blocked input (rearranged here from the layout's
//     definition, output rearranged back), gives the same bits as the plain op on the same data, for a
//     per-(batch, channel) operand in every accepted shape, both operand orders, and a same-shape blocked
//     operand; it refuses the broadcasts it cannot compute. The plain ops are tested against hand-computed
//     values in elementwise_test.cpp.
//   - a hand-built SE block planned at opt-level 2 keeps the feature map blocked through the Mul with no
//     layout transform, and computes what the unoptimised graph does, also at another input size;
//     with a channel count no block divides the plan stays plain;
//   - a 1x1 map from a non-global pool is not layout-free: at a larger input size it is not 1x1.
//   - with ng.add_operand (an SE block's residual, x + x * gate, fused into the Mul) the op gives the bits
//     of the product and the sum computed apart here, plain and blocked, in either operand order; the
//     pass fuses the Add where the Mul cannot broadcast x and its product has no other reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/passes/passes.h"
#include "graph/passes/pipeline.h"
#include "kernels/ref/reorder_ref.h"
#include "core/cpu_features.h"
#include "runtime/model_impl.h"
#include "unit/blocked_test_util.h"
#include "unit/elementwise_test_util.h"
#include "unit/graph_builder.h"

namespace ninegrid {
namespace {

using eltest::arg;
using eltest::konst;
using eltest::OpSpec;

using blocked_test::expect_same_bits;
using blocked_test::from_blocked;
using blocked_test::random_tensor;
using blocked_test::to_blocked;

// Runs op(a, b) plain and with ng.in_block = ng.out_block = block; every input of the output's shape is
// stored blocked, the others (per-channel operands) as they are. Same bits required.
void expect_blocked_matches_plain(const std::string& op, const Tensor& a, const Tensor& b, bool b_constant,
                                  int64_t block) {
  OpSpec plain{op, {arg(a), b_constant ? konst(b) : arg(b)}, {}};
  const Tensor want = eltest::run_op(plain).at(0);
  ASSERT_EQ(want.shape().size(), 4u);
  // Every run's output is kept to the end, so that no run's output lands in memory a run before it left
  // holding the right answer (that would hide a part of the output left unwritten).
  std::vector<Tensor> kept;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpSpec blocked = plain;
    blocked.threads = threads;
    blocked.attrs.set("ng.in_block", Attribute::of_int(block));
    blocked.attrs.set("ng.out_block", Attribute::of_int(block));
    for (auto& in : blocked.inputs)
      if (in.value.shape() == want.shape()) in.value = to_blocked(in.value, block);
    Tensor got;
    try {
      got = eltest::run_op(blocked).at(0);
    } catch (const Error& e) {
      FAIL() << "blocked run failed: " << e.what();
    }
    expect_same_bits(want, from_blocked(got, block));
    kept.push_back(got);
  }
}

// Per-(batch, channel) operand shapes for an output [n, c, h, w]: what an SE gate, a per-channel
// constant, a per-batch scalar and a plain scalar look like.
std::vector<Shape> channel_operand_shapes(int64_t n, int64_t c) {
  return {{n, c, 1, 1}, {1, c, 1, 1}, {c, 1, 1}, {n, 1, 1, 1}, {1, 1, 1, 1}, {1}, {}};
}

TEST(BlockedBroadcast, ChannelOperandMatchesPlainBitForBit) {
  std::mt19937 rng(5);
  struct Dims {
    int64_t n, c, block;
  };
  // Blocks 16, 8 and 4 run the fixed-lane kernels, 12 the run-time lane loop.
  const std::vector<Dims> dims = {{1, 16, 16}, {2, 32, 16}, {1, 24, 8}, {2, 8, 8}, {1, 12, 4}, {2, 24, 12}};
  unsigned seed = 100;
  for (const Dims& d : dims) {
    for (int trial = 0; trial < 2; ++trial) {
      const int64_t h = 1 + rng() % 9, w = 1 + rng() % 11;
      const Tensor x = random_tensor({d.n, d.c, h, w}, ++seed);
      for (const Shape& vs : channel_operand_shapes(d.n, d.c)) {
        // Away from zero, so Div is well defined; zeros are tested separately below.
        Tensor v = random_tensor(vs, ++seed, 0.25f, 3.f);
        for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
          for (bool constant : {false, true}) {
            SCOPED_TRACE(std::string(op) + " x" + shape_str(x.shape()) + " v" + shape_str(vs) + " block " +
                         std::to_string(d.block) + (constant ? " constant" : ""));
            expect_blocked_matches_plain(op, x, v, constant, d.block);  // op(x, v)
            expect_blocked_matches_plain(op, v, x, constant, d.block);  // op(v, x): Sub and Div differ
          }
        }
      }
    }
  }
}

TEST(BlockedBroadcast, SameShapeOperandsBothBlocked) {
  // The second shape is large enough (past kParallelGrain) that threads split it in bands of rows.
  for (const Shape& shape : {Shape{2, 32, 5, 7}, Shape{1, 32, 37, 29}}) {
    const Tensor a = random_tensor(shape, 1), b = random_tensor(shape, 2, 0.5f, 2.f);
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      SCOPED_TRACE(std::string(op) + " " + shape_str(shape));
      expect_blocked_matches_plain(op, a, b, false, 16);
      expect_blocked_matches_plain(op, b, a, false, 8);
    }
  }
}

TEST(BlockedBroadcast, ChannelOperandOnPlanesThreadsSplitInRowBands) {
  const Tensor x = random_tensor({1, 32, 45, 37}, 11);
  for (const Shape& vs : {Shape{1, 32, 1, 1}, Shape{32, 1, 1}}) {
    const Tensor v = random_tensor(vs, 12, 0.25f, 3.f);
    for (const char* op : {"Sub", "Div"}) {
      SCOPED_TRACE(std::string(op) + " v" + shape_str(vs));
      expect_blocked_matches_plain(op, x, v, false, 16);
      expect_blocked_matches_plain(op, v, x, true, 8);
    }
  }
}

TEST(BlockedBroadcast, SpecialValuesKeepTheirBits) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = random_tensor({1, 16, 3, 3}, 7);
  const float special[] = {0.f, -0.f, inf, -inf, nan, 1e-40f, -3.f};
  for (int64_t i = 0; i < x.numel(); i += 2) x.data_as<float>()[i] = special[(i / 2) % 7];
  Tensor v = random_tensor({1, 16, 1, 1}, 8);
  for (int64_t i = 0; i < 16; i += 3) v.data_as<float>()[i] = special[i % 7];
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    expect_blocked_matches_plain(op, x, v, false, 16);
    expect_blocked_matches_plain(op, v, x, true, 16);
  }
}

TEST(BlockedBroadcast, RefusesWhatItCannotCompute) {
  auto blocked_error = [](const Tensor& a, const Tensor& b, int64_t block) {
    OpSpec s{"Mul", {arg(a), arg(b)}, {}};
    s.attrs.set("ng.in_block", Attribute::of_int(block));
    s.attrs.set("ng.out_block", Attribute::of_int(block));
    return eltest::error_of(s);
  };
  const Tensor x = random_tensor({1, 16, 4, 4}, 3);
  // A spatial operand would need its own blocked indexing: not a per-channel broadcast.
  EXPECT_NE(blocked_error(x, random_tensor({1, 1, 4, 4}, 4), 16).find("one value per batch and channel"),
            std::string::npos);
  // Neither input has the output's shape.
  EXPECT_NE(blocked_error(random_tensor({1, 16, 1, 4}, 4), random_tensor({1, 16, 4, 1}, 5), 16)
                .find("output's shape"),
            std::string::npos);
  // 12 channels cannot be stored in blocks of 8.
  EXPECT_NE(blocked_error(random_tensor({1, 12, 4, 4}, 4), random_tensor({1, 12, 1, 1}, 5), 8).find("does not divide"),
            std::string::npos);
  // Integers have no blocked layout.
  OpSpec ints{"Add", {arg(eltest::i64({1, 16, 1, 1}, std::vector<int64_t>(16, 1))), arg(eltest::i64({1}, {2}))}, {}};
  ints.attrs.set("ng.in_block", Attribute::of_int(16));
  ints.attrs.set("ng.out_block", Attribute::of_int(16));
  EXPECT_NE(eltest::error_of(ints).find("float32"), std::string::npos) << eltest::error_of(ints);
}

// ---------------------------------------------------------------------------------------------------
// The residual add fused into the op (ng.add_operand)

// op(a, b) + a (add_input 0) or + b (1), element by element on plain tensors of one shape, or with b (or
// a) one value per channel: the product and the sum rounded apart, as two separate ops round them.
Tensor plus_operand_reference(const std::string& op, const Tensor& a, const Tensor& b, int add_input) {
  const Tensor& full = a.numel() >= b.numel() ? a : b;
  const Shape& s = full.shape();
  Tensor y = Tensor::from_vector<float>(DataType::Float32, s, std::vector<float>(full.numel()));
  const int64_t plane = s[2] * s[3];
  auto value = [&](const Tensor& t, int64_t i) {  // t's element at output element i
    if (t.shape() == s) return t.data_as<float>()[i];
    const int64_t nc = i / plane;  // n * C + c
    const int64_t at = t.numel() == s[0] * s[1] ? nc : t.numel() == s[1] ? nc % s[1] : 0;
    return t.data_as<float>()[at];
  };
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float x = value(a, i), v = value(b, i);
    volatile float r = op == "Mul" ? x * v : op == "Add" ? x + v : op == "Sub" ? x - v : x / v;
    y.data_as<float>()[i] = r + (add_input == 0 ? x : v);
  }
  return y;
}

// Runs op(a, b) with ng.add_operand = add_input, plain and blocked, 1 to 3 threads; same bits as the
// reference required.
void expect_plus_operand(const std::string& op, const Tensor& a, const Tensor& b, int add_input, int64_t block) {
  const Tensor want = plus_operand_reference(op, a, b, add_input);
  std::vector<Tensor> kept;  // as in expect_blocked_matches_plain
  for (int64_t blk : {int64_t(1), block}) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("block " + std::to_string(blk) + ", " + std::to_string(threads) + " threads");
      OpSpec s{op, {arg(a), arg(b)}, {}};
      s.threads = threads;
      s.attrs.set("ng.add_operand", Attribute::of_int(add_input));
      if (blk > 1) {
        s.attrs.set("ng.in_block", Attribute::of_int(blk));
        s.attrs.set("ng.out_block", Attribute::of_int(blk));
        for (auto& in : s.inputs)
          if (in.value.shape() == want.shape()) in.value = to_blocked(in.value, blk);
      }
      Tensor got;
      try {
        got = eltest::run_op(s).at(0);
      } catch (const Error& e) {
        FAIL() << "run failed: " << e.what();
      }
      expect_same_bits(want, blk > 1 ? from_blocked(got, blk) : got);
      kept.push_back(got);
    }
  }
}

TEST(AddOperand, GateResidualMatchesProductThenSumBitForBit) {
  std::mt19937 rng(9);
  struct Dims {
    int64_t n, c, block;
  };
  const std::vector<Dims> dims = {{1, 16, 16}, {2, 32, 16}, {1, 24, 8}, {1, 12, 4}, {1, 24, 12}};
  unsigned seed = 300;
  for (const Dims& d : dims) {
    for (int trial = 0; trial < 2; ++trial) {
      const int64_t h = 1 + rng() % 9, w = 1 + rng() % 13;
      const Tensor x = random_tensor({d.n, d.c, h, w}, ++seed);
      for (const Shape& gs : {Shape{d.n, d.c, 1, 1}, Shape{1, d.c, 1, 1}, Shape{d.c, 1, 1}, Shape{1}}) {
        const Tensor gate = random_tensor(gs, ++seed, 0.f, 1.f);
        SCOPED_TRACE("x" + shape_str(x.shape()) + " gate" + shape_str(gs));
        expect_plus_operand("Mul", x, gate, 0, d.block);
        expect_plus_operand("Mul", gate, x, 1, d.block);
      }
    }
  }
  // Rows enough for threads to split the planes in bands.
  const Tensor x = random_tensor({1, 32, 41, 37}, 400), gate = random_tensor({1, 32, 1, 1}, 401, 0.f, 1.f);
  expect_plus_operand("Mul", x, gate, 0, 16);
}

TEST(AddOperand, SameShapeOperandsAndTheOtherOps) {
  const Tensor a = random_tensor({1, 16, 5, 7}, 410), b = random_tensor({1, 16, 5, 7}, 411, 0.5f, 2.f);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    expect_plus_operand(op, a, b, 0, 16);  // op(a, b) + a
    expect_plus_operand(op, a, b, 1, 8);   // op(a, b) + b
  }
}

TEST(AddOperand, SpecialValuesKeepTheirBits) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = random_tensor({1, 16, 3, 3}, 420);
  const float special[] = {0.f, -0.f, inf, -inf, nan, 1e-40f, -3.f};
  for (int64_t i = 0; i < x.numel(); i += 2) x.data_as<float>()[i] = special[(i / 2) % 7];
  Tensor gate = random_tensor({1, 16, 1, 1}, 421);
  for (int64_t i = 0; i < 16; i += 3) gate.data_as<float>()[i] = special[i % 7];
  expect_plus_operand("Mul", x, gate, 0, 16);
  expect_plus_operand("Mul", gate, x, 1, 16);
}

TEST(AddOperand, RefusesWhatItCannotCompute) {
  const Tensor x = random_tensor({1, 16, 4, 4}, 430), gate = random_tensor({1, 16, 1, 1}, 431);
  auto error_with = [](const Tensor& a, const Tensor& b, int64_t add_input) {
    OpSpec s{"Mul", {arg(a), arg(b)}, {}};
    s.attrs.set("ng.add_operand", Attribute::of_int(add_input));
    return eltest::error_of(s);
  };
  EXPECT_NE(error_with(x, gate, 2).find("must be 0 or 1"), std::string::npos);
  EXPECT_NE(error_with(x, gate, -2).find("must be 0 or 1"), std::string::npos);
  // The gate has one value per channel: adding it would need a broadcast the fused sum does not make.
  EXPECT_NE(error_with(x, gate, 1).find("output's shape"), std::string::npos) << error_with(x, gate, 1);
  const Tensor ints = eltest::i64({1, 2, 1, 1}, {1, 2});
  EXPECT_NE(error_with(ints, ints, 0).find("float32"), std::string::npos) << error_with(ints, ints, 0);
}

// ---------------------------------------------------------------------------------------------------
// The layout pass

struct GraphBuilder {
  Graph g;
  unsigned seed = 40;

  int value(const std::string& name) {
    const int id = g.find_value(name);
    return id >= 0 ? id : g.add_value(name);
  }
  void input(const std::string& name, const Shape& shape) {
    const int x = value(name);
    g.values[x].dtype = DataType::Float32;
    g.values[x].shape = shape;
    g.values[x].shape_known = true;
    g.inputs.push_back(x);
  }
  void constant(const std::string& name, const Tensor& t) {
    const int id = value(name);
    g.values[id].constant = t;
    g.values[id].dtype = t.dtype();
    g.values[id].shape = t.shape();
    g.values[id].shape_known = true;
  }
  Node& node(const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
    Node n;
    n.name = op + "_" + std::to_string(g.nodes.size());
    n.op_type = op;
    for (const auto& i : ins) n.inputs.push_back(value(i));
    n.outputs.push_back(value(out));
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  // out = Conv(in) with a k x k kernel (padded to keep the size) and a bias.
  Node& conv(const std::string& in, const std::string& out, int64_t in_c, int64_t out_c, int64_t k = 1) {
    constant(out + "_w", random_tensor({out_c, in_c, k, k}, ++seed, -0.5f, 0.5f));
    constant(out + "_b", random_tensor({out_c}, ++seed, -0.5f, 0.5f));
    Node& n = node("Conv", {in, out + "_w", out + "_b"}, out);
    if (k > 1) n.attrs.set("pads", Attribute::of_ints({k / 2, k / 2, k / 2, k / 2}));
    return n;
  }
  // The squeeze-and-excitation gate of `x` (c channels): GlobalAveragePool -> 1x1 Conv -> Relu ->
  // 1x1 Conv -> HardSigmoid, as in MobileNetV3.
  void se_gate(const std::string& x, const std::string& gate, int64_t c, const std::string& pool = "GlobalAveragePool") {
    node(pool, {x}, gate + "_pooled");
    conv(gate + "_pooled", gate + "_squeezed", c, c / 4 > 0 ? c / 4 : 1);
    node("Relu", {gate + "_squeezed"}, gate + "_relu");
    conv(gate + "_relu", gate + "_excited", c / 4 > 0 ? c / 4 : 1, c);
    node("HardSigmoid", {gate + "_excited"}, gate);
  }
};

int reorders(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == "ng.Reorder";
  return n;
}

std::vector<const Node*> find_ops(const Graph& g, const std::string& op) {
  std::vector<const Node*> found;
  for (const Node& n : g.nodes)
    if (n.op_type == op) found.push_back(&n);
  return found;
}

// Runs `g` (taken as it is: opt_level 0) on x and returns output "z".
Tensor run_graph(Graph g, const Tensor& x) {
  for (int v : g.inputs) g.values[v].shape = x.shape();  // another size than planned: the plan stays
  Options o;
  o.opt_level = 0;
  auto m = std::make_shared<Model>(std::make_unique<ModelImpl>(std::move(g), o, "onnx"));
  return m->create_session()->run({{"x", x}}).at("z");
}

using test_graph::expect_close;

// x [1, 3, S, S] -> 3x3 Conv (c channels) -> f; z = Conv1x1(op(f, SE gate of f)) (or op(gate, f)).
GraphBuilder se_graph(int64_t c, int64_t size, const std::string& op = "Mul", bool gate_first = false) {
  GraphBuilder b;
  b.input("x", {1, 3, size, size});
  b.conv("x", "f", 3, c, 3);
  b.se_gate("f", "s", c);
  if (gate_first) b.node(op, {"s", "f"}, "y");
  else b.node(op, {"f", "s"}, "y");
  b.conv("y", "z", c, 16);
  b.g.outputs.push_back(b.value("z"));
  return b;
}

TEST(BlockedBroadcastLayout, SqueezeExciteNeedsNoTransform) {
  if (isa_block(hardware_isa()) <= 1) GTEST_SKIP() << "no vector block on this CPU: nothing is blocked";
  const int64_t block = isa_block(hardware_isa());
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    for (bool gate_first : {false, true}) {
      SCOPED_TRACE(std::string(op) + (gate_first ? "(gate, x)" : "(x, gate)"));
      GraphBuilder b = se_graph(32, 12, op, gate_first);
      // What a model loaded at opt_level 2 makes of it (a model's own graph lacks the weights it packed).
      Graph g = b.g;
      optimize_graph(g, 2, block, ResourceLimits());
      EXPECT_EQ(reorders(g), 0);
      const auto mul = find_ops(g, op);
      ASSERT_EQ(mul.size(), 1u);
      EXPECT_EQ(mul[0]->attrs.get_int("ng.in_block", 1), block);
      EXPECT_EQ(mul[0]->attrs.get_int("ng.out_block", 1), block);
      // The gate's pointwise convs run on plain data; the feature-map convs stay blocked.
      int plain_convs = 0, blocked_convs = 0;
      for (const Node* n : find_ops(g, "Conv")) {
        if (n->attrs.get_int("ng.in_block", 1) == 1 && n->attrs.get_int("ng.out_block", 1) == 1) ++plain_convs;
        if (n->attrs.get_int("ng.out_block", 1) > 1) ++blocked_convs;
      }
      EXPECT_EQ(blocked_convs, 1);  // f; z, a graph output, reads y blocked and writes plain
      EXPECT_EQ(plain_convs, 2);    // the gate's two

      // The plan holds at the planned size and at another one.
      for (int64_t size : {12, 19}) {
        const Tensor x = random_tensor({1, 3, size, size}, 50 + size);
        expect_close(run_graph(b.g, x), run_graph(g, x));
      }
    }
  }
}

TEST(BlockedBroadcastLayout, ChannelsNoBlockDividesStayPlain) {
  if (isa_block(hardware_isa()) <= 1) GTEST_SKIP() << "no vector block on this CPU: nothing is blocked";
  GraphBuilder b = se_graph(20, 10);  // 20 channels: neither 16 nor 8 divides them
  Graph planned = b.g;
  plan_layout(planned, 16);
  EXPECT_EQ(reorders(planned), 0);
  for (const Node& n : planned.nodes) {
    EXPECT_EQ(n.attrs.get_int("ng.in_block", 1), 1) << n.describe();
    EXPECT_EQ(n.attrs.get_int("ng.out_block", 1), 1) << n.describe();
  }
  const Tensor x = random_tensor({1, 3, 10, 10}, 60);
  expect_close(run_graph(b.g, x), run_graph(planned, x));

  // 24 channels: blocks of 8 under a maximum of 16.
  GraphBuilder b24 = se_graph(24, 10);
  Graph planned24 = b24.g;
  plan_layout(planned24, 16);
  EXPECT_EQ(reorders(planned24), 0);
  EXPECT_EQ(find_ops(planned24, "Mul").at(0)->attrs.get_int("ng.in_block", 1), 8);
  expect_close(run_graph(b24.g, x), run_graph(planned24, x));
}

// The same gate from a 7x7 AveragePool on a 7x7 map: 1x1 at the planned size only, so neither the pool's
// output nor the values computed from it are layout-free. The Mul cannot broadcast it (at another size it
// is no per-channel operand) and runs plain behind a reorder.
TEST(BlockedBroadcastLayout, NonGlobalPoolIsNotLayoutFree) {
  GraphBuilder b;
  b.input("x", {1, 3, 7, 7});
  b.conv("x", "f", 3, 32, 3);
  b.se_gate("f", "s", 32, "AveragePool");
  b.g.nodes[1].attrs.set("kernel_shape", Attribute::of_ints({7, 7}));
  ASSERT_EQ(b.g.nodes[1].op_type, "AveragePool");
  b.node("Mul", {"f", "s"}, "y");
  b.conv("y", "z", 32, 16);
  b.g.outputs.push_back(b.value("z"));
  Graph planned = b.g;
  plan_layout(planned, 16);
  const Node* mul = find_ops(planned, "Mul").at(0);
  EXPECT_EQ(mul->attrs.get_int("ng.in_block", 1), 1);
  EXPECT_EQ(mul->attrs.get_int("ng.out_block", 1), 1);
  EXPECT_GE(reorders(planned), 1);  // f, blocked for the pool, is reordered for the Mul
  // The squeeze conv reads the pool's blocked output as blocked, not as if it were plain.
  const Node* squeeze = nullptr;
  for (const Node* n : find_ops(planned, "Conv"))
    if (planned.values[n->outputs[0]].name == "s_squeezed") squeeze = n;
  ASSERT_NE(squeeze, nullptr);
  EXPECT_EQ(squeeze->attrs.get_int("ng.in_block", 1), 16);
  const Tensor x = random_tensor({1, 3, 7, 7}, 70);
  expect_close(run_graph(b.g, x), run_graph(planned, x));

  // Without the Mul, at a larger size the pool's map is 3x3: a plan treating it as layout-free would
  // read blocked bytes as plain here.
  GraphBuilder p;
  p.input("x", {1, 3, 7, 7});
  p.conv("x", "f", 3, 32, 3);
  p.node("AveragePool", {"f"}, "pooled").attrs.set("kernel_shape", Attribute::of_ints({7, 7}));
  p.conv("pooled", "squeezed", 32, 16);
  p.node("Sigmoid", {"squeezed"}, "gate");
  p.conv("gate", "z", 16, 16);
  p.g.outputs.push_back(p.value("z"));
  Graph planned_pool = p.g;
  plan_layout(planned_pool, 16);
  for (int64_t size : {7, 9}) {
    const Tensor x2 = random_tensor({1, 3, size, size}, 80 + size);
    expect_close(run_graph(p.g, x2), run_graph(planned_pool, x2));
  }
}

// ---------------------------------------------------------------------------------------------------
// fuse_gate_residual

// x [1, 3, S, S] -> 3x3 Conv (32 channels) -> f; t = Mul(f, gate of f) (or Mul(gate, f));
// y = Add(f, t) (or Add(t, f)); z = Conv1x1(y).
GraphBuilder se_residual_graph(bool gate_first, bool t_first) {
  GraphBuilder b;
  b.input("x", {1, 3, 12, 12});
  b.conv("x", "f", 3, 32, 3);
  b.se_gate("f", "s", 32);
  b.node("Mul", gate_first ? std::vector<std::string>{"s", "f"} : std::vector<std::string>{"f", "s"}, "t");
  b.node("Add", t_first ? std::vector<std::string>{"t", "f"} : std::vector<std::string>{"f", "t"}, "y");
  b.conv("y", "z", 32, 16);
  b.g.outputs.push_back(b.value("z"));
  return b;
}

TEST(FuseGateResidual, TheMulTakesTheAddIn) {
  for (bool gate_first : {false, true}) {
    for (bool t_first : {false, true}) {
      SCOPED_TRACE(std::string(gate_first ? "Mul(gate, f)" : "Mul(f, gate)") + (t_first ? " Add(t, f)" : " Add(f, t)"));
      GraphBuilder b = se_residual_graph(gate_first, t_first);
      Graph g = b.g;
      optimize_graph(g, 2, isa_block(hardware_isa()), ResourceLimits());
      EXPECT_TRUE(find_ops(g, "Add").empty());
      const auto mul = find_ops(g, "Mul");
      ASSERT_EQ(mul.size(), 1u);
      EXPECT_EQ(mul[0]->attrs.get_int("ng.add_operand", -1), gate_first ? 1 : 0);
      EXPECT_EQ(g.values[mul[0]->outputs[0]].name, "y");
      EXPECT_EQ(reorders(g), 0);
      for (int64_t size : {12, 17}) {  // at the planned size and another one
        const Tensor x = random_tensor({1, 3, size, size}, 90 + size);
        expect_close(run_graph(b.g, x), run_graph(g, x));
      }
    }
  }
}

TEST(FuseGateResidual, NotWhereTheMulBroadcastsOrItsProductIsRead) {
  auto count_fused = [](Graph g) {
    const int fused = fuse_gate_residual(g);
    EXPECT_EQ(static_cast<int>(find_ops(g, "Add").size()), 1 - fused);
    return fused;
  };
  EXPECT_EQ(count_fused(se_residual_graph(false, false).g), 1);
  {  // the product is also a graph output
    GraphBuilder b = se_residual_graph(false, false);
    b.g.outputs.push_back(b.value("t"));
    EXPECT_EQ(count_fused(b.g), 0);
  }
  {  // the product has a second reader
    GraphBuilder b = se_residual_graph(false, false);
    b.node("Relu", {"t"}, "t2");
    b.g.outputs.push_back(b.value("t2"));
    EXPECT_EQ(count_fused(b.g), 0);
  }
  {  // a full-size second factor: not a per-channel gate
    GraphBuilder b;
    b.input("x", {1, 3, 8, 8});
    b.conv("x", "f", 3, 16, 3);
    b.conv("x", "h", 3, 16, 1);
    b.node("Mul", {"f", "h"}, "t");
    b.node("Add", {"f", "t"}, "z");
    b.g.outputs.push_back(b.value("z"));
    EXPECT_EQ(count_fused(b.g), 0);
  }
  {  // the Add reads another value than the Mul's x
    GraphBuilder b;
    b.input("x", {1, 3, 8, 8});
    b.conv("x", "f", 3, 32, 3);
    b.conv("x", "other", 3, 32, 1);
    b.se_gate("f", "s", 32);
    b.node("Mul", {"f", "s"}, "t");
    b.node("Add", {"other", "t"}, "z");
    b.g.outputs.push_back(b.value("z"));
    EXPECT_EQ(count_fused(b.g), 0);
  }
}

}  // namespace
}  // namespace ninegrid
