// ncnn int8 layers (Convolution, ConvolutionDepthWise and InnerProduct with int8_scale_term), as ncnn2int8
// writes them: the .bin layout (int8 weights, float bias, weight scales, input scale, output scale), the
// QDQ graph the importer makes of them and its fusion into ng.QConv / ng.QGemm, ncnn's rounding (half away
// from zero, saturation to [-127, 127]), and the errors of bad scales and counts, each naming the layer.
//
// Expected values are worked out by hand in the comments from ncnn's formulas (src/import/ncnn/ncnn_int8.h).
// tests/models/test_ncnn_int8.py checks a larger model against a NumPy reference of the same formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/ncnn_int8.h"
#include "import/ncnn/ncnn_importer.h"
#include "import/ncnn/ncnn_weights.h"
#include "ir/quant_attrs.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"
#include "unit/ncnn_test_util.h"

namespace ninegrid {
namespace {

using ncnn_test::BinWriter;
using ncnn_test::expect_error;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::shared_ptr<Model> load(const std::string& param, const BinWriter& bin, int opt_level) {
  Options o;
  o.opt_level = opt_level;
  o.threads = 1;
  return Model::load_ncnn(param, bin.bytes.data(), bin.bytes.size(), o);
}

const Graph& graph_of(const Model& m) { return InternalAccess::impl(m).graph(); }

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> n;
  for (const Node& node : g.nodes) ++n[node.op_type];
  return n;
}

const Node* find_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const Node* producer(const Graph& g, int value) {
  for (const Node& n : g.nodes)
    for (int o : n.outputs)
      if (o == value) return &n;
  return nullptr;
}

std::vector<float> floats_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
}

Tensor tensor(const Shape& shape, const std::vector<float>& v) { return Tensor::from_vector<float>(DataType::Float32, shape, v); }

// A 1x1 Convolution 2 -> 2 channels, int8_scale_term 2, ReLU, on a 2x1x3 input (c, h, w):
//   int8 weights out0 = (1, -2), out1 = (3, 127); bias (0.5, -0.25); weight scales (10, 20); input scale 4.
const char* kConvParam =
    "7767517\n2 2\n"
    "Input data 0 1 data 0=3 1=1 2=2\n"
    "Convolution convq 1 1 data out 0=2 1=1 5=1 6=4 8=2 9=1\n";

BinWriter conv_bin(float bottom = 4.f, std::vector<float> weight_scales = {10.f, 20.f}) {
  BinWriter b;
  b.int8_blob({1, -2, 3, 127});
  b.raw({0.5f, -0.25f});
  b.raw(weight_scales);
  b.raw({bottom});
  return b;
}

TEST(NcnnInt8, Float2Int8RoundsHalfAwayAndSaturatesAt127) {
  // As ncnn's x86 SIMD code: v + copysign(0.5, v), truncated, in [-127, 127].
  const std::vector<std::pair<float, int32_t>> cases = {
      {2.5f, 3},      {-2.5f, -3},     {0.5f, 1},     {-0.5f, -1},       {1.4999999f, 1},  {-1.4999999f, -1},
      {127.49f, 127}, {127.5f, 127},   {-127.5f, -127}, {-128.f, -127},  {1e9f, 127},      {-1e9f, -127},
      {kInf, 127},    {-kInf, -127},   {kNaN, -127},  {0.f, 0},          {-0.f, 0},
      {0.49999997f, 1},  // 0.5 - 2^-25: adding 0.5 rounds up to 1 in float (ncnn's scalar round() gives 0)
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(ncnn_float2int8(v), want) << v;
}

TEST(NcnnInt8, ReadsInt8BlobsWithPadding) {
  BinWriter b;
  b.int8_blob({-127, 5, 127});  // 4 + 3 bytes, padded to 8
  b.raw({2.5f});
  ncnn::WeightReader r(b.bytes.data(), b.bytes.size());
  const ncnn::WeightReader::Blob blob = r.load_weights(3, "c");
  EXPECT_TRUE(blob.is_int8);
  EXPECT_EQ(blob.int8, (std::vector<int8_t>{-127, 5, 127}));
  EXPECT_EQ(r.load(1, 1, "c"), (std::vector<float>{2.5f}));
  // A float blob through load_weights, and int8 data where float weights are expected.
  BinWriter f;
  f.raw_blob({1.5f});
  ncnn::WeightReader rf(f.bytes.data(), f.bytes.size());
  EXPECT_EQ(rf.load_weights(1, "f").floats, (std::vector<float>{1.5f}));
  ncnn::WeightReader ri(b.bytes.data(), b.bytes.size());
  expect_error([&] { ri.load(3, 0, "convx"); }, {"int8", "not a quantised layer"});
  // Too few int8 bytes (the padding counts: 3 values need 4 bytes after the tag).
  ncnn::WeightReader rt(b.bytes.data(), 7);
  expect_error([&] { rt.load_weights(3, "convt"); }, {"truncated at layer 'convt'"});
}

TEST(NcnnInt8, MapsConvolutionOntoQuantizeDequantizeAroundConv) {
  const Graph g = import_ncnn(kConvParam, conv_bin().bytes.data(), conv_bin().bytes.size());
  const Node* conv = find_node(g, "convq");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op_type, "Conv");
  ASSERT_EQ(conv->inputs.size(), 3u);
  // Input: DequantizeLinear(QuantizeLinear(data)) with scale 1 / 4 and ncnn's own scale 4 on the Q.
  const Node* dq = producer(g, conv->inputs[0]);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op_type, "DequantizeLinear");
  EXPECT_EQ(floats_of(g.values[dq->inputs[1]].constant), (std::vector<float>{0.25f}));
  const Node* q = producer(g, dq->inputs[0]);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->op_type, "QuantizeLinear");
  EXPECT_EQ(q->attrs.get_float(kNcnnScale, 0.f), 4.f);
  EXPECT_EQ(g.values[q->inputs[2]].constant.dtype(), DataType::Int8);
  EXPECT_EQ(q->inputs[0], g.inputs[0]);
  // Weights: DequantizeLinear(int8 [2,2,1,1], 1 / scale per output channel, axis 0).
  const Node* wdq = producer(g, conv->inputs[1]);
  ASSERT_NE(wdq, nullptr);
  EXPECT_EQ(wdq->op_type, "DequantizeLinear");
  const Tensor& wq = g.values[wdq->inputs[0]].constant;
  ASSERT_EQ(wq.dtype(), DataType::Int8);
  EXPECT_EQ(wq.shape(), (Shape{2, 2, 1, 1}));
  EXPECT_EQ(std::vector<int8_t>(wq.data_as<int8_t>(), wq.data_as<int8_t>() + 4), (std::vector<int8_t>{1, -2, 3, 127}));
  EXPECT_EQ(floats_of(g.values[wdq->inputs[1]].constant), (std::vector<float>{0.1f, 0.05f}));
  EXPECT_EQ(wdq->attrs.get_int("axis", -1), 0);
  EXPECT_EQ(floats_of(g.values[conv->inputs[2]].constant), (std::vector<float>{0.5f, -0.25f}));
  EXPECT_NE(find_node(g, "convq/activation"), nullptr);
}

TEST(NcnnInt8, QuantisesTheInputAsNcnnDoes) {
  // x * 4 = 2.5 -> 3 and -2.5 -> -3 (half away from zero; ONNX would give 2 and -2), -400 -> -127 (ONNX:
  // -128), 0.5 -> 1, 400 -> 127, 1.496 -> 1. Channel 0 = (0.625, -0.625, -100), channel 1 = (0.125, 100, 0.374):
  //   q0 = (3, -3, -127), q1 = (1, 127, 1)
  //   sum0 = q0 - 2 q1 = (1, -257, -129)         out0 = relu(sum0 / (4 * 10) + 0.5)  = (0.525, 0, 0)
  //   sum1 = 3 q0 + 127 q1 = (136, 16120, -254)  out1 = relu(sum1 / (4 * 20) - 0.25) = (1.45, 201.25, 0)
  const Tensor x = tensor({1, 2, 1, 3}, {0.625f, -0.625f, -100.f, 0.125f, 100.f, 0.374f});
  const std::vector<float> want = {0.525f, 0.f, 0.f, 1.45f, 201.25f, 0.f};
  for (int level : {0, 1, 2}) {
    auto m = load(kConvParam, conv_bin(), level);
    const Tensor y = m->create_session()->run({{"data", x}}).at("out");
    ASSERT_EQ(y.shape(), (Shape{1, 2, 1, 3}));
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(y.data_as<float>()[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << "level " << level << " at " << i;
  }
}

TEST(NcnnInt8, ZeroOrInfiniteWeightScaleLeavesTheBias) {
  // ncnn's dequantisation factor is 0 for a weight scale of 0 (or inf, ncnn2table's 127 / 0 for an
  // all-zero filter): those channels output relu(bias). Channel 1 (scale 20): relu(sum1 / 80 - 0.25).
  for (float s : {0.f, kInf}) {
    const Tensor x = tensor({1, 2, 1, 3}, {0.625f, -0.625f, -100.f, 0.125f, 100.f, 0.374f});
    for (int level : {0, 2}) {
      auto m = load(kConvParam, conv_bin(4.f, {s, 20.f}), level);
      const Tensor y = m->create_session()->run({{"data", x}}).at("out");
      const std::vector<float> want = {0.5f, 0.5f, 0.5f, 1.45f, 201.25f, 0.f};
      for (int i = 0; i < 6; ++i) EXPECT_NEAR(y.data_as<float>()[i], want[i], 1e-4f) << "scale " << s << " at " << i;
    }
  }
}

TEST(NcnnInt8, QuantisesFloatWeightsAtLoadLikeNcnn) {
  // int8_scale_term with float weights: ncnn quantises them when it loads them, float2int8(w * scale):
  // 0.25 * 10 = 2.5 -> 3, -0.15 * 10 -> -2, 0.049 * 10 -> 0, 20 * 10 -> 127.
  const std::string param =
      "7767517\n2 2\nInput data 0 1 data 0=1 1=1 2=4\nConvolution c 1 1 data out 0=1 1=1 5=0 6=4 8=1\n";
  BinWriter b;
  b.raw_blob({0.25f, -0.15f, 0.049f, 20.f});
  b.raw({10.f, 1.f});
  const Graph g = import_ncnn(param, b.bytes.data(), b.bytes.size());
  const Node* wdq = producer(g, find_node(g, "c")->inputs[1]);
  ASSERT_NE(wdq, nullptr);
  const Tensor& wq = g.values[wdq->inputs[0]].constant;
  EXPECT_EQ(std::vector<int8_t>(wq.data_as<int8_t>(), wq.data_as<int8_t>() + 4), (std::vector<int8_t>{3, -2, 0, 127}));
}

TEST(NcnnInt8, DepthwiseScalesPerGroupOrPerLayer) {
  // group 2, num_output 4 (two outputs per group), 3x3 kernels: 36 weights.
  for (int term : {1, 2, 101, 102}) {
    const std::string param = "7767517\n2 2\nInput data 0 1 data 0=5 1=5 2=2\n"
                              "ConvolutionDepthWise dw 1 1 data out 0=4 1=3 4=1 5=0 6=36 7=2 8=" +
                              std::to_string(term) + "\n";
    BinWriter b;
    b.int8_blob(std::vector<int8_t>(36, 1));
    if (term % 100 == 1) b.raw({2.f, 4.f});
    else b.raw({8.f});
    b.raw({3.f});
    if (term > 100) b.raw({5.f});
    const Graph g = import_ncnn(param, b.bytes.data(), b.bytes.size());
    const Node* dw = find_node(g, "dw");
    ASSERT_NE(dw, nullptr);
    EXPECT_EQ(dw->attrs.get_int("group", 0), 2);
    const Node* wdq = producer(g, dw->inputs[1]);
    ASSERT_NE(wdq, nullptr);
    const std::vector<float> want = term % 100 == 1 ? std::vector<float>{0.5f, 0.5f, 0.25f, 0.25f}
                                                    : std::vector<float>{0.125f, 0.125f, 0.125f, 0.125f};
    EXPECT_EQ(floats_of(g.values[wdq->inputs[1]].constant), want) << "int8_scale_term " << term;
    // > 100: the output is requantised with scale 5 and the blob is its dequantised value.
    const Node* out = producer(g, g.outputs.at(0));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->op_type, term > 100 ? "DequantizeLinear" : "Conv");
    if (term > 100) {
      const Node* rq = producer(g, out->inputs[0]);
      ASSERT_NE(rq, nullptr);
      EXPECT_EQ(rq->op_type, "QuantizeLinear");
      EXPECT_EQ(rq->attrs.get_float(kNcnnScale, 0.f), 5.f);
    }
  }
}

// conv1 (int8_scale_term 102, no activation) -> conv2 (int8): conv1's output is ncnn's int8 tensor, which
// conv2 reads as it is. 1x1, one channel, weights 2 and 1, all scales 1: conv2's output is
// float2int8(2 * float2int8(x)), so x = -100 gives -127 (not -128: ncnn saturates to [-127, 127]), x = 30
// gives 60, x = 1.5 gives 2 * 2 = 4, x = 100 gives 127.
const char* kChainParam =
    "7767517\n3 3\nInput data 0 1 data 0=4 1=1 2=1\n"
    "Convolution conv1 1 1 data mid 0=1 1=1 5=0 6=1 8=102\n"
    "Convolution conv2 1 1 mid out 0=1 1=1 5=0 6=1 8=2\n";

BinWriter chain_bin() {
  BinWriter b;
  b.int8_blob({2});
  b.raw({1.f, 1.f, 1.f});  // conv1: weight scale, input scale, output scale
  b.int8_blob({1});
  b.raw({1.f, 1.f});  // conv2: weight scale, input scale
  return b;
}

TEST(NcnnInt8, RequantisingLayerFusesIntoQConvWithNcnnClamp) {
  const Tensor x = tensor({1, 1, 1, 4}, {-100.f, 30.f, 1.5f, 100.f});
  const std::vector<float> want = {-127.f, 60.f, 4.f, 127.f};
  for (int level : {0, 1, 2}) {
    auto m = load(kChainParam, chain_bin(), level);
    const Tensor y = m->create_session()->run({{"data", x}}).at("out");
    EXPECT_EQ(floats_of(y), want) << "level " << level;
    if (level == 0) continue;
    // conv1 is an integer conv writing uint8 (int8 + 128) clamped to [1, 255]; conv2's output is read in
    // float, so it stays a float conv over the dequantised values.
    const Graph& g = graph_of(*m);
    const Node* conv1 = find_node(g, "conv1");
    ASSERT_NE(conv1, nullptr);
    EXPECT_EQ(conv1->op_type, "ng.QConv");
    const QConvAttrs qa = read_qconv_attrs(conv1->attrs);
    EXPECT_EQ(qa.y_zero_point, 128);
    EXPECT_EQ(qa.qmin, 1);
    EXPECT_EQ(qa.qmax, 255);
    EXPECT_EQ(op_counts(g)["ng.QConv"], 1);
  }
}

// Two InnerProducts, int8 (term 2), the first with ReLU: the first becomes ng.QGemm requantising for the second.
TEST(NcnnInt8, InnerProductChainFusesIntoQGemm) {
  const std::string param =
      "7767517\n3 3\nInput data 0 1 data 0=6\n"
      "InnerProduct fc1 1 1 data h 0=4 1=1 2=24 8=2 9=1\n"
      "InnerProduct fc2 1 1 h out 0=3 1=1 2=12 8=2\n";
  BinWriter b;
  std::vector<int8_t> w1(24), w2(12);
  for (int i = 0; i < 24; ++i) w1[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  for (int i = 0; i < 12; ++i) w2[i] = static_cast<int8_t>((i * 53) % 255 - 127);
  b.int8_blob(w1);
  b.raw({0.1f, -0.2f, 0.3f, 0.f});
  b.raw({50.f, 60.f, 70.f, 80.f});
  b.raw({20.f});
  b.int8_blob(w2);
  b.raw({0.05f, 0.f, -0.05f});
  b.raw({90.f, 100.f, 110.f});
  b.raw({12.f});
  const Tensor x = tensor({1, 6}, {0.5f, -1.f, 2.f, 3.f, -4.f, 1.25f});
  auto plain = load(param, b, 0);
  auto fused = load(param, b, 2);
  EXPECT_EQ(op_counts(graph_of(*fused))["ng.QGemm"], 1);
  EXPECT_EQ(find_node(graph_of(*fused), "fc1")->op_type, "ng.QGemm");
  const Tensor want = plain->create_session()->run({{"data", x}}).at("out");
  const Tensor got = fused->create_session()->run({{"data", x}}).at("out");
  ASSERT_EQ(want.shape(), (Shape{1, 3}));
  ASSERT_EQ(got.shape(), want.shape());
  // The fused fc1 requantises in one step where the unfused graph dequantises, applies ReLU and quantises
  // again, so an h value may land one int8 step away (kernels/quantized.h rounds the same real half to
  // even, ncnn half away from zero). One step of h[i] moves out[c] by |w2[c][i]| / (12 * s_w2[c]).
  const float s_w2[3] = {90.f, 100.f, 110.f};
  for (int c = 0; c < 3; ++c) {
    float bound = 1e-5f;
    for (int i = 0; i < 4; ++i) bound += std::abs(w2[c * 4 + i]) / (12.f * s_w2[c]);
    EXPECT_NEAR(got.data_as<float>()[c], want.data_as<float>()[c], bound) << c;
  }
}

TEST(NcnnInt8, BadScalesAndCountsNameTheLayer) {
  const std::string p = kConvParam;
  auto imp = [](const std::string& param, const BinWriter& bin) { import_ncnn(param, bin.bytes.data(), bin.bytes.size()); };
  for (float s : {0.f, -1.f, kNaN, kInf, -kInf})
    expect_error([&] { imp(p, conv_bin(s)); }, {"convq", "input scale", "is not a positive finite number"});
  for (float s : {-1.f, kNaN, -kInf})
    expect_error([&] { imp(p, conv_bin(4.f, {10.f, s})); }, {"convq", "weight scale", "output channel 1"});
  // A missing input scale (one weight scale short, so it reads the input scale as the second) is truncation.
  BinWriter short_scales;
  short_scales.int8_blob({1, -2, 3, 127});
  short_scales.raw({0.5f, -0.25f, 10.f, 4.f});
  expect_error([&] { imp(p, short_scales); }, {"truncated at layer 'convq'"});
  // Truncated int8 weights.
  BinWriter short_weights;
  short_weights.u32(0x000D4B38);
  short_weights.bytes += "ab";
  expect_error([&] { imp(p, short_weights); }, {"truncated at layer 'convq'"});
  // The output scale of int8_scale_term 101.
  const std::string p101 = "7767517\n2 2\nInput data 0 1 data 0=3 1=1 2=2\nConvolution convr 1 1 data out 0=2 1=1 5=1 6=4 8=101\n";
  for (float s : {0.f, -2.f, kNaN, kInf}) {
    BinWriter b = conv_bin();
    b.raw({s});
    expect_error([&] { imp(p101, b); }, {"convr", "output scale", "is not a positive finite number"});
  }
  BinWriter no_top = conv_bin();
  expect_error([&] { imp(p101, no_top); }, {"truncated at layer 'convr'"});
  // int8_scale_term values ncnn does not read.
  for (const char* t : {"3", "100", "103", "-1"}) {
    const std::string bad = "7767517\n2 2\nInput data 0 1 data 0=3 1=1 2=2\nConvolution convt 1 1 data out 0=2 1=1 5=1 6=4 8=" +
                            std::string(t) + "\n";
    expect_error([&] { imp(bad, conv_bin()); }, {"convt", "unsupported int8_scale_term"});
  }
  expect_error([&] { imp("7767517\n2 2\nInput data 0 1 data 0=4\nInnerProduct fc 1 1 data out 0=1 2=4 8=101\n", conv_bin()); },
               {"fc", "unsupported int8_scale_term"});
  // int8 weights in a layer that is not quantised, and ncnn's pad_value with int8.
  expect_error([&] { imp("7767517\n2 2\nInput data 0 1 data 0=3 1=1 2=2\nConvolution convf 1 1 data out 0=2 1=1 5=1 6=4\n",
                         conv_bin()); },
               {"convf", "int8", "not a quantised layer"});
  expect_error([&] { imp("7767517\n2 2\nInput data 0 1 data 0=3 1=1 2=2\nConvolution convp 1 1 data out 0=2 1=1 4=1 "
                         "18=1.5 5=1 6=4 8=2\n", conv_bin()); },
               {"convp", "pad_value"});
  // Depthwise per-group scales: two groups need two scales (then the input scale).
  const std::string dw = "7767517\n2 2\nInput data 0 1 data 0=3 1=3 2=2\nConvolutionDepthWise dwq 1 1 data out 0=2 1=1 6=2 7=2 8=1\n";
  BinWriter one_scale;
  one_scale.int8_blob({1, 1});
  one_scale.raw({2.f, 3.f});  // only one group scale and the input scale
  expect_error([&] { imp(dw, one_scale); }, {"truncated at layer 'dwq'"});
}

TEST(NcnnInt8, BadDepthwiseAndInnerProductInputNamesTheLayer) {
  auto imp = [](const std::string& param, const BinWriter& bin) { import_ncnn(param, bin.bytes.data(), bin.bytes.size()); };
  // Depthwise, per group (int8_scale_term 101): a bad scale of the second group, the input's, the output's.
  const std::string dw = "7767517\n2 2\nInput data 0 1 data 0=3 1=3 2=2\n"
                         "ConvolutionDepthWise dwb 1 1 data out 0=2 1=1 6=2 7=2 8=101\n";
  auto dw_bin = [](float g1, float bottom, float top) {
    BinWriter b;
    b.int8_blob({3, -4});
    b.raw({2.f, g1, bottom, top});
    return b;
  };
  for (float s : {-1.f, kNaN})
    expect_error([&] { imp(dw, dw_bin(s, 3.f, 5.f)); }, {"dwb", "weight scale", "output channel 1"});
  expect_error([&] { imp(dw, dw_bin(2.f, kNaN, 5.f)); }, {"dwb", "input scale"});
  expect_error([&] { imp(dw, dw_bin(2.f, 3.f, 0.f)); }, {"dwb", "output scale"});
  // The int8 weights cut short inside the blob (the tag and 1 of 2 bytes, no padding).
  BinWriter cut;
  cut.u32(0x000D4B38);
  cut.bytes.push_back('\x03');
  expect_error([&] { imp(dw, cut); }, {"truncated at layer 'dwb'"});

  // InnerProduct 4 -> 2, int8_scale_term 2: weight scales per output, then the input scale.
  const std::string fc = "7767517\n2 2\nInput data 0 1 data 0=4\nInnerProduct fcb 1 1 data out 0=2 1=1 2=8 8=2\n";
  auto fc_bin = [](float w1, float bottom) {
    BinWriter b;
    b.int8_blob({1, 2, 3, 4, 5, 6, 7, 8});
    b.raw({0.f, 1.f});  // bias
    b.raw({10.f, w1, bottom});
    return b;
  };
  for (float s : {-2.f, kNaN, -kInf})
    expect_error([&] { imp(fc, fc_bin(s, 4.f)); }, {"fcb", "weight scale", "output channel 1"});
  for (float s : {0.f, -4.f, kNaN, kInf}) expect_error([&] { imp(fc, fc_bin(10.f, s)); }, {"fcb", "input scale"});
  BinWriter fc_short = fc_bin(10.f, 4.f);
  fc_short.bytes.resize(fc_short.bytes.size() - 4);  // no input scale
  expect_error([&] { imp(fc, fc_short); }, {"truncated at layer 'fcb'"});
  // weight_data_size (param 2) that is not num_output times the input's size.
  expect_error([&] { imp("7767517\n2 2\nInput data 0 1 data 0=4\nInnerProduct fcs 1 1 data out 0=2 1=1 2=7 8=2\n",
                         fc_bin(10.f, 4.f)); },
               {"fcs", "weight_data_size 7 is not a multiple"});
}

TEST(NcnnInt8, NcnnQuantizeLinearRefusesOtherZeroPoints) {
  // The QuantizeLinear attribute the importer writes: per tensor, zero point int8 0 or uint8 128.
  Graph g;
  const int x = g.add_value("x");
  g.values[x].dtype = DataType::Float32;
  g.values[x].shape = {1, 4};
  g.values[x].shape_known = true;
  g.inputs.push_back(x);
  auto constant = [&](const std::string& name, Tensor t) {
    const int v = g.add_value(name);
    g.values[v].dtype = t.dtype();
    g.values[v].shape = t.shape();
    g.values[v].shape_known = true;
    g.values[v].constant = std::move(t);
    return v;
  };
  const int s = constant("s", Tensor::from_vector<float>(DataType::Float32, {}, {0.5f}));
  const int zp = constant("zp", Tensor::from_vector<uint8_t>(DataType::UInt8, {}, {3}));
  const int y = g.add_value("y");
  Node n;
  n.name = "qn";
  n.op_type = "QuantizeLinear";
  n.opset = 13;
  n.inputs = {x, s, zp};
  n.outputs = {y};
  n.attrs.set(kNcnnScale, Attribute::of_float(2.f));
  g.nodes.push_back(n);
  g.outputs.push_back(y);
  Options o;
  o.opt_level = 0;
  auto model_of = [&] { return std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx")); };
  expect_error([&] { model_of()->create_session()->run({{"x", tensor({1, 4}, {0, 1, 2, 3})}}); }, {"qn", "zero point"});
  g.values[zp].constant = Tensor::from_vector<uint8_t>(DataType::UInt8, {}, {128});
  g.nodes[0].attrs.set(kNcnnScale, Attribute::of_float(-2.f));
  expect_error([&] { model_of()->create_session()->run({{"x", tensor({1, 4}, {0, 1, 2, 3})}}); }, {"qn", kNcnnScale});
  // uint8 with 128: x * 2 = (0.5 -> 1, -2.5 -> -3 (half away), 200 -> 127, -200 -> -127) + 128.
  g.nodes[0].attrs.set(kNcnnScale, Attribute::of_float(2.f));
  const Tensor q = model_of()->create_session()->run({{"x", tensor({1, 4}, {0.25f, -1.25f, 100.f, -100.f})}}).at("y");
  EXPECT_EQ(std::vector<uint8_t>(q.data_as<uint8_t>(), q.data_as<uint8_t>() + 4), (std::vector<uint8_t>{129, 125, 255, 1}));
}

}  // namespace
}  // namespace ninegrid
