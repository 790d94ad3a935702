// QDQ models: DequantizeLinear -> Conv [-> Relu | Clip] -> QuantizeLinear islands become ng.QConv at
// opt-level 1 and 2, and compute what the unfused graph computes (QuantizeLinear and DequantizeLinear
// around a float conv) to within one quantisation step (the float conv rounds its sum differently from
// the integer one). Bad quantisation parameters are errors naming the node.
#include <gtest/gtest.h>

#include <cmath>
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

struct QdqCase {
  const char* name;
  bool int8_activations = false;  // QuantizeLinear to int8 (ONNX Runtime's default) instead of uint8
  bool per_channel = true;        // per-output-channel weight scales
  bool float_bias = false;        // a float bias instead of DequantizeLinear(int32)
  const char* activation = "";    // "", "Relu" or "Clip" (0..6)
  int64_t group = 1, stride = 1, pad = 1, kernel = 3, dilation = 1;
  int64_t in_channels = 8, out_channels = 12, side = 9;
};

void PrintTo(const QdqCase& c, std::ostream* os) { *os << c.name; }

// x (float) -> Q -> DQ -> Conv -> [act] -> Q -> DQ -> y (float).
GraphBuilder qdq_conv(const QdqCase& c) {
  GraphBuilder b(5);
  std::mt19937 rng(17);
  b.input("x", {2, c.in_channels, c.side, c.side});
  const float sx = 0.02f, sy = 0.05f;
  const int32_t zx = c.int8_activations ? -3 : 125, zy = c.int8_activations ? 10 : 130;
  const DataType at = c.int8_activations ? DataType::Int8 : DataType::UInt8;
  auto zp_const = [&](const std::string& name, int32_t zp) {
    return c.int8_activations ? add_const<int8_t>(b, name, at, {}, {static_cast<int8_t>(zp)})
                              : add_const<uint8_t>(b, name, at, {}, {static_cast<uint8_t>(zp)});
  };
  add_const<float>(b, "sx", DataType::Float32, {}, {sx});
  zp_const("zx", zx);
  add_const<float>(b, "sy", DataType::Float32, {}, {sy});
  zp_const("zy", zy);
  b.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xf"});

  const int64_t icpg = c.in_channels / c.group, m = c.out_channels;
  std::uniform_int_distribution<int> wd(-127, 127);
  std::vector<int8_t> wq(static_cast<size_t>(m * icpg * c.kernel * c.kernel));
  for (auto& v : wq) v = static_cast<int8_t>(wd(rng));
  add_const<int8_t>(b, "wq", DataType::Int8, {m, icpg, c.kernel, c.kernel}, wq);
  std::vector<float> sw;
  std::uniform_real_distribution<float> sd(0.002f, 0.01f);
  for (int64_t i = 0; i < (c.per_channel ? m : 1); ++i) sw.push_back(sd(rng));
  add_const<float>(b, "sw", DataType::Float32, c.per_channel ? Shape{m} : Shape{}, sw);
  Node& dqw = b.node("DequantizeLinear", {"wq", "sw"}, {"wf"});
  dqw.attrs.set("axis", Attribute::of_int(0));

  std::vector<std::string> conv_in = {"xf", "wf"};
  std::uniform_int_distribution<int> bd(-2000, 2000);
  if (c.float_bias) {
    std::vector<float> bias;
    for (int64_t i = 0; i < m; ++i) bias.push_back(bd(rng) * 1e-4f);
    add_const<float>(b, "bf", DataType::Float32, {m}, bias);
  } else {
    std::vector<int32_t> bq;
    std::vector<float> sb;
    for (int64_t i = 0; i < m; ++i) bq.push_back(bd(rng)), sb.push_back(sx * sw[c.per_channel ? i : 0]);
    add_const<int32_t>(b, "bq", DataType::Int32, {m}, bq);
    add_const<float>(b, "sb", DataType::Float32, {m}, sb);
    b.node("DequantizeLinear", {"bq", "sb"}, {"bf"}).attrs.set("axis", Attribute::of_int(0));
  }
  conv_in.push_back("bf");
  Node& conv = b.node("Conv", conv_in, {"conv"});
  conv.name = "the_conv";
  conv.attrs.set("group", Attribute::of_int(c.group));
  conv.attrs.set("strides", Attribute::of_ints({c.stride, c.stride}));
  conv.attrs.set("pads", Attribute::of_ints({c.pad, c.pad, c.pad, c.pad}));
  conv.attrs.set("dilations", Attribute::of_ints({c.dilation, c.dilation}));
  std::string y = "conv";
  if (std::string(c.activation) == "Relu") {
    b.node("Relu", {"conv"}, {"act"});
    y = "act";
  } else if (std::string(c.activation) == "Clip") {
    add_const<float>(b, "lo", DataType::Float32, {}, {0.f});
    add_const<float>(b, "hi", DataType::Float32, {}, {6.f});
    b.node("Clip", {"conv", "lo", "hi"}, {"act"});
    y = "act";
  }
  b.node("QuantizeLinear", {y, "sy", "zy"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "sy", "zy"}, {"y"});
  b.output("y");
  return b;
}

Tensor input_for(const QdqCase& c) {
  Tensor x = Tensor::empty(DataType::Float32, {2, c.in_channels, c.side, c.side});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2.6f, 2.6f);  // reaches both ends of the uint8 range (saturation)
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = u(rng);
  return x;
}

class QdqConv : public testing::TestWithParam<QdqCase> {};

TEST_P(QdqConv, FusesAndMatchesTheUnfusedGraphWithinOneStep) {
  const QdqCase& c = GetParam();
  const GraphBuilder b = qdq_conv(c);
  auto plain = model_of(b.g, 0);
  auto fused = model_of(b.g, 2);
  int qconvs = 0, convs = 0;
  for (const Node& n : InternalAccess::impl(*fused).graph().nodes) qconvs += n.op_type == "ng.QConv", convs += n.op_type == "Conv";
  EXPECT_EQ(qconvs, 1);
  EXPECT_EQ(convs, 0);
  const Tensor x = input_for(c);
  const Tensor want = plain->create_session()->run({{"x", x}}).at("y");
  const Tensor got = fused->create_session()->run({{"x", x}}).at("y");
  ASSERT_EQ(want.shape(), got.shape());
  const float step = 0.05f;
  int64_t exact = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = want.data_as<float>()[i], g = got.data_as<float>()[i];
    ASSERT_LE(std::fabs(a - g), step * 1.0001f) << "element " << i << ": " << a << " vs " << g;
    exact += a == g;
  }
  EXPECT_GT(exact, want.numel() * 9 / 10) << "most outputs should round the same way";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, QdqConv,
    testing::Values(QdqCase{"uint8_relu", false, true, false, "Relu"},
                    QdqCase{"int8_activations", true, true, false, "Relu"},
                    QdqCase{"per_tensor_weights", false, false, false, ""},
                    QdqCase{"float_bias_clip", false, true, true, "Clip"},
                    QdqCase{"stride2_no_pad", false, true, false, "", 1, 2, 0},
                    QdqCase{"grouped_dilated", false, true, false, "Relu", 4, 1, 2, 3, 2},
                    QdqCase{"depthwise", true, true, false, "Clip", 8, 2, 1, 3, 1, 8, 8, 10},
                    QdqCase{"pointwise", false, true, false, "", 1, 1, 0, 1, 1, 16, 24, 7}),
    [](const testing::TestParamInfo<QdqCase>& i) { return std::string(i.param.name); });

std::string load_error(const Graph& g, int level) {
  try {
    model_of(g, level)->create_session()->run({{"x", input_for(QdqCase{})}});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(QdqErrors, BadScalesAreNamed) {
  for (float bad : {0.f, -0.5f, NAN}) {
    GraphBuilder b = qdq_conv(QdqCase{});
    b.g.values[b.g.find_value("sw")].constant.data_as<float>()[3] = bad;
    for (int level : {0, 2}) {
      const std::string e = load_error(b.g, level);
      EXPECT_NE(e.find("DequantizeLinear"), std::string::npos) << level << ": " << e;
      EXPECT_NE(e.find("not a positive finite number"), std::string::npos) << level << ": " << e;
    }
  }
}

TEST(QdqErrors, PerChannelScalesOfTheWrongLengthAreNamed) {
  GraphBuilder b = qdq_conv(QdqCase{});
  Value& sw = b.g.values[b.g.find_value("sw")];
  sw.constant = Tensor::from_vector<float>(DataType::Float32, {5}, {0.01f, 0.01f, 0.01f, 0.01f, 0.01f});
  sw.shape = {5};
  for (int level : {0, 2}) {
    const std::string e = load_error(b.g, level);
    EXPECT_NE(e.find("per-axis scale has 5 values"), std::string::npos) << level << ": " << e;
  }
}

}  // namespace
}  // namespace ninegrid

namespace ninegrid {
namespace {

// A residual block as a quantiser writes it: conv, Add of the conv and the block's input, Relu, then
// MaxPool, Concat with itself and Reshape, each behind its own QuantizeLinear -> DequantizeLinear.
GraphBuilder qdq_block() {
  GraphBuilder b = qdq_conv(QdqCase{"block", false, true, false, "", 1, 1, 1, 3, 1, 8, 8, 9});
  // Drop the final DequantizeLinear's graph output: the block continues from yq.
  b.g.outputs.clear();
  add_const<float>(b, "sa", DataType::Float32, {}, {0.07f});
  add_const<uint8_t>(b, "za", DataType::UInt8, {}, {40});
  b.node("Add", {"y", "xf"}, {"sum"});
  b.node("Relu", {"sum"}, {"relu"});
  b.node("QuantizeLinear", {"relu", "sa", "za"}, {"aq"});
  b.node("DequantizeLinear", {"aq", "sa", "za"}, {"af"});
  Node& pool = b.node("MaxPool", {"af"}, {"pooled"});
  pool.attrs.set("kernel_shape", Attribute::of_ints({2, 2}));
  pool.attrs.set("strides", Attribute::of_ints({2, 2}));
  b.node("QuantizeLinear", {"pooled", "sa", "za"}, {"pq"});
  b.node("DequantizeLinear", {"pq", "sa", "za"}, {"pf"});
  b.node("Concat", {"pf", "pf"}, {"cat"}).attrs.set("axis", Attribute::of_int(1));
  b.node("QuantizeLinear", {"cat", "sa", "za"}, {"cq"});
  b.node("DequantizeLinear", {"cq", "sa", "za"}, {"cf"});
  add_const<int64_t>(b, "flat", DataType::Int64, {2}, {2, -1});
  b.node("Reshape", {"cf", "flat"}, {"r"});
  b.node("QuantizeLinear", {"r", "sa", "za"}, {"rq"});
  b.node("DequantizeLinear", {"rq", "sa", "za"}, {"out"});
  b.output("out");
  return b;
}

TEST(QdqBlock, AddPoolConcatAndReshapeRunOnUint8) {
  const GraphBuilder b = qdq_block();
  auto plain = model_of(b.g, 0);
  auto fused = model_of(b.g, 2);
  std::map<std::string, int> ops;
  for (const Node& n : InternalAccess::impl(*fused).graph().nodes) ++ops[n.op_type];
  EXPECT_EQ(ops["ng.QConv"], 1);
  EXPECT_EQ(ops["ng.QAdd"], 0) << "the Add island's ng.QAdd moves into the conv (graph/passes/fuse_qadd.cpp)";
  for (const Node& n : InternalAccess::impl(*fused).graph().nodes)
    if (n.op_type == "ng.QConv") {
      EXPECT_TRUE(n.attrs.has("add_y_scale")) << "the conv's fused addition";
    }
  EXPECT_EQ(ops["Add"], 0);
  EXPECT_EQ(ops["MaxPool"], 1);
  EXPECT_EQ(ops["QuantizeLinear"], 1) << "only the input's";
  EXPECT_EQ(ops["DequantizeLinear"], 1) << "only the output's";
  const Tensor x = input_for(QdqCase{"block", false, true, false, "", 1, 1, 1, 3, 1, 8, 8, 9});
  const Tensor want = plain->create_session()->run({{"x", x}}).at("out");
  const Tensor got = fused->create_session()->run({{"x", x}}).at("out");
  ASSERT_EQ(want.shape(), got.shape());
  // The conv's output may round one step differently (its step is 0.05, the Add's 0.07), which the Add
  // carries into its own rounding: two of the Add's steps at most.
  int64_t exact = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float a = want.data_as<float>()[i], g = got.data_as<float>()[i];
    ASSERT_LE(std::fabs(a - g), 2 * 0.07f * 1.0001f) << "element " << i;
    exact += a == g;
  }
  EXPECT_GT(exact, want.numel() * 8 / 10);
}

}  // namespace
}  // namespace ninegrid
