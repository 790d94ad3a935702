// Quantised graphs that stay int8 through Concat + activation and through data movement (the SSH modules
// and the FPN upsampling of RetinaFace as `ninegrid quantize` writes them):
//   Concat(DQ(a), DQ(b), ...) -> Relu | Clip -> Q     ->  ng.QConcat with the activation as its clamp
//   DQ -> Resize (nearest) -> Slice -> ... -> Q        ->  the same ops on uint8, the pair gone (same
//                                                          parameters) or one ng.QRequantize (different)
// Every fused graph gives the unfused float graph's bytes exactly (the fused ops requantise by tables
// built from the float steps; kernels/ref/qlookup_ref.h), on random data quantised with zero points at
// both ends of the range, odd channel counts, int8 and uint8 activations. Patterns that must stay float
// (a value also read in float, a linear Resize) stay so.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>

#include "graph_builder.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;
using test_graph::add_const;
using test_graph::model_of;
using test_graph::ops_of;

struct QParams {
  float scale;
  int zero_point;
};

// The scale and zero point constants `name`_s, `name`_z (int8 zero point zero_point - 128 when `signed_zp`:
// the same reals as uint8 zero_point, as ONNX Runtime's quantiser writes them).
void params(GraphBuilder& b, const std::string& name, QParams p, bool signed_zp) {
  add_const<float>(b, name + "_s", DataType::Float32, {}, {p.scale});
  if (signed_zp) add_const<int8_t>(b, name + "_z", DataType::Int8, {}, {static_cast<int8_t>(p.zero_point - 128)});
  else add_const<uint8_t>(b, name + "_z", DataType::UInt8, {}, {static_cast<uint8_t>(p.zero_point)});
}
// in (float) -> QuantizeLinear -> DequantizeLinear -> out (float).
void qdq(GraphBuilder& b, const std::string& in, const std::string& out, QParams p, bool signed_zp = false) {
  params(b, out, p, signed_zp);
  b.node("QuantizeLinear", {in, out + "_s", out + "_z"}, {out + "_q"});
  b.node("DequantizeLinear", {out + "_q", out + "_s", out + "_z"}, {out});
}

void slice(GraphBuilder& b, const std::string& in, const std::string& out, std::vector<int64_t> starts,
           std::vector<int64_t> ends, std::vector<int64_t> axes) {
  const int64_t n = static_cast<int64_t>(starts.size());
  add_const<int64_t>(b, out + "_starts", DataType::Int64, {n}, starts);
  add_const<int64_t>(b, out + "_ends", DataType::Int64, {n}, ends);
  add_const<int64_t>(b, out + "_axes", DataType::Int64, {n}, axes);
  b.node("Slice", {in, out + "_starts", out + "_ends", out + "_axes"}, {out});
}

// The dtype the optimised graph gives the input of its (first) node of type `op`.
DataType input_type_of(const Model& m, const std::string& op) {
  const Graph& g = InternalAccess::impl(m).graph();
  for (const Node& n : g.nodes)
    if (n.op_type == op) return g.values[n.inputs[0]].dtype;
  return DataType::Undefined;
}

Tensor uniform(Shape shape, float lo, float hi, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// Every output of the graph, at opt-level 2 (fused, planned) and 0 (the float QDQ graph), on one thread and
// on two, the same bytes.
void expect_fused_equals_unfused(const Graph& g, const Tensor& x, const std::string& what) {
  SCOPED_TRACE(what);
  const std::map<std::string, Tensor> want = model_of(g, 0)->create_session()->run({{"x", x}});
  for (int threads : {1, 2}) {
    Options o;
    o.opt_level = 2;
    o.threads = threads;
    auto m = std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
    const std::map<std::string, Tensor> got = m->create_session()->run({{"x", x}});
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [name, w] : want) {
      const Tensor& t = got.at(name);
      ASSERT_EQ(t.shape(), w.shape()) << name;
      ASSERT_EQ(t.dtype(), w.dtype()) << name;
      int64_t bad = 0;
      for (int64_t i = 0; i < w.numel(); ++i)
        if (w.data_as<float>()[i] != t.data_as<float>()[i] && bad++ < 5)
          ADD_FAILURE() << name << " element " << i << ": " << w.data_as<float>()[i] << " unfused, "
                        << t.data_as<float>()[i] << " fused (" << threads << " threads)";
      EXPECT_EQ(bad, 0) << name << " of " << w.numel();
    }
  }
}

// ---- Concat + activation ----

struct ConcatCase {
  const char* name;
  std::vector<int64_t> channels;  // of the three branches
  std::vector<QParams> inputs;    // their quantisation
  QParams output;
  const char* activation;  // "Relu", "Clip" or ""
  bool signed_zp = false;
};
void PrintTo(const ConcatCase& c, std::ostream* os) { *os << c.name; }

// x -> three channel slices, each scaled differently and quantised -> Concat -> [act] -> Q -> DQ -> y.
GraphBuilder qdq_concat(const ConcatCase& c) {
  GraphBuilder b;
  int64_t total = 0;
  for (int64_t ch : c.channels) total += ch;
  b.input("x", {2, total, 5, 7});
  std::vector<std::string> parts;
  int64_t begin = 0;
  for (size_t i = 0; i < c.channels.size(); ++i) {
    const std::string s = "branch" + std::to_string(i);
    slice(b, "x", s, {begin}, {begin + c.channels[i]}, {1});
    begin += c.channels[i];
    add_const<float>(b, s + "_gain", DataType::Float32, {}, {0.5f + static_cast<float>(i)});
    b.node("Mul", {s, s + "_gain"}, {s + "_scaled"});
    qdq(b, s + "_scaled", s + "_dq", c.inputs[i], c.signed_zp);
    parts.push_back(s + "_dq");
  }
  Node& cat = b.node("Concat", parts, {"cat"});
  cat.name = "the_concat";
  cat.attrs.set("axis", Attribute::of_int(1));
  std::string y = "cat";
  if (std::string(c.activation) == "Relu") {
    b.node("Relu", {"cat"}, {"act"});
    y = "act";
  } else if (std::string(c.activation) == "Clip") {
    add_const<float>(b, "lo", DataType::Float32, {}, {-0.5f});
    add_const<float>(b, "hi", DataType::Float32, {}, {1.f});
    b.node("Clip", {"cat", "lo", "hi"}, {"act"});
    y = "act";
  }
  qdq(b, y, "y", c.output, c.signed_zp);
  b.output("y");
  return b;
}

class QdqConcatActivation : public testing::TestWithParam<ConcatCase> {};

TEST_P(QdqConcatActivation, FusesIntoQConcatAndGivesTheFloatGraphsBytes) {
  const ConcatCase& c = GetParam();
  const GraphBuilder b = qdq_concat(c);
  auto ops = ops_of(*model_of(b.g, 2));
  EXPECT_EQ(ops["ng.QConcat"], 1);
  EXPECT_EQ(ops["Concat"] + ops["Relu"] + ops["Clip"], 0);
  EXPECT_EQ(ops["DequantizeLinear"], 1) << "only the output's";
  int64_t total = 0;
  for (int64_t ch : c.channels) total += ch;
  // Reals past both ends of every branch's range: saturation, and negatives for the activation to clamp.
  expect_fused_equals_unfused(b.g, uniform({2, total, 5, 7}, -3.f, 3.f, 11), c.name);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, QdqConcatActivation,
    testing::Values(
        // RetinaFace's SSH: three convs' signed outputs, concatenated, ReLU, quantised from 0.
        ConcatCase{"ssh_relu_odd_channels", {3, 5, 7}, {{0.02f, 128}, {0.013f, 0}, {0.05f, 255}}, {0.03f, 0}, "Relu"},
        ConcatCase{"relu_blocks_of_16", {16, 32, 16}, {{0.02f, 128}, {0.013f, 0}, {0.05f, 255}}, {0.03f, 0}, "Relu"},
        ConcatCase{"relu_int8_activations", {8, 4, 4}, {{0.02f, 140}, {0.01f, 1}, {0.04f, 250}}, {0.02f, 3}, "Relu",
                   true},
        // Output zero point 255: the ReLU leaves only 255.
        ConcatCase{"relu_output_zero_point_255", {2, 3, 4}, {{0.02f, 128}, {0.013f, 0}, {0.05f, 255}}, {0.03f, 255},
                   "Relu"},
        ConcatCase{"clip_both_sides", {5, 1, 6}, {{0.02f, 128}, {0.013f, 0}, {0.05f, 255}}, {0.01f, 128}, "Clip"},
        // No activation (the ng.QConcat that was there before), zero point 255 and an input in the
        // output's parameters (copied).
        ConcatCase{"no_activation", {4, 9, 2}, {{0.04f, 255}, {0.013f, 0}, {0.05f, 100}}, {0.04f, 255}, "",
                   true}),
    [](const testing::TestParamInfo<ConcatCase>& i) { return std::string(i.param.name); });

TEST(QdqConcatStaysFloat, WhenTheConcatOrItsActivationIsAlsoReadInFloat) {
  const ConcatCase c{"also_read", {3, 5, 7}, {{0.02f, 128}, {0.013f, 0}, {0.05f, 255}}, {0.03f, 0}, "Relu"};
  for (const char* side : {"cat", "act"}) {
    GraphBuilder b = qdq_concat(c);
    b.output(side);  // read in float too, as a graph output
    auto ops = ops_of(*model_of(b.g, 2));
    EXPECT_EQ(ops["ng.QConcat"], 0) << side;
    EXPECT_EQ(ops["Concat"], 1) << side;
    expect_fused_equals_unfused(b.g, uniform({2, 15, 5, 7}, -3.f, 3.f, 12), side);
  }
}

// ---- Data movement between DequantizeLinear and QuantizeLinear ----

// x -> Q(p) -> DQ -> Resize nearest 2x -> Slice (whole) -> Slice (crop) -> Q(q) -> DQ -> y: RetinaFace's FPN
// upsampling (the crops only bite at other input sizes).
GraphBuilder qdq_upsample(int64_t channels, QParams p, QParams q, const char* mode = "nearest",
                          bool signed_zp = false) {
  GraphBuilder b;
  b.input("x", {1, channels, 6, 7});
  qdq(b, "x", "xf", p, signed_zp);
  add_const<float>(b, "scales", DataType::Float32, {4}, {1.f, 1.f, 2.f, 2.f});
  Node& r = b.node("Resize", {"xf", "", "scales"}, {"up"});
  r.name = "the_resize";
  r.attrs.set("mode", Attribute::of_string(mode));
  r.attrs.set("coordinate_transformation_mode", Attribute::of_string("asymmetric"));
  r.attrs.set("nearest_mode", Attribute::of_string("floor"));
  slice(b, "up", "whole", {0}, {12}, {2});
  slice(b, "whole", "crop", {1, 0}, {11, 13}, {2, 3});
  qdq(b, "crop", "y", q, signed_zp);
  b.output("y");
  return b;
}

TEST(QdqMoves, UpsamplingWithTheSameParametersDropsThePair) {
  for (int64_t channels : {5, 48})
    for (bool signed_zp : {false, true}) {
      const std::string what = std::to_string(channels) + " channels" + (signed_zp ? ", int8" : "");
      const GraphBuilder b = qdq_upsample(channels, {0.02f, 0}, {0.02f, 0}, "nearest", signed_zp);
      auto m = model_of(b.g, 2);
      auto ops = ops_of(*m);
      EXPECT_EQ(ops["QuantizeLinear"], 1) << what << ": only the input's";
      EXPECT_EQ(ops["DequantizeLinear"], 1) << what << ": only the output's";
      EXPECT_EQ(ops["ng.QRequantize"], 0) << what;
      EXPECT_EQ(input_type_of(*m, "Resize"), DataType::UInt8) << what;
      expect_fused_equals_unfused(b.g, uniform({1, channels, 6, 7}, -1.f, 6.f, 13), what);
    }
}

TEST(QdqMoves, UpsamplingWithOtherParametersRequantisesOnce) {
  // Zero points at both ends; a finer output scale that saturates, a coarser one that merges levels.
  for (QParams q : {QParams{0.015f, 255}, QParams{0.05f, 3}, QParams{0.02f, 1}})
    for (int64_t channels : {7, 16}) {
      const std::string what = std::to_string(channels) + " channels, y zero point " + std::to_string(q.zero_point);
      const GraphBuilder b = qdq_upsample(channels, {0.02f, 0}, q);
      auto m = model_of(b.g, 2);
      auto ops = ops_of(*m);
      EXPECT_EQ(ops["ng.QRequantize"], 1) << what;
      EXPECT_EQ(ops["QuantizeLinear"], 1) << what;
      EXPECT_EQ(ops["DequantizeLinear"], 1) << what;
      EXPECT_EQ(input_type_of(*m, "Resize"), DataType::UInt8) << what;
      // Before the Resize, where the tensor is a quarter of the size.
      EXPECT_EQ(input_type_of(*m, "ng.QRequantize"), DataType::UInt8) << what;
      const Graph& g = InternalAccess::impl(*m).graph();
      for (const Node& n : g.nodes)
        if (n.op_type == "ng.QRequantize") {
          EXPECT_EQ(g.values[n.outputs[0]].shape, (Shape{1, channels, 6, 7})) << what;
        }
      expect_fused_equals_unfused(b.g, uniform({1, channels, 6, 7}, -1.f, 6.f, 14), what);
    }
}

TEST(QdqMoves, PoolTransposeReshapeChainRequantisesAfter) {
  GraphBuilder b;
  b.input("x", {2, 9, 8, 6});
  qdq(b, "x", "xf", {0.03f, 255}, /*signed_zp=*/true);
  Node& pool = b.node("MaxPool", {"xf"}, {"pooled"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({3, 3}));
  pool.attrs.set("strides", Attribute::of_ints({2, 2}));
  pool.attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.node("Transpose", {"pooled"}, {"t"}).attrs.set("perm", Attribute::of_ints({0, 2, 3, 1}));
  add_const<int64_t>(b, "shape", DataType::Int64, {2}, {2, -1});
  b.node("Reshape", {"t", "shape"}, {"flat"});
  qdq(b, "flat", "y", {0.011f, 0}, /*signed_zp=*/true);
  b.output("y");
  auto m = model_of(b.g, 2);
  auto ops = ops_of(*m);
  EXPECT_EQ(ops["ng.QRequantize"], 1);
  EXPECT_EQ(input_type_of(*m, "MaxPool"), DataType::UInt8);
  EXPECT_EQ(ops["DequantizeLinear"], 1);
  expect_fused_equals_unfused(b.g, uniform({2, 9, 8, 6}, -8.f, 1.f, 15), "pool, transpose, reshape");
}

TEST(QdqMoves, ADequantizeWithAFloatReaderStaysAndTheChainRequantisesAfter) {
  GraphBuilder b = qdq_upsample(6, {0.02f, 17}, {0.025f, 200});
  b.output("xf");  // the dequantised input is also an output
  auto m = model_of(b.g, 2);
  auto ops = ops_of(*m);
  EXPECT_EQ(ops["ng.QRequantize"], 1);
  EXPECT_EQ(input_type_of(*m, "Resize"), DataType::UInt8);
  EXPECT_EQ(ops["DequantizeLinear"], 2) << "the float reader's and the output's";
  expect_fused_equals_unfused(b.g, uniform({1, 6, 6, 7}, -1.f, 6.f, 16), "dequantised input also read");
}

TEST(QdqMoves, ADequantizeStraightIntoAQuantizeBecomesOneRequantisationOrNothing) {
  for (QParams q : {QParams{0.02f, 40}, QParams{0.033f, 255}}) {
    GraphBuilder b;
    b.input("x", {3, 5, 4});
    qdq(b, "x", "xf", {0.02f, 40});
    qdq(b, "xf", "y", q);
    b.output("y");
    const bool same = q.zero_point == 40;
    auto ops = ops_of(*model_of(b.g, 2));
    EXPECT_EQ(ops["ng.QRequantize"], same ? 0 : 1);
    EXPECT_EQ(ops["QuantizeLinear"], 1);
    EXPECT_EQ(ops["DequantizeLinear"], 1);
    expect_fused_equals_unfused(b.g, uniform({3, 5, 4}, -2.f, 6.f, 17), same ? "same" : "other");
  }
}

TEST(QdqMoves, LinearResizeAndValuesAlsoReadInFloatStayFloat) {
  {
    const GraphBuilder b = qdq_upsample(5, {0.02f, 0}, {0.02f, 0}, "linear");
    auto m = model_of(b.g, 2);
    EXPECT_EQ(input_type_of(*m, "Resize"), DataType::Float32);
    EXPECT_EQ(ops_of(*m)["QuantizeLinear"], 2);
    expect_fused_equals_unfused(b.g, uniform({1, 5, 6, 7}, -1.f, 6.f, 18), "linear");
  }
  {
    GraphBuilder b = qdq_upsample(5, {0.02f, 0}, {0.02f, 0});
    b.output("up");  // the Resize's float output is read outside the chain
    auto m = model_of(b.g, 2);
    EXPECT_EQ(input_type_of(*m, "Resize"), DataType::Float32);
    EXPECT_EQ(ops_of(*m)["ng.QRequantize"], 0);
    expect_fused_equals_unfused(b.g, uniform({1, 5, 6, 7}, -1.f, 6.f, 19), "resize output read");
  }
}

}  // namespace
}  // namespace ninegrid
