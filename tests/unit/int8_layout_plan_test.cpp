// The layout pass on quantised graphs (plan_layout.cpp): a hand-built graph of the fused int8 ops as
// graph/passes/fuse_qdq.cpp leaves them (ng.QConv, depthwise included, MaxPool and Pad on uint8, ng.QAdd,
// ng.QConcat, ng.QAveragePool, ng.QGlobalAveragePool, and a float island between DequantizeLinear and
// QuantizeLinear as RetinaFace's SSH modules have), planned for the int8 blocks of AVX-512 (16), AVX2 (8)
// and NEON (4):
//   - every ng.QConv writes the block the int8 rule gives its channel count (the largest of the ISA's
//     block, 8 and 4 dividing it), a depthwise one reads the block it writes, a conv feeding only a
//     DequantizeLinear before a graph output writes plain NCHW, and no ng.Reorder is needed anywhere;
//   - the planned graph computes the same bytes as the unplanned one (integer arithmetic, same in every
//     layout), at the planned input size and at another one;
//   - a per-channel DequantizeLinear is not element-wise in the blocked layout: it gets a (uint8) reorder,
//     and the result is still the same.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "graph/passes/passes.h"
#include "ir/quant_attrs.h"
#include "runtime/model_impl.h"
#include "runtime/prepared_kernels.h"
#include "unit/qgraph_builder.h"

namespace ninegrid {
namespace {

using test_graph::QGraph;

// x [1, 3, S, S] float -> Quantize -> xq, then (channels in brackets):
//   a   = QConv 3x3 s2 (24) + ReLU         b   = depthwise QConv 3x3 (24)      c = QConv 1x1 (48)
//   d   = MaxPool 2x2 s2 of c (uint8)      dp  = Pad d by 1 (uint8)            e = QConv 3x3 pad 0 of dp (48)
//   f   = QAdd(d, e)                       e2  = QConv 3x3 of f (48)           h = QConcat(f, e2) (96)
//   i   = QAveragePool 2x2 s1 of h         j   = QGlobalAveragePool of i       z1 = Dequantize(Flatten(j))
//   m   = QConv 1x1 of h (8) -> z2 = Dequantize(m)               (a head: its conv should write plain)
//   g   = QConv 1x1 of f (20) -> g2 = QConv 3x3 of g (20) -> z3 = Dequantize(g2)
//   hf  = Quantize(Relu(Concat(Dequantize(f), Dequantize(e2))))  (a float island) -> n = QConv 1x1 (16)
//         -> z4 = Dequantize(n)
//   r   = Resize nearest 2x of f (uint8) -> rq = QRequantize(r) -> o = QConv 1x1 (16) -> z5 = Dequantize(o)
//         (the FPN's upsampling as graph/passes/fuse_qdq_moves.cpp leaves it)
QGraph int8_net(int64_t side) {
  QGraph b;
  b.input("x", {1, 3, side, side});
  b.quantize("x", "xq", 0.03f, 128);
  b.qconv("xq", "a", 3, 24, 3, 2, 1, 1, true);
  b.qconv("a", "b", 24, 24, 3, 1, 1, 24, true);
  b.qconv("b", "c", 24, 48, 1);
  Node& pool = b.node("MaxPool", {"c"}, {"d"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({2, 2}));
  pool.attrs.set("strides", Attribute::of_ints({2, 2}));
  b.add_const<int64_t>("pads", DataType::Int64, {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  b.node("Pad", {"d", "pads"}, {"dp"}).attrs.set("mode", Attribute::of_string("edge"));
  b.qconv("dp", "e", 48, 48, 3, 1, 0);
  Node& add = b.node("ng.QAdd", {"d", "e"}, {"f"});
  write_tensor_quant({0.05f, 118}, "a", add.attrs);
  write_tensor_quant({0.05f, 118}, "b", add.attrs);
  write_tensor_quant({0.07f, 110}, "y", add.attrs);
  b.qconv("f", "e2", 48, 48, 3);
  Node& cat = b.node("ng.QConcat", {"f", "e2"}, {"h"});
  cat.attrs.set("axis", Attribute::of_int(1));
  cat.attrs.set("x_scales", Attribute::of_floats({0.07f, 0.05f}));
  cat.attrs.set("x_zero_points", Attribute::of_ints({110, 118}));
  write_tensor_quant({0.06f, 115}, "y", cat.attrs);
  Node& avg = b.node("ng.QAveragePool", {"h"}, {"i"});
  avg.attrs.set("kernel_shape", Attribute::of_ints({2, 2}));
  write_tensor_quant({0.06f, 115}, "x", avg.attrs);
  write_tensor_quant({0.04f, 120}, "y", avg.attrs);
  Node& gap = b.node("ng.QGlobalAveragePool", {"i"}, {"j"});
  write_tensor_quant({0.04f, 120}, "x", gap.attrs);
  write_tensor_quant({0.02f, 125}, "y", gap.attrs);
  b.node("Flatten", {"j"}, {"jf"});
  b.dequantize("jf", "z1", 0.02f, 125);
  b.qconv("h", "m", 96, 8, 1);
  b.dequantize("m", "z2", 0.05f, 118);
  b.qconv("f", "g", 48, 20, 1);
  b.qconv("g", "g2", 20, 20, 3);
  b.dequantize("g2", "z3", 0.05f, 118);
  b.dequantize("f", "ff", 0.07f, 110);
  b.dequantize("e2", "ef", 0.05f, 118);
  b.node("Concat", {"ff", "ef"}, {"cf"}).attrs.set("axis", Attribute::of_int(1));
  b.node("Relu", {"cf"}, {"rf"});
  b.quantize("rf", "hf", 0.04f, 0);
  b.qconv("hf", "n", 96, 16, 1);
  b.dequantize("n", "z4", 0.05f, 118);
  b.add_const<float>("up", DataType::Float32, {4}, {1.f, 1.f, 2.f, 2.f});
  Node& resize = b.node("Resize", {"f", "", "up"}, {"r"});
  resize.attrs.set("coordinate_transformation_mode", Attribute::of_string("asymmetric"));
  resize.attrs.set("nearest_mode", Attribute::of_string("floor"));
  Node& requantize = b.node("ng.QRequantize", {"r"}, {"rq"});
  write_tensor_quant({0.07f, 110}, "x", requantize.attrs);
  write_tensor_quant({0.05f, 118}, "y", requantize.attrs);
  b.qconv("rq", "o", 48, 16, 1);
  b.dequantize("o", "z5", 0.05f, 118);
  for (const char* z : {"z1", "z2", "z3", "z4", "z5"}) b.output(z);
  return b;
}

Tensor uniform_input(int64_t side, unsigned seed) {
  return test_graph::uniform({1, 3, side, side}, -4.f, 4.f, seed);  // past both ends of the input's uint8 range
}

// Runs `g` as it is (opt_level 0: no pass changes the plan) on x, resized to x's shape.
std::map<std::string, Tensor> run_graph(Graph g, const Tensor& x, int threads = 1) {
  for (int v : g.inputs) g.values[v].shape = x.shape();
  Options o;
  o.opt_level = 0;
  o.threads = threads;
  auto m = std::make_shared<Model>(std::make_unique<ModelImpl>(std::move(g), o, "onnx"));
  return m->create_session()->run({{"x", x}});
}

void expect_same_bytes(const std::map<std::string, Tensor>& want, const std::map<std::string, Tensor>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, w] : want) {
    const Tensor& t = got.at(name);
    ASSERT_EQ(t.shape(), w.shape()) << name;
    ASSERT_EQ(t.dtype(), w.dtype()) << name;
    EXPECT_EQ(std::memcmp(t.data(), w.data(), w.nbytes()), 0) << name;
  }
}

const Node* node_writing(const Graph& g, const std::string& value) {
  for (const Node& n : g.nodes)
    for (int o : n.outputs)
      if (o >= 0 && g.values[o].name == value) return &n;
  return nullptr;
}

int count_ops(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op_type == op;
  return c;
}

int64_t block_attr(const Node& n, const char* attr) { return n.attrs.get_int(attr, 1); }

TEST(Int8LayoutPlan, QConvsWriteTheInt8BlockAndNothingIsReordered) {
  const QGraph b = int8_net(20);
  const Tensor x = uniform_input(20, 1);
  const auto want = run_graph(b.g, x);
  // The expected blocks, by channel count, for each maximum block (from the rule, not from the pass):
  // 24 channels take 8 (4 under NEON's 4), 48 take 16 under AVX-512, 20 only 4.
  struct Expect {
    int max_block;
    int64_t b24, b48, b20;
  };
  for (const Expect& ex : {Expect{16, 8, 16, 4}, Expect{8, 8, 8, 4}, Expect{4, 4, 4, 4}}) {
    SCOPED_TRACE("max block " + std::to_string(ex.max_block));
    Graph g = b.g;
    EXPECT_EQ(plan_layout(g, ex.max_block), 0) << "layout transforms";
    EXPECT_EQ(count_ops(g, "ng.Reorder"), 0);
    const std::map<std::string, std::pair<int64_t, int64_t>> convs = {
        {"a", {1, ex.b24}},       // reads the plain quantised input
        {"b", {ex.b24, ex.b24}},  // depthwise: reads its output's block
        {"c", {ex.b24, ex.b48}}, {"e", {ex.b48, ex.b48}}, {"e2", {ex.b48, ex.b48}},
        {"m", {ex.b48, 1}},       // a head: only a DequantizeLinear before a graph output reads it
        {"g", {ex.b48, ex.b20}},  {"g2", {ex.b20, 1}},
        {"n", {ex.b48, 1}},       {"o", {ex.b48, 1}}};
    for (const auto& [name, blocks] : convs) {
      const Node* n = node_writing(g, name);
      ASSERT_NE(n, nullptr) << name;
      EXPECT_EQ(block_attr(*n, "ng.in_block"), blocks.first) << name;
      EXPECT_EQ(block_attr(*n, "ng.out_block"), blocks.second) << name;
    }
    // The ops between them keep the block: pools, Pad and Resize read and write it, the element-wise ops
    // (ng.QRequantize among them) and the float island (DequantizeLinear, Concat, Relu, QuantizeLinear)
    // carry it.
    for (const char* v : {"d", "dp", "f", "h", "i", "ff", "cf", "rf", "hf", "r", "rq"}) {
      const Node* n = node_writing(g, v);
      ASSERT_NE(n, nullptr) << v;
      EXPECT_EQ(block_attr(*n, "ng.out_block"), ex.b48) << v << " (" << n->op_type << ")";
    }
    // The global pool's output is layout-free: Flatten reads it without a reorder.
    EXPECT_EQ(block_attr(*node_writing(g, "j"), "ng.in_block"), ex.b48);
    SCOPED_TRACE("planned graph");
    expect_same_bytes(want, run_graph(g, x));
    expect_same_bytes(want, run_graph(g, x, 2));
    // The plan holds at another input size (the channel counts, and so the blocks, do not change).
    const Tensor x2 = uniform_input(28, 2);
    expect_same_bytes(run_graph(b.g, x2), run_graph(g, x2));
  }
}

TEST(Int8LayoutPlan, ChannelsNoInt8BlockDividesStayPlain) {
  QGraph b;
  b.input("x", {1, 3, 9, 9});
  b.quantize("x", "xq", 0.03f, 128);
  b.qconv("xq", "a", 3, 10, 3);    // 10 channels: neither 16, 8 nor 4 divides them
  b.qconv("a", "c", 10, 10, 3, 1, 1, 10);  // depthwise
  b.qconv("c", "d", 10, 16, 1);
  b.qconv("d", "e", 16, 16, 3);
  b.dequantize("e", "z", 0.05f, 118);
  b.output("z");
  Graph g = b.g;
  EXPECT_EQ(plan_layout(g, 16), 0);
  for (const char* v : {"a", "c"}) {
    EXPECT_EQ(block_attr(*node_writing(g, v), "ng.in_block"), 1) << v;
    EXPECT_EQ(block_attr(*node_writing(g, v), "ng.out_block"), 1) << v;
  }
  EXPECT_EQ(block_attr(*node_writing(g, "d"), "ng.in_block"), 1);
  EXPECT_EQ(block_attr(*node_writing(g, "d"), "ng.out_block"), 16);
  EXPECT_EQ(block_attr(*node_writing(g, "e"), "ng.in_block"), 16);
  const Tensor x = uniform_input(9, 3);
  expect_same_bytes(run_graph(b.g, x), run_graph(g, x));
}

TEST(Int8LayoutPlan, PerChannelDequantizeGetsAReorder) {
  QGraph b;
  b.input("x", {1, 3, 10, 10});
  b.quantize("x", "xq", 0.03f, 128);
  b.qconv("xq", "a", 3, 16, 3);
  b.qconv("a", "c", 16, 16, 3);
  // One scale per channel: element (n, c, h, w) needs its channel's scale, which the plain loop finds only
  // in plain NCHW.
  std::vector<float> scales;
  for (int i = 0; i < 16; ++i) scales.push_back(0.01f * static_cast<float>(i + 1));
  b.add_const<float>("cs", DataType::Float32, {16}, scales);
  b.add_const<uint8_t>("cz", DataType::UInt8, {16}, std::vector<uint8_t>(16, 118));
  b.node("DequantizeLinear", {"a", "cs", "cz"}, {"af"}).attrs.set("axis", Attribute::of_int(1));
  b.dequantize("c", "cf", 0.05f, 118);
  b.output("af");
  b.output("cf");
  Graph g = b.g;
  EXPECT_EQ(plan_layout(g, 16), 1);
  const Node* dq = node_writing(g, "af");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(block_attr(*dq, "ng.out_block"), 1);
  const Node* reorder = node_writing(g, g.values[dq->inputs[0]].name);
  ASSERT_NE(reorder, nullptr);
  EXPECT_EQ(reorder->op_type, "ng.Reorder");
  EXPECT_EQ(g.values[dq->inputs[0]].dtype, DataType::UInt8);
  const Tensor x = uniform_input(10, 4);
  expect_same_bytes(run_graph(b.g, x), run_graph(g, x));
}


// A fixed-shape int8 model packs its QConv kernels once, at load: its sessions adopt them (no packing of
// their own, Op::prepared_state) and compute the bytes the unplanned graph computes.
TEST(Int8SharedKernels, SessionsOfAFixedShapeModelAdoptTheKernelsPackedAtLoad) {
  const Tensor x = uniform_input(40, 11);
  Graph g = int8_net(40).g;
  const auto want = run_graph(g, x);
  Options o;
  o.threads = 1;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(std::move(g), o, "onnx"));
  const PreparedKernels& kernels = InternalAccess::impl(*model).prepared();
  const int64_t packed = kernels.added();
  if (packed == 0) GTEST_SKIP() << "no fast int8 kernel on this CPU: nothing to share";
  EXPECT_GE(packed, 9) << "the net's nine QConvs";
  auto first = model->create_session();
  auto second = model->create_session();
  EXPECT_EQ(kernels.added(), packed) << "a session packed int8 weights of its own";
  EXPECT_EQ(kernels.reused(), 2 * packed);
  expect_same_bytes(want, first->run({{"x", x}}));
  expect_same_bytes(want, second->run({{"x", x}}));
}

}  // namespace
}  // namespace ninegrid
