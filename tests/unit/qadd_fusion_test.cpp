// fuse_qadd_residual (graph/passes/fuse_qadd.cpp): an ng.QAdd of an ng.QConv's output moves into the conv's
// requantising epilogue, and the fused graph computes exactly the unfused graph's bytes:
//   - on a hand-built graph with residual adds of every kind a quantised model has (the conv's output as
//     QAdd's first or second operand, the conv's output parameters equal to QAdd's or not, a ReLU after the
//     addition and on the conv, a depthwise, a pointwise and a strided conv, the other operand computed after
//     the conv, two convs into one addition) and one that must stay (the conv's output read twice): fused,
//     planned for the int8 blocks (16, 8, 4) or left plain, on the reference and the fast int8 kernels, one
//     and two threads, against the unfused graph on the reference kernels;
//   - on the quantised ResNet-18 of the test-model cache (ONNX Runtime's QDQ file), the optimiser's passes
//     with and without this one give the same bytes, and its residual adds are all fused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/cpu_features.h"
#include "graph/passes/graph_edit.h"
#include "graph/passes/passes.h"
#include "import/onnx/onnx_importer.h"
#include "ir/fused_conv.h"
#include "ir/quant_attrs.h"
#include "runtime/model_impl.h"
#include "unit/qgraph_builder.h"

#ifndef NINEGRID_CACHE_DIR
#define NINEGRID_CACHE_DIR NINEGRID_SOURCE_DIR "/.cache"
#endif

namespace ninegrid {
namespace {

using test_graph::QGraph;

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

// x [1, 3, S, S] -> Quantize -> xq, then (channels in brackets):
//   a  = QConv 3x3 (24) + ReLU             b  = QConv 1x1 of a (24)            f1 = QAdd(b, a) + ReLU
//   c  = QConv 3x3 of f1 (24)              f2 = QAdd(f1, c)   (c second; c's output parameters differ from
//                                                              the addition's for it)
//   d  = depthwise QConv 3x3 of f2 (24)    f3 = QAdd(d, f2) + ReLU
//   e  = QConv 1x1 of f3 (40)              m  = QConv 3x3 of f3 (40)           mp = MaxPool 3x3 s1 of m
//   f4 = QAdd(e, mp)                       (mp is computed after e: e moves after it)
//   g  = QConv 1x1 of f4 (40) + ReLU       f5 = QAdd(g, f4)   (not fused: g is also an output's input)
//   s  = QConv 3x3 s2 of f5 (48)           t  = QConv 1x1 s2 of f5 (48)        f6 = QAdd(s, t) + ReLU (t, the
//                                                                              later conv, takes it)
//   outputs z1 = DQ(f5), z2 = DQ(g), z3 = DQ(f6)
QGraph residual_net(int64_t side, unsigned seed) {
  QGraph b(seed);
  b.input("x", {1, 3, side, side});
  b.quantize("x", "xq", 0.03f, 128);
  b.qconv("xq", "a", 3, 24, 3, 1, 1, 1, true);
  b.qconv("a", "bb", 24, 24, 1);
  b.qadd("bb", "a", "f1", {0.05f, 118}, {0.05f, 118}, {0.07f, 110}, {110, 255});
  b.qconv("f1", "c", 24, 24, 3);
  b.qadd("f1", "c", "f2", {0.07f, 110}, {0.06f, 100}, {0.09f, 131});
  b.qconv("f2", "d", 24, 24, 3, 1, 1, 24);
  b.qadd("d", "f2", "f3", {0.05f, 118}, {0.09f, 131}, {0.08f, 97}, {97, 255});
  b.qconv("f3", "e", 24, 40, 1);
  b.qconv("f3", "m", 24, 40, 3);
  Node& pool = b.node("MaxPool", {"m"}, {"mp"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({3, 3}));
  pool.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.qadd("e", "mp", "f4", {0.05f, 118}, {0.05f, 118}, {0.1f, 128});
  b.qconv("f4", "g", 40, 40, 1, 1, 0, 1, true);
  b.qadd("g", "f4", "f5", {0.05f, 118}, {0.1f, 128}, {0.12f, 120});
  b.qconv("f5", "s", 40, 48, 3, 2);
  b.qconv("f5", "t", 40, 48, 1, 2, 0);
  b.qadd("s", "t", "f6", {0.05f, 118}, {0.04f, 125}, {0.06f, 112}, {112, 240});
  b.dequantize("f5", "z1", 0.12f, 120);
  b.dequantize("g", "z2", 0.05f, 118);
  b.dequantize("f6", "z3", 0.06f, 112);
  for (const char* z : {"z1", "z2", "z3"}) b.output(z);
  // Varied requantisation of the convs: their sums land across the whole uint8 range, and f2's c writes in
  // other parameters than the addition reads it with (a QDQ pair whose two halves disagree).
  for (Node& n : b.g.nodes) {
    if (n.op_type != "ng.QConv") continue;
    QConvAttrs q = read_qconv_attrs(n.attrs);
    if (n.name == "c") q.y_scale = 0.045f, q.y_zero_point = 121;
    if (n.name == "t") q.y_scale = 0.04f, q.y_zero_point = 125;
    write_qconv_attrs(q, n.attrs);
  }
  return b;
}

Tensor uniform_input(int64_t side, unsigned seed) {
  return test_graph::uniform({1, 3, side, side}, -4.f, 4.f, seed);  // past both ends of the input's uint8 range
}

// Runs `g` as it is (opt_level 0) on the kernels of `isa`.
std::map<std::string, Tensor> run_graph(Graph g, const std::map<std::string, Tensor>& inputs, const std::string& isa,
                                        int threads = 1) {
  for (int v : g.inputs) g.values[v].shape = inputs.at(g.values[v].name).shape();
  Options o;
  o.opt_level = 0;
  o.threads = threads;
  o.isa = isa;
  auto m = std::make_shared<Model>(std::make_unique<ModelImpl>(std::move(g), o, "onnx"));
  return m->create_session()->run(inputs);
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

// The ISAs this CPU runs: the reference and the fast int8 kernels' (AVX2, AVX-512 with VNNI; on AArch64
// neon and dotprod).
std::vector<std::string> isas() {
  std::vector<std::string> v = {"ref"};
#if defined(__x86_64__)
  if (cpu_features().avx2 && cpu_features().fma) v.push_back("avx2");
  if (cpu_features().avx512f && cpu_features().avx512bw) v.push_back("avx512");
#elif defined(__aarch64__)
  if (cpu_features().asimd) v.push_back("neon");
  if (cpu_features().asimddp) v.push_back("dotprod");
#endif
  return v;
}

TEST(QAddFusion, ResidualAddsMoveIntoTheConvs) {
  Graph g = residual_net(12, 1).g;
  EXPECT_EQ(fuse_qadd_residual(g), 5);
  EXPECT_EQ(count_ops(g, "ng.QAdd"), 1);  // f5: g's output is read twice
  struct Expect {
    const char* output;
    const char* conv;
    const char* residual;
    int conv_input;
  };
  for (const Expect& e : {Expect{"f1", "bb", "a", 0}, Expect{"f2", "c", "f1", 1}, Expect{"f3", "d", "f2", 0},
                          Expect{"f4", "e", "mp", 0}, Expect{"f6", "t", "s", 1}}) {
    const Node* n = node_writing(g, e.output);
    ASSERT_NE(n, nullptr) << e.output;
    EXPECT_EQ(n->op_type, "ng.QConv") << e.output;
    EXPECT_EQ(n->name, e.conv) << e.output;
    ASSERT_TRUE(fused::has_residual(*n)) << e.output;
    EXPECT_EQ(g.values[n->inputs[fused::kResidualInput]].name, e.residual) << e.output;
    const QConvAttrs q = read_qconv_attrs(n->attrs);
    EXPECT_TRUE(q.has_add) << e.output;
    EXPECT_EQ(q.add_conv_input, e.conv_input) << e.output;
  }
  // The conv that read the MaxPool's output later moved after it.
  const std::vector<int> prod = g.producers();
  const Node* e = node_writing(g, "f4");
  EXPECT_LT(prod[g.find_value("mp")], static_cast<int>(e - g.nodes.data()));
  // A second run finds nothing more to fuse.
  EXPECT_EQ(fuse_qadd_residual(g), 0);
}

TEST(QAddFusion, FusedGraphGivesTheUnfusedBytes) {
  for (unsigned seed : {1u, 2u}) {
    const QGraph b = residual_net(14, seed);
    const std::map<std::string, Tensor> x = {{"x", uniform_input(14, seed)}};
    const auto want = run_graph(b.g, x, "ref");
    Graph fused = b.g;
    ASSERT_EQ(fuse_qadd_residual(fused), 5);
    for (int max_block : {1, 16, 8, 4}) {
      Graph g = fused;
      if (max_block > 1) plan_layout(g, max_block);
      for (const std::string& isa : isas()) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", max block " + std::to_string(max_block) + ", isa " + isa);
        expect_same_bytes(want, run_graph(g, x, isa));
        if (isa != "ref") expect_same_bytes(want, run_graph(g, x, isa, 2));
      }
    }
  }
}

// The optimiser's passes up to the layout plan (graph/passes/pipeline.cpp), with or without the fusion.
Graph optimised(Graph g, bool fuse_qadd) {
  fuse_qdq(g);
  fold_constants(g);
  remove_identity(g);
  fuse_residual_add(g);
  if (fuse_qadd) fuse_qadd_residual(g);
  fuse_activation(g);
  remove_dead_nodes(g);
  plan_layout(g, 16);
  return g;
}

TEST(QAddFusion, QuantizedResNet18GivesTheUnfusedBytes) {
  const char* env = std::getenv("NINEGRID_CACHE");
  const std::string path =
      (env && *env ? std::string(env) : std::string(NINEGRID_CACHE_DIR)) + "/models/quantized/resnet18_qdq.onnx";
  std::ifstream in(path, std::ios::binary);
  if (!in) GTEST_SKIP() << "missing " << path << ": run scripts/make_test_models.sh";
  std::stringstream bytes;
  bytes << in.rdbuf();
  Graph model = import_onnx(bytes.str());
  ASSERT_EQ(model.inputs.size(), 1u);
  model.values[model.inputs[0]].shape = {1, 3, 64, 64};
  model.values[model.inputs[0]].shape_known = true;
  const Graph unfused = optimised(model, false), fused = optimised(model, true);
  const int adds = count_ops(unfused, "ng.QAdd");
  EXPECT_EQ(adds, 8);  // ResNet-18's residual blocks
  EXPECT_EQ(count_ops(fused, "ng.QAdd"), 0);
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, 64, 64});
  std::mt19937 rng(18);
  std::normal_distribution<float> n(0.f, 1.f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = n(rng);
  const std::map<std::string, Tensor> inputs = {{model.values[model.inputs[0]].name, x}};
  const std::string best = isas().back();
  expect_same_bytes(run_graph(unfused, inputs, best), run_graph(fused, inputs, best));
}

}  // namespace
}  // namespace ninegrid
