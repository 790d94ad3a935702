// QDQ models beyond Conv and Add: Gemm/MatMul islands become ng.QGemm, Concat of differently scaled
// inputs ng.QConcat, AveragePool and GlobalAveragePool ng.Q*AveragePool. Each fused graph computes what
// the unfused one (QuantizeLinear and DequantizeLinear around the float op) computes to within one
// quantisation step, most values exactly (the float op rounds its sum differently from the integer one);
// the integer arithmetic itself is checked on hand-computed ties; bad parameters are errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph_builder.h"
#include "kernels/quantized_ops.h"
#include "kernels/ref/qlookup_ref.h"
#include "kernels/ref/qgemm_ref.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;
using test_graph::add_const;
using test_graph::model_of;
using test_graph::ops_of;
using test_graph::uniform;

// in (float) -> QuantizeLinear -> DequantizeLinear -> out, with scale s and zero point zp (int8 when
// `signed_zp`, ONNX Runtime's default, else uint8).
void qdq(GraphBuilder& b, const std::string& in, const std::string& out, float s, int zp, bool signed_zp = false) {
  add_const<float>(b, out + "_s", DataType::Float32, {}, {s});
  if (signed_zp) add_const<int8_t>(b, out + "_zp", DataType::Int8, {}, {static_cast<int8_t>(zp)});
  else add_const<uint8_t>(b, out + "_zp", DataType::UInt8, {}, {static_cast<uint8_t>(zp)});
  b.node("QuantizeLinear", {in, out + "_s", out + "_zp"}, {out + "_q"});
  b.node("DequantizeLinear", {out + "_q", out + "_s", out + "_zp"}, {out});
}

// The fused and unfused graphs on x agree within `step` everywhere and exactly on most values.
void expect_within_one_step(const Graph& g, const Tensor& x, float step, double exact_share = 0.9) {
  const Tensor want = model_of(g, 0)->create_session()->run({{"x", x}}).at("y");
  const Tensor got = model_of(g, 2)->create_session()->run({{"x", x}}).at("y");
  ASSERT_EQ(want.shape(), got.shape());
  int64_t exact = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = want.data_as<float>()[i], b = got.data_as<float>()[i];
    ASSERT_LE(std::fabs(a - b), step * 1.0001f) << "element " << i << ": " << a << " vs " << b;
    exact += a == b;
  }
  EXPECT_GE(exact, static_cast<int64_t>(exact_share * static_cast<double>(want.numel())))
      << exact << " of " << want.numel() << " exact";
}

// ---- Gemm / MatMul ----

struct GemmCase {
  const char* name;
  const char* op = "Gemm";  // or "MatMul"
  bool trans_b = true;
  bool per_channel = true;
  bool bias = true;
  bool signed_activations = true;
  const char* activation = "";
  Shape x_shape = {3, 40};
  int64_t n = 13;
};
void PrintTo(const GemmCase& c, std::ostream* os) { *os << c.name; }

GraphBuilder qdq_gemm(const GemmCase& c) {
  GraphBuilder b(9);
  b.input("x", c.x_shape);
  const int64_t k = c.x_shape.back(), n = c.n;
  const float sx = 0.02f, sy = 0.09f;
  qdq(b, "x", "xf", sx, c.signed_activations ? 3 : 131, c.signed_activations);
  std::uniform_int_distribution<int> wd(-127, 127);
  std::vector<int8_t> wq(static_cast<size_t>(n * k));
  for (auto& v : wq) v = static_cast<int8_t>(wd(b.rng));
  add_const<int8_t>(b, "wq", DataType::Int8, c.trans_b ? Shape{n, k} : Shape{k, n}, wq);
  std::vector<float> sw;
  std::uniform_real_distribution<float> sd(0.001f, 0.004f);
  for (int64_t i = 0; i < (c.per_channel ? n : 1); ++i) sw.push_back(sd(b.rng));
  add_const<float>(b, "sw", DataType::Float32, c.per_channel ? Shape{n} : Shape{}, sw);
  b.node("DequantizeLinear", {"wq", "sw"}, {"wf"}).attrs.set("axis", Attribute::of_int(c.trans_b ? 0 : 1));
  std::vector<std::string> ins = {"xf", "wf"};
  if (c.bias) {
    std::vector<int32_t> bq;
    std::vector<float> sb;
    std::uniform_int_distribution<int> bd(-3000, 3000);
    for (int64_t i = 0; i < n; ++i) bq.push_back(bd(b.rng)), sb.push_back(sx * sw[c.per_channel ? i : 0]);
    add_const<int32_t>(b, "bq", DataType::Int32, {n}, bq);
    add_const<float>(b, "sb", DataType::Float32, {n}, sb);
    b.node("DequantizeLinear", {"bq", "sb"}, {"bf"}).attrs.set("axis", Attribute::of_int(0));
    ins.push_back("bf");
  }
  Node& op = b.node(c.op, ins, {"mm"});
  op.name = "the_gemm";
  if (std::string(c.op) == "Gemm") op.attrs.set("transB", Attribute::of_int(c.trans_b ? 1 : 0));
  std::string y = "mm";
  if (std::string(c.activation) == "Relu") b.node("Relu", {"mm"}, {"act"}), y = "act";
  qdq(b, y, "y", sy, c.signed_activations ? -20 : 108, c.signed_activations);
  b.output("y");
  return b;
}

class QdqGemm : public testing::TestWithParam<GemmCase> {};

TEST_P(QdqGemm, FusesAndMatchesTheUnfusedGraphWithinOneStep) {
  const GemmCase& c = GetParam();
  const GraphBuilder b = qdq_gemm(c);
  auto fused = model_of(b.g, 2);
  auto ops = ops_of(*fused);
  EXPECT_EQ(ops["ng.QGemm"], 1);
  EXPECT_EQ(ops["Gemm"] + ops["MatMul"], 0);
  EXPECT_EQ(ops["QuantizeLinear"], 1) << "only the input's";
  EXPECT_EQ(ops["DequantizeLinear"], 1) << "only the output's";
  // Reaches both ends of the activation range (saturation).
  expect_within_one_step(b.g, uniform(c.x_shape, -2.7f, 2.7f, 4), 0.09f);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, QdqGemm,
    testing::Values(GemmCase{"gemm_transposed_weights"},
                    GemmCase{"gemm_plain_weights_relu", "Gemm", false, true, true, false, "Relu"},
                    GemmCase{"gemm_per_tensor_no_bias", "Gemm", true, false, false},
                    GemmCase{"matmul_batched", "MatMul", false, true, false, true, "", {2, 5, 24}, 9},
                    GemmCase{"matmul_uint8_relu", "MatMul", false, false, false, false, "Relu", {7, 33}, 17}),
    [](const testing::TestParamInfo<GemmCase>& i) { return std::string(i.param.name); });

// ng.QGemm on the fast int8 kernels (FastQConv2d's pointwise kernels, VNNI or AVX2: the rows as images of one
// pixel) gives the reference kernel's bytes: the cases above and random shapes (odd K and N, K past a vector,
// several rows), each at the best ISA and capped at AVX2.
Tensor run_at_isa(const Graph& g, const Tensor& x, const std::string& isa) {
  Options o;
  o.threads = 1;
  o.isa = isa;
  return std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"))->create_session()->run({{"x", x}}).at("y");
}

TEST(QdqGemm, FastKernelsGiveTheReferenceBytes) {
  std::vector<GemmCase> cases = {GemmCase{"gemm_transposed_weights"},
                                 GemmCase{"gemm_plain_weights_relu", "Gemm", false, true, true, false, "Relu"},
                                 GemmCase{"matmul_batched", "MatMul", false, true, false, true, "", {2, 5, 24}, 9}};
  std::mt19937 rng(5);
  auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  for (int i = 0; i < 12; ++i) {
    GemmCase c{"random"};
    c.x_shape = {pick({1, 2, 3, 7}), pick({1, 3, 4, 16, 40, 67, 256, 2048})};
    c.n = pick({1, 5, 8, 13, 16, 40, 1000});
    c.per_channel = i % 2 == 0;
    c.activation = i % 3 == 0 ? "Relu" : "";
    cases.push_back(c);
  }
  for (const GemmCase& c : cases) {
    const GraphBuilder b = qdq_gemm(c);
    const Tensor x = uniform(c.x_shape, -2.7f, 2.7f, 4);
    const Tensor want = run_at_isa(b.g, x, "ref");
    // The build's own best ISA, and also the AVX2 kernels on x86, the neon ones on AArch64 (Options::isa
    // refuses another architecture's ISA).
#if defined(__x86_64__)
    const char* const isas[] = {"", "avx2"};
#elif defined(__aarch64__)
    const char* const isas[] = {"", "neon"};
#else
    const char* const isas[] = {""};
#endif
    for (const char* isa : isas) {
      const Tensor got = run_at_isa(b.g, x, isa);
      ASSERT_EQ(want.shape(), got.shape());
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.nbytes()), 0)
          << c.name << " x " << shape_str(c.x_shape) << " n " << c.n << " isa '" << isa << "'";
    }
  }
}

TEST(QdqGemm, GemmWithAlphaStaysFloat) {
  GraphBuilder b = qdq_gemm(GemmCase{"alpha"});
  for (Node& n : b.g.nodes)
    if (n.op_type == "Gemm") n.attrs.set("alpha", Attribute::of_float(0.5f));
  auto ops = ops_of(*model_of(b.g, 2));
  EXPECT_EQ(ops["ng.QGemm"], 0);
  expect_within_one_step(b.g, uniform({3, 40}, -2.f, 2.f, 4), 0.f, 1.0);  // the same float graph both ways
}

TEST(QgemmRef, SumsAndRoundsHalfToEven) {
  // x - zp = {1, 2}, {3, -1}; w rows {2, 1} and {-1, 3}: sums 4, 5 / 5, -6.
  const uint8_t x[] = {11, 12, 13, 9};
  const int8_t w[] = {2, 1, -1, 3};
  const int32_t bias[] = {1, 0};
  const float mult[] = {0.5f, 0.5f};
  Requantization q;
  q.bias = bias, q.multiplier = mult, q.out_zero_point = 100;
  uint8_t y[4];
  qgemm_ref(2, 2, 2, x, 10, w, q, y);
  // (4 + 1) * 0.5 = 2.5 -> 2; 5 * 0.5 = 2.5 -> 2; (5 + 1) * 0.5 = 3; -6 * 0.5 = -3.
  EXPECT_EQ(y[0], 102);
  EXPECT_EQ(y[1], 102);
  EXPECT_EQ(y[2], 103);
  EXPECT_EQ(y[3], 97);
}

TEST(QuantizedOps, RequantisingTableAndAverageRoundHalfToEvenAndSaturate) {
  // x: scale 0.25, zero point 10; y: scale 0.5, zero point 20.
  const QuantizedTable r = requantize_table(0.25f, 10, 0.5f, 20, 0, 255);
  EXPECT_EQ(r[15], 22);  // 1.25 / 0.5 = 2.5 -> 2
  EXPECT_EQ(r[17], 24);  // 3.5 -> 4
  EXPECT_EQ(r[0], 15);   // -2.5 / 0.5 = -5
  EXPECT_FALSE(table_is_clamp(r, 0, 255));
  const QuantizedTable relu = requantize_table(0.25f, 10, 0.5f, 20, 20, 255);  // a ReLU: qmin = y zero point
  EXPECT_EQ(relu[0], 20);
  EXPECT_EQ(relu[17], 24);
  const QuantizedTable up = requantize_table(1.f, 0, 0.5f, 200, 0, 255);
  EXPECT_EQ(up[100], 255);  // 400 saturates
  EXPECT_EQ(up[27], 254);
  EXPECT_TRUE(table_is_clamp(requantize_table(0.07f, 7, 0.07f, 7, 0, 255), 0, 255));
  EXPECT_TRUE(table_is_clamp(requantize_table(0.07f, 7, 0.07f, 7, 7, 200), 7, 200));
  EXPECT_FALSE(table_is_clamp(requantize_table(0.07f, 7, 0.07f, 8, 0, 255), 0, 255));
  uint8_t x[] = {0, 15, 17, 255}, y[4];
  qlookup_ref(r, x, y, 4);
  EXPECT_EQ(y[1], 22);
  EXPECT_EQ(y[3], 142);  // 61.25 / 0.5 = 122.5 -> 122
  // Every length around the kernel's 8-byte words, at odd offsets, in place too.
  std::mt19937 rng(3);
  std::vector<uint8_t> in(40), out(40);
  for (int64_t n = 0; n <= 33; ++n)
    for (int64_t at : {0, 3}) {
      for (auto& v : in) v = static_cast<uint8_t>(rng());
      std::fill(out.begin(), out.end(), 7);
      qlookup_ref(r, in.data() + at, out.data() + at, n);
      for (int64_t i = 0; i < 40; ++i)
        ASSERT_EQ(out[i], i >= at && i < at + n ? r[in[i]] : 7) << "n " << n << " at " << at << " i " << i;
      std::vector<uint8_t> same = in;
      qlookup_ref(r, same.data() + at, same.data() + at, n);
      for (int64_t i = 0; i < 40; ++i) ASSERT_EQ(same[i], i >= at && i < at + n ? r[in[i]] : in[i]) << "in place";
    }
  QuantizedAverage a{0, 50, 1.f};
  EXPECT_EQ(a(21, 2), 60);   // 10.5 -> 10
  EXPECT_EQ(a(23, 2), 62);   // 11.5 -> 12
  EXPECT_EQ(a(-60, 1), 0);   // saturates at 0
  QuantizedAverage scaled{0, 0, 3.f};
  EXPECT_EQ(scaled(9, 9), 3);
}

// ---- Concat ----

GraphBuilder qdq_concat(bool signed_zp) {
  GraphBuilder b(3);
  b.input("x", {2, 6, 5, 5});
  // Three branches with their own scales: one already in the output's, one finer, one coarser (the
  // coarser one's range exceeds the output's, which saturates).
  qdq(b, "x", "a", 0.03f, signed_zp ? -5 : 120, signed_zp);
  b.node("Relu", {"x"}, {"r"});
  qdq(b, "r", "c", 0.01f, signed_zp ? -128 : 0, signed_zp);
  add_const<float>(b, "two", DataType::Float32, {}, {2.f});
  b.node("Mul", {"x", "two"}, {"m"});
  qdq(b, "m", "d", 0.05f, signed_zp ? 0 : 128, signed_zp);
  Node& cat = b.node("Concat", {"a", "c", "d"}, {"cat"});
  cat.name = "the_concat";
  cat.attrs.set("axis", Attribute::of_int(1));
  qdq(b, "cat", "y", 0.03f, signed_zp ? -5 : 120, signed_zp);
  b.output("y");
  return b;
}

TEST(QdqConcat, DifferentScalesAreRequantisedIntoTheOutputs) {
  for (bool signed_zp : {false, true}) {
    const GraphBuilder b = qdq_concat(signed_zp);
    auto ops = ops_of(*model_of(b.g, 2));
    EXPECT_EQ(ops["ng.QConcat"], 1) << signed_zp;
    EXPECT_EQ(ops["Concat"], 0) << signed_zp;
    EXPECT_EQ(ops["DequantizeLinear"], 1) << "only the output's";
    // Requantising a quantised value is one rounding, as QuantizeLinear of its dequantised float is, so
    // both graphs agree exactly.
    expect_within_one_step(b.g, uniform({2, 6, 5, 5}, -3.f, 3.f, 8), 0.f, 1.0);
  }
}

// ---- AveragePool / GlobalAveragePool ----

struct PoolCase {
  const char* name;
  bool global = false;
  int64_t kernel = 3, stride = 2, pad = 1;
  bool count_include_pad = false, ceil_mode = false;
};
void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

GraphBuilder qdq_pool(const PoolCase& c) {
  GraphBuilder b(5);
  b.input("x", {2, 5, 9, 8});
  qdq(b, "x", "xf", 0.02f, -3, /*signed_zp=*/true);
  Node& pool = b.node(c.global ? "GlobalAveragePool" : "AveragePool", {"xf"}, {"p"});
  pool.name = "the_pool";
  if (!c.global) {
    pool.attrs.set("kernel_shape", Attribute::of_ints({c.kernel, c.kernel}));
    pool.attrs.set("strides", Attribute::of_ints({c.stride, c.stride}));
    pool.attrs.set("pads", Attribute::of_ints({c.pad, c.pad, c.pad, c.pad}));
    pool.attrs.set("count_include_pad", Attribute::of_int(c.count_include_pad));
    pool.attrs.set("ceil_mode", Attribute::of_int(c.ceil_mode));
  }
  qdq(b, "p", "y", 0.013f, 7, /*signed_zp=*/true);
  b.output("y");
  return b;
}

class QdqPool : public testing::TestWithParam<PoolCase> {};

TEST_P(QdqPool, FusesAndMatchesTheUnfusedGraphWithinOneStep) {
  const PoolCase& c = GetParam();
  const GraphBuilder b = qdq_pool(c);
  auto ops = ops_of(*model_of(b.g, 2));
  EXPECT_EQ(ops[c.global ? "ng.QGlobalAveragePool" : "ng.QAveragePool"], 1);
  EXPECT_EQ(ops["AveragePool"] + ops["GlobalAveragePool"], 0);
  EXPECT_EQ(ops["DequantizeLinear"], 1);
  expect_within_one_step(b.g, uniform({2, 5, 9, 8}, -2.f, 2.f, 6), 0.013f);
}

INSTANTIATE_TEST_SUITE_P(Cases, QdqPool,
                         testing::Values(PoolCase{"global", true}, PoolCase{"k3s2p1"},
                                         PoolCase{"k3s2p1_count_pad", false, 3, 2, 1, true},
                                         PoolCase{"k2s2_ceil", false, 2, 2, 0, false, true},
                                         PoolCase{"k3s1p1_count_pad_ceil", false, 3, 1, 1, true, true}),
                         [](const testing::TestParamInfo<PoolCase>& i) { return std::string(i.param.name); });

// ---- errors ----

std::string load_error(const Graph& g, Shape x_shape) {
  try {
    model_of(g, 2)->create_session()->run({{"x", uniform(x_shape, -1.f, 1.f, 1)}});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(QdqOpsErrors, BadParametersOfTheInt8OpsAreNamed) {
  // ng.* nodes written directly (as a pass would): each bad attribute is an error naming the node.
  auto graph_with = [](const std::string& op, Attributes attrs, bool weights) {
    GraphBuilder b;
    b.input("x", {2, 4, 3, 3});
    add_const<float>(b, "s", DataType::Float32, {}, {0.1f});
    add_const<uint8_t>(b, "zp", DataType::UInt8, {}, {128});
    b.node("QuantizeLinear", {"x", "s", "zp"}, {"xq"});
    std::vector<std::string> ins = {"xq"};
    if (weights) {
      add_const<int8_t>(b, "w", DataType::Int8, {5, 3}, std::vector<int8_t>(15, 1));
      ins.push_back("w");
    }
    Node& n = b.node(op, ins, {"yq"});
    n.name = "bad_node";
    n.attrs = attrs;
    b.node("DequantizeLinear", {"yq", "s", "zp"}, {"y"});
    b.output("y");
    return b;
  };
  Attributes gemm;
  gemm.set("x_scale", Attribute::of_float(0.1f));
  gemm.set("x_zero_point", Attribute::of_int(128));
  gemm.set("w_scale", Attribute::of_floats({0.1f, 0.1f}));  // 2 values for 5 columns
  gemm.set("y_scale", Attribute::of_float(0.1f));
  gemm.set("y_zero_point", Attribute::of_int(128));
  std::string e = load_error(graph_with("ng.QGemm", gemm, true).g, {2, 4, 3, 3});
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("w_scale has 2 values"), std::string::npos) << e;

  Attributes pool;
  pool.set("x_scale", Attribute::of_float(0.1f));
  pool.set("x_zero_point", Attribute::of_int(300));
  pool.set("y_scale", Attribute::of_float(0.1f));
  pool.set("y_zero_point", Attribute::of_int(0));
  e = load_error(graph_with("ng.QGlobalAveragePool", pool, false).g, {2, 4, 3, 3});
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("x_zero_point 300"), std::string::npos) << e;

  Attributes cat;
  cat.set("x_scales", Attribute::of_floats({-1.f}));
  cat.set("x_zero_points", Attribute::of_ints({0}));
  cat.set("y_scale", Attribute::of_float(0.1f));
  cat.set("y_zero_point", Attribute::of_int(0));
  e = load_error(graph_with("ng.QConcat", cat, false).g, {2, 4, 3, 3});
  EXPECT_NE(e.find("bad_node"), std::string::npos) << e;
  EXPECT_NE(e.find("not a positive finite number"), std::string::npos) << e;
}

TEST(QdqOpsErrors, AZeroScaleBeforeAGemmIsNamed) {
  GraphBuilder b = qdq_gemm(GemmCase{"zero_scale"});
  b.g.values[b.g.find_value("sw")].constant.data_as<float>()[4] = 0.f;
  const std::string e = load_error(b.g, {3, 40});
  EXPECT_NE(e.find("DequantizeLinear"), std::string::npos) << e;
  EXPECT_NE(e.find("not a positive finite number"), std::string::npos) << e;
}

}  // namespace
}  // namespace ninegrid
