// The ncnn importer: .param parsing, .bin weight decoding (ncnn's ModelBin rules), the mapping of layers
// onto graph nodes and ng.* operators, robustness against truncated and garbled files, and the two real
// models: RetinaFace-MobileNet0.25 against ncnn's own golden outputs, SqueezeNet 1.1 against an
// independent PyTorch reference (scripts/ncnn_reference.py).
//
// Expected values are computed by hand in the comments, come from ncnn's golden files, or from PyTorch.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "core/npy.h"
#include "import/ncnn/ncnn_importer.h"
#include "import/ncnn/ncnn_param.h"
#include "import/ncnn/ncnn_weights.h"
#include "ninegrid/ninegrid.h"
#include "unit/ncnn_test_util.h"

namespace ninegrid {
namespace {

using ncnn_test::BinWriter;
using ncnn_test::expect_error;

const char* kAstronaut = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png";

std::string shared_models() { return std::string(NINEGRID_SHARED_DIR) + "/models/"; }

std::string cache_dir() {
  const char* cache = std::getenv("NINEGRID_CACHE");
  return cache && *cache ? cache : std::string(NINEGRID_CACHE_DIR);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Loads and runs an ncnn model; a missing operator or any other error is reported as a test failure
// with the engine's message (which names the node and operator).
std::map<std::string, Tensor> run_ncnn(const std::string& param, const std::string& bin,
                                       const std::map<std::string, Tensor>& inputs, const Options& options = {}) {
  try {
    auto model = Model::load_ncnn(param, bin.data(), bin.size(), options);
    auto session = model->create_session();
    return session->run(inputs);
  } catch (const Error& e) {
    ADD_FAILURE() << "ncnn model failed to load or run: " << e.what();
    return {};
  }
}

Tensor iota(const Shape& shape, float start = 1.f) {
  Tensor t = Tensor::empty(DataType::Float32, shape);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = start + static_cast<float>(i);
  return t;
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<float>& want, float tol = 1e-6f) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  const float* p = t.data_as<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(p[i], want[i], tol) << "at flat index " << i;
}

const Node* find_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------
// .param parsing

TEST(NcnnParam, ParsesIntsFloatsAndArrays) {
  const std::string text =
      "7767517\n"
      "3 3\n"
      "Input   data 0 1 data 0=4 1=3 2=2\n"
      "ReLU    r1   1 1 data a 0=1.5e-1\n"
      "Clip    c1   1 1 a b 0=-2 1=6.000000 -23305=3,1,2.5,-3 -23306=2,7,-8\r\n";
  ncnn::ParamFile f = ncnn::parse_param_text(text);
  ASSERT_EQ(f.layers.size(), 3u);
  EXPECT_EQ(f.blob_count, 3);
  EXPECT_EQ(f.layers[0].type, "Input");
  EXPECT_EQ(f.layers[0].params.get_int(0, 0), 4);
  EXPECT_EQ(f.layers[0].params.get_int(2, 0), 2);
  EXPECT_EQ(f.layers[0].params.get_int(11, -5), -5);  // absent: the fallback
  EXPECT_EQ(f.layers[1].bottoms, std::vector<std::string>{"data"});
  EXPECT_EQ(f.layers[1].tops, std::vector<std::string>{"a"});
  EXPECT_FLOAT_EQ(f.layers[1].params.get_float(0, 0.f), 0.15f);
  EXPECT_THROW(f.layers[1].params.get_int(0, 0), Error);  // a float where an int is expected
  const ncnn::ParamDict& p = f.layers[2].params;
  EXPECT_FLOAT_EQ(p.get_float(0, 0.f), -2.f);  // an int read as float converts
  EXPECT_FLOAT_EQ(p.get_float(1, 0.f), 6.f);
  EXPECT_EQ(p.get_floats(5), (std::vector<float>{1.f, 2.5f, -3.f}));
  EXPECT_THROW(p.get_ints(5), Error);  // holds a float
  EXPECT_EQ(p.get_ints(6), (std::vector<int>{7, -8}));
  EXPECT_EQ(f.layers[2].line, 5);
}

TEST(NcnnParam, RejectsMalformedText) {
  auto parse = [](const std::string& t) { return [t] { ncnn::parse_param_text(t); }; };
  expect_error(parse(""), {"magic"});
  expect_error(parse("7767518\n1 1\nInput data 0 1 data\n"), {"magic number 7767517"});
  expect_error(parse("7767517\n0 1\n"), {"layer count must be a positive integer"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\n"), {"file ends"});
  expect_error(parse("7767517\n1 2\nInput data 0 1 data\n"), {"declares 2 blobs", "produce 1"});
  expect_error(parse("7767517\n1 1\nInput data 0 1 data\nReLU r 1 1 data x\n"), {"unexpected text 'ReLU'"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 nope x\n"),
               {"relu1", "input blob 'nope' is not produced"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data data\n"),
               {"relu1", "output blob 'data' is already produced by layer 'data'"});
  expect_error(parse("7767517\n2 3\nInput data 0 1 data\nSplit sp 1 2 data y y\n"), {"sp", "'y' is listed twice"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 -1 data x\n"), {"relu1", "output count"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 x data x\n"), {"relu1", "output count"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data x -23300=3,1,2\n"),
               {"relu1", "declares 3 elements but has 2"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data x 32=1\n"), {"relu1", "out of range"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data x 0=1 0=2\n"), {"relu1", "given twice"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data x 0=1.2.3\n"), {"relu1", "bad value"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\nReLU relu1 1 1 data x 0=abc\n"), {"relu1", "bad value"});
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\n9abc relu1 1 1 data x\n"), {"line 4", "not a layer type"});
  // A parameter-looking token after a layer belongs to that layer, as in ncnn: here Input gets 3=4 and
  // "relu1" is read as the next layer's type.
  expect_error(parse("7767517\n2 2\nInput data 0 1 data\n3=4 relu1 1 1 data x\n"), {"output count"});
}

// ---------------------------------------------------------------------------------------------------
// .bin weights

TEST(NcnnWeights, HalfToFloatMatchesHandDecodedValues) {
  // Sign/exponent/mantissa decoded by hand: value = (-1)^s * 2^(e-15) * (1 + m/1024), subnormal m * 2^-24.
  EXPECT_EQ(ncnn::half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(ncnn::half_to_float(0xC000), -2.0f);
  EXPECT_EQ(ncnn::half_to_float(0x3555), 0.333251953125f);  // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(ncnn::half_to_float(0x7BFF), 65504.0f);         // largest finite half
  EXPECT_EQ(ncnn::half_to_float(0x0400), 6.103515625e-05f);  // smallest normal, 2^-14
  EXPECT_EQ(ncnn::half_to_float(0x0001), 5.9604644775390625e-08f);  // smallest subnormal, 2^-24
  EXPECT_EQ(ncnn::half_to_float(0x03FF), 6.097555160522461e-05f);    // largest subnormal, 1023 * 2^-24
  EXPECT_EQ(ncnn::half_to_float(0x8001), -5.9604644775390625e-08f);
  const float neg_zero = ncnn::half_to_float(0x8000);
  EXPECT_EQ(neg_zero, 0.0f);
  EXPECT_TRUE(std::signbit(neg_zero));
  EXPECT_TRUE(std::isinf(ncnn::half_to_float(0x7C00)));
  EXPECT_TRUE(std::isinf(ncnn::half_to_float(0xFC00)) && ncnn::half_to_float(0xFC00) < 0);
  EXPECT_TRUE(std::isnan(ncnn::half_to_float(0x7E00)));
}

TEST(NcnnWeights, ReadsFloat16BlobsWithPaddingThenRawFloats) {
  BinWriter w;
  w.u32(0x01306B47);
  w.u16(0x3C00);  // 1
  w.u16(0xC000);  // -2
  w.u16(0x3555);  // 0.333251953125
  w.pad4();       // 6 bytes of data padded to 8
  w.f32(0.5f);    // a "type 1" bias right after the padding
  w.f32(-7.25f);
  ASSERT_EQ(w.bytes.size(), 4u + 8u + 8u);
  ncnn::WeightReader r(w.bytes.data(), w.bytes.size());
  EXPECT_EQ(r.load(3, 0, "conv"), (std::vector<float>{1.f, -2.f, 0.333251953125f}));
  EXPECT_EQ(r.offset(), 12u);
  EXPECT_EQ(r.load(2, 1, "conv"), (std::vector<float>{0.5f, -7.25f}));
  EXPECT_EQ(r.offset(), w.bytes.size());
}

TEST(NcnnWeights, ReadsRawScaledAndLookupTableBlobs) {
  BinWriter w;
  w.u32(0);  // raw float32
  w.f32(1.5f);
  w.f32(-3.f);
  w.u32(0x0002C056);  // raw float32 too
  w.f32(4.f);
  w.u32(0x00000101);  // any other tag: 256-entry table, then uint8 indices padded to 4 bytes
  for (int i = 0; i < 256; ++i) w.f32(static_cast<float>(i) * 0.5f - 10.f);
  w.u8(0);
  w.u8(255);
  w.u8(20);
  w.pad4();
  w.f32(9.f);
  ncnn::WeightReader r(w.bytes.data(), w.bytes.size());
  EXPECT_EQ(r.load(2, 0, "a"), (std::vector<float>{1.5f, -3.f}));
  EXPECT_EQ(r.load(1, 0, "b"), (std::vector<float>{4.f}));
  EXPECT_EQ(r.load(3, 0, "c"), (std::vector<float>{-10.f, 117.5f, 0.f}));  // table[0], [255], [20]
  EXPECT_EQ(r.load(1, 1, "d"), (std::vector<float>{9.f}));
}

TEST(NcnnWeights, RefusesInt8AndTruncation) {
  BinWriter w;
  w.u32(0x000D4B38);
  w.u32(0);
  ncnn::WeightReader r(w.bytes.data(), w.bytes.size());
  expect_error([&] { r.load(4, 0, "q"); }, {"int8"});

  BinWriter h;
  h.u32(0x01306B47);
  h.u16(0x3C00);  // 1 of 2 halves, and no padding
  ncnn::WeightReader rh(h.bytes.data(), h.bytes.size());
  expect_error([&] { rh.load(2, 0, "conv7"); }, {"weights file is truncated at layer 'conv7'"});
  ncnn::WeightReader rf(h.bytes.data(), 2);
  expect_error([&] { rf.load(1, 0, "conv8"); }, {"truncated at layer 'conv8'"});
  ncnn::WeightReader empty(nullptr, 0);
  expect_error([&] { empty.load(1, 1, "bias9"); }, {"truncated at layer 'bias9'"});
  // A count no file could hold is reported as truncation, without trying to allocate it.
  ncnn::WeightReader big(h.bytes.data(), h.bytes.size());
  expect_error([&] { big.load(int64_t(1) << 50, 1, "huge"); }, {"truncated at layer 'huge'"});
}

// ---------------------------------------------------------------------------------------------------
// Layer mapping

TEST(NcnnImport, MapsConvolutionWithFloat16WeightsOntoConv) {
  const std::string param =
      "7767517\n3 3\n"
      "Input data 0 1 data 0=5 1=4 2=1\n"
      "Convolution conv 1 1 data c 0=2 1=3 11=1 3=2 13=1 4=1 15=2 14=0 16=1 5=1 6=6 9=2 -23310=1,1.000000e-01\n"
      "ReLU relu 1 1 c out\n";
  BinWriter w;
  w.u32(0x01306B47);
  const uint16_t halves[6] = {0x3C00, 0xC000, 0x3555, 0x0000, 0x3800, 0xBC00};  // 1 -2 0.3333 0 0.5 -1
  for (uint16_t v : halves) w.u16(v);
  w.pad4();
  w.raw({0.25f, -0.75f});
  Graph g = import_ncnn(param, w.bytes.data(), w.bytes.size());
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].shape, (Shape{1, 1, 4, 5}));
  const Node* conv = find_node(g, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op_type, "Conv");
  EXPECT_EQ(conv->attrs.get_ints("kernel_shape"), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(conv->attrs.get_ints("strides"), (std::vector<int64_t>{1, 2}));
  // ncnn's left 1, right 2, top 0, bottom 1 in ONNX order: top, left, bottom, right.
  EXPECT_EQ(conv->attrs.get_ints("pads"), (std::vector<int64_t>{0, 1, 1, 2}));
  ASSERT_EQ(conv->inputs.size(), 3u);
  const Tensor& wt = g.values[conv->inputs[1]].constant;
  ASSERT_EQ(wt.shape(), (Shape{2, 1, 1, 3}));
  const float* wp = wt.data_as<float>();
  EXPECT_EQ(std::vector<float>(wp, wp + 6), (std::vector<float>{1.f, -2.f, 0.333251953125f, 0.f, 0.5f, -1.f}));
  const Tensor& bias = g.values[conv->inputs[2]].constant;
  EXPECT_EQ(std::vector<float>(bias.data_as<float>(), bias.data_as<float>() + 2), (std::vector<float>{0.25f, -0.75f}));
  const Node* act = find_node(g, "conv/activation");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->op_type, "LeakyRelu");
  EXPECT_FLOAT_EQ(act->attrs.get_float("alpha", 0.f), 0.1f);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "out");
}

TEST(NcnnImport, UnsupportedLayerNamesTheLayer) {
  const std::string param = "7767517\n2 2\nInput data 0 1 data\nFrobnicate frob1 1 1 data out\n";
  expect_error([&] { import_ncnn(param, nullptr, 0); }, {"unsupported ncnn layer type 'Frobnicate' (layer 'frob1')"});
  const std::string bad_conv = "7767517\n2 2\nInput data 0 1 data\nConvolution conv9 1 1 data out 0=2 1=3 6=7\n";
  expect_error([&] { import_ncnn(bad_conv, nullptr, 0); }, {"conv9", "weight_data_size"});
  const std::string int8 = "7767517\n2 2\nInput data 0 1 data\nConvolution convq 1 1 data out 0=1 1=1 6=1 8=3\n";
  expect_error([&] { import_ncnn(int8, nullptr, 0); }, {"convq", "unsupported int8_scale_term"});
  const std::string old_softmax = "7767517\n2 2\nInput data 0 1 data\nSoftmax sm 1 1 data out 0=1\n";
  expect_error([&] { import_ncnn(old_softmax, nullptr, 0); }, {"sm", "regenerate"});
  const std::string missing_weights = "7767517\n2 2\nInput data 0 1 data\nConvolution c1 1 1 data out 0=1 1=1 6=1\n";
  expect_error([&] { import_ncnn(missing_weights, nullptr, 0); }, {"weights file is truncated at layer 'c1'"});
}

TEST(NcnnImport, SplitOutputsAliasAndUnreadBlobsBecomeOutputs) {
  const std::string param =
      "7767517\n4 6\n"
      "Input data 0 1 data 0=2 1=1 2=1\n"
      "Split sp 1 3 data s0 s1 s2\n"
      "ReLU r 1 1 s0 a\n"
      "Sigmoid g 1 1 s1 b\n";
  Graph g = import_ncnn(param, nullptr, 0);
  // No node for the Split: its outputs are the input value; s2 is read by nobody, so it is an output
  // (through an Identity that keeps its name), after a and b in production order.
  for (const Node& n : g.nodes) EXPECT_NE(n.op_type, "Split");
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "s2");
  EXPECT_EQ(g.values[g.outputs[1]].name, "a");
  EXPECT_EQ(g.values[g.outputs[2]].name, "b");
  EXPECT_EQ(find_node(g, "r")->inputs[0], g.inputs[0]);
  EXPECT_EQ(find_node(g, "g")->inputs[0], g.inputs[0]);
}

// ---------------------------------------------------------------------------------------------------
// Small models run end to end (values computed by hand)

TEST(NcnnRun, ConvolutionWithBiasReluAndPadValue) {
  // 3x3 input 1..9, a 3x3 kernel of ones with bias -10, pad 1, fused ReLU:
  // each output = sum of the 3x3 neighbourhood - 10.  Corner: 1+2+4+5 = 12 -> 2, centre 45 -> 35.
  BinWriter w;
  w.raw_blob(std::vector<float>(9, 1.f));
  w.raw({-10.f});
  const std::string param =
      "7767517\n2 2\nInput data 0 1 data 0=3 1=3 2=1\n"
      "Convolution conv 1 1 data out 0=1 1=3 4=1 5=1 6=9 9=1\n";
  auto out = run_ncnn(param, w.bytes, {{"data", iota({1, 1, 3, 3})}});
  expect_values(out["out"], {1, 1, 3, 3}, {2, 11, 6, 17, 35, 23, 14, 29, 18});
  // ncnn's pad_value (param 18) = 1: the corner window now holds 5 padded ones: 12 + 5 - 10 = 7.
  const std::string padded =
      "7767517\n2 2\nInput data 0 1 data 0=3 1=3 2=1\n"
      "Convolution conv 1 1 data out 0=1 1=3 4=1 5=1 6=9 9=1 18=1.0\n";
  auto out2 = run_ncnn(padded, w.bytes, {{"data", iota({1, 1, 3, 3})}});
  expect_values(out2["out"], {1, 1, 3, 3}, {7, 14, 11, 20, 35, 26, 19, 32, 23});
}

TEST(NcnnRun, AveragePoolingReproducesNcnnDivisors) {
  // 4x4 input 1..16, 3x3 window, stride 2, "full" padding: a tail column/row makes 2x2 outputs.
  //   excluding padding: (1+2+3+5+6+7+9+10+11)/9 = 6, (3+4+7+8+11+12)/6 = 7.5, (9+10+11+13+14+15)/6 = 12,
  //                      (11+12+15+16)/4 = 13.5
  //   including it (ncnn divides by the whole window, tail included): 54/9, 45/9, 72/9, 54/9
  const std::string base = "7767517\n2 2\nInput data 0 1 data 0=4 1=4 2=1\nPooling pool 1 1 data out 0=1 1=3 2=2";
  auto ex = run_ncnn(base + "\n", "", {{"data", iota({1, 1, 4, 4})}});
  expect_values(ex["out"], {1, 1, 2, 2}, {6.f, 7.5f, 12.f, 13.5f});
  auto in = run_ncnn(base + " 6=1\n", "", {{"data", iota({1, 1, 4, 4})}});
  expect_values(in["out"], {1, 1, 2, 2}, {6.f, 5.f, 8.f, 6.f});
  Graph g = import_ncnn(base + "\n", nullptr, 0);
  EXPECT_EQ(find_node(g, "pool")->op_type, "ng.Pooling");
}

TEST(NcnnRun, MaxPoolingPaddingModes) {
  // 4x4 input 1..16, 3x3 window, stride 2.
  const std::string base = "7767517\n2 2\nInput data 0 1 data 0=4 1=4 2=1\nPooling pool 1 1 data out 0=0 1=3 2=2";
  // Full padding (ceil mode): windows at rows/cols {0..2, 2..4}: 11 12 15 16. ONNX MaxPool does this.
  auto full = run_ncnn(base + "\n", "", {{"data", iota({1, 1, 4, 4})}});
  expect_values(full["out"], {1, 1, 2, 2}, {11, 12, 15, 16});
  EXPECT_EQ(find_node(import_ncnn(base + "\n", nullptr, 0), "pool")->op_type, "MaxPool");
  // Valid padding: one window.
  auto valid = run_ncnn(base + " 5=1\n", "", {{"data", iota({1, 1, 4, 4})}});
  expect_values(valid["out"], {1, 1, 1, 1}, {11});
  // SAME_LOWER: total pad 1 goes before: windows at rows/cols {-1..1, 1..3}: max 6 8 14 16.
  auto lower = run_ncnn(base + " 5=3\n", "", {{"data", iota({1, 1, 4, 4})}});
  expect_values(lower["out"], {1, 1, 2, 2}, {6, 8, 14, 16});
  // Global average pooling gives ncnn's 1-D blob of channels: (1+...+16)/16 = 8.5.
  auto global = run_ncnn("7767517\n2 2\nInput data 0 1 data 0=4 1=4 2=1\nPooling pool 1 1 data out 0=1 4=1\n", "",
                         {{"data", iota({1, 1, 4, 4})}});
  expect_values(global["out"], {1, 1}, {8.5f});
}

TEST(NcnnRun, CropForms) {
  // 2-input form: crop a (2x4x5, values 0..39) to b's 2x2x3 at w offset 1, h offset 2.
  const std::string ref =
      "7767517\n3 3\nInput a 0 1 a 0=5 1=4 2=2\nInput b 0 1 b 0=3 1=2 2=2\nCrop crop 2 1 a b out 0=1 1=2\n";
  auto r = run_ncnn(ref, "", {{"a", iota({1, 2, 4, 5}, 0.f)}, {"b", iota({1, 2, 2, 3})}});
  expect_values(r["out"], {1, 2, 2, 3}, {11, 12, 13, 16, 17, 18, 31, 32, 33, 36, 37, 38});
  // numpy-style: starts 1, ends -1 on ncnn axis 0 (channels) of a 3x2x2 blob keeps channel 1 only.
  const std::string slice =
      "7767517\n2 2\nInput a 0 1 a 0=2 1=2 2=3\nCrop crop 1 1 a out -23309=1,1 -23310=1,-1 -23311=1,0\n";
  auto s = run_ncnn(slice, "", {{"a", iota({1, 3, 2, 2}, 0.f)}});
  expect_values(s["out"], {1, 1, 2, 2}, {4, 5, 6, 7});
  // offsets form: w offset 1, out w 2 on a 1x2x4 blob.
  const std::string offs = "7767517\n2 2\nInput a 0 1 a 0=4 1=2 2=1\nCrop crop 1 1 a out 0=1 3=2\n";
  auto o = run_ncnn(offs, "", {{"a", iota({1, 1, 2, 4}, 0.f)}});
  expect_values(o["out"], {1, 1, 2, 2}, {1, 2, 5, 6});
}

TEST(NcnnRun, ReshapeUsesNcnnDimensionNames) {
  // mnet.25's pattern: (c=4, h=2, w=3) -> 0=0 1=-1 2=2 -> (c=2, h=4, w=3), data order unchanged.
  const std::string p = "7767517\n2 2\nInput a 0 1 a 0=3 1=2 2=4\nReshape rs 1 1 a out 0=0 1=-1 2=2\n";
  Tensor x = iota({1, 4, 2, 3}, 0.f);
  auto r = run_ncnn(p, "", {{"a", x}});
  std::vector<float> same(24);
  for (int i = 0; i < 24; ++i) same[i] = static_cast<float>(i);
  expect_values(r["out"], {1, 2, 4, 3}, same);
  // permute=1 flattens channel-last: out[(y*3 + x)*2 + c] = in[c][y][x] for a (c=2, h=2, w=3) blob.
  const std::string perm = "7767517\n2 2\nInput a 0 1 a 0=3 1=2 2=2\nReshape rs 1 1 a out 0=-1 3=1\n";
  auto q = run_ncnn(perm, "", {{"a", iota({1, 2, 2, 3}, 0.f)}});
  expect_values(q["out"], {1, 12}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11});
  // A reshape that does not preserve the element count names the node.
  const std::string bad = "7767517\n2 2\nInput a 0 1 a 0=3 1=2 2=4\nReshape rs 1 1 a out 0=5 1=-1 2=2\n";
  expect_error([&] { Model::load_ncnn(bad, nullptr, 0); }, {"rs"});
}

TEST(NcnnRun, InterpNearestAndBilinear) {
  // Nearest to a fixed 3x3 from 2x2: source index = int(d * 2/3) -> rows/cols {0, 0, 1}.
  const std::string nearest = "7767517\n2 2\nInput a 0 1 a 0=2 1=2 2=1\nInterp up 1 1 a out 0=1 3=3 4=3\n";
  auto n = run_ncnn(nearest, "", {{"a", iota({1, 1, 2, 2})}});
  expect_values(n["out"], {1, 1, 3, 3}, {1, 1, 2, 1, 1, 2, 3, 3, 4});
  // Bilinear 2x2 -> 4x4 with half-pixel centres (PyTorch's align_corners=False gives the same):
  // row weights (1,0) (.75,.25) (.25,.75) (0,1) on [1 2; 3 4].
  const std::string bilinear = "7767517\n2 2\nInput a 0 1 a 0=2 1=2 2=1\nInterp up 1 1 a out 0=2 3=4 4=4\n";
  auto b = run_ncnn(bilinear, "", {{"a", iota({1, 1, 2, 2})}});
  expect_values(b["out"], {1, 1, 4, 4},
                {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
  // Bicubic 4x4 (1..16) -> 6x6: values from torch.nn.functional.interpolate(mode='bicubic',
  // align_corners=False), whose Keys kernel (A = -0.75) and edge clamping ncnn shares.
  const std::string bicubic = "7767517\n2 2\nInput a 0 1 a 0=4 1=4 2=1\nInterp up 1 1 a out 0=3 3=6 4=6\n";
  auto c = run_ncnn(bicubic, "", {{"a", iota({1, 1, 4, 4})}});
  // The 1-D profile of [1 2 3 4] -> 6 from PyTorch; the 2-D result of this separable ramp is
  // 4 * (row[y] - 1) + row[x].
  const float row[6] = {0.9131946563720703f, 1.40625f, 2.2129628658294678f, 2.7870371341705322f, 3.59375f,
                        4.08680534362793f};
  std::vector<float> want;
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) want.push_back(4.f * (row[y] - 1.f) + row[x]);
  expect_values(c["out"], {1, 1, 6, 6}, want, 1e-5f);
}

TEST(NcnnRun, BinaryOpScalarReversedAndBroadcast) {
  const std::string rsub = "7767517\n2 2\nInput a 0 1 a 0=3 1=1 2=1\nBinaryOp op 1 1 a out 0=7 1=1 2=10.0\n";
  auto r = run_ncnn(rsub, "", {{"a", iota({1, 1, 1, 3})}});
  expect_values(r["out"], {1, 1, 1, 3}, {9, 8, 7});
  // (c=2,h=1,w=1) * (c=2,h=2,w=1): numpy broadcasting after the batch dimension.
  const std::string mul =
      "7767517\n3 3\nInput a 0 1 a 0=1 1=1 2=2\nInput b 0 1 b 0=1 1=2 2=2\nBinaryOp op 2 1 a b out 0=2\n";
  auto m = run_ncnn(mul, "", {{"a", iota({1, 2, 1, 1})}, {"b", iota({1, 2, 2, 1})}});
  expect_values(m["out"], {1, 2, 2, 1}, {1, 2, 6, 8});
  // ncnn aligns a 1-D blob with the outermost dimension when the sizes agree (one value per channel):
  // (c=2,h=1,w=3) [1..6] - [10 20] = [-9 -8 -7 | -16 -15 -14] ...
  const std::string per_channel =
      "7767517\n3 3\nInput a 0 1 a 0=3 1=1 2=2\nInput b 0 1 b 0=2\nBinaryOp op 2 1 a b out 0=1\n";
  Tensor tens = Tensor::from_vector<float>(DataType::Float32, {1, 2}, {10, 20});
  auto pc = run_ncnn(per_channel, "", {{"a", iota({1, 2, 1, 3})}, {"b", tens}});
  expect_values(pc["out"], {1, 2, 1, 3}, {-9, -8, -7, -16, -15, -14});
  // ... and with the innermost one otherwise: (c=3,h=1,w=2) [1..6] - [10 20] per column; with the
  // 1-D blob first and rsub (b - a) the same result.
  const std::string per_column =
      "7767517\n3 3\nInput a 0 1 a 0=2 1=1 2=3\nInput b 0 1 b 0=2\nBinaryOp op 2 1 b a out 0=7\n";
  auto pw = run_ncnn(per_column, "", {{"a", iota({1, 3, 1, 2})}, {"b", tens}});
  expect_values(pw["out"], {1, 3, 1, 2}, {-9, -18, -7, -16, -5, -14});
}

TEST(NcnnRun, InnerProductOnVectorsAndImages) {
  // W = [[1 2 3] [4 5 6]], bias [0.5 -1]; x = [1 2 3]: y = [14.5, 31].
  BinWriter w;
  w.raw_blob({1, 2, 3, 4, 5, 6});
  w.raw({0.5f, -1.f});
  const std::string vec = "7767517\n2 2\nInput a 0 1 a 0=3\nInnerProduct fc 1 1 a out 0=2 1=1 2=6\n";
  auto v = run_ncnn(vec, w.bytes, {{"a", iota({1, 3})}});
  expect_values(v["out"], {1, 2}, {14.5f, 31.f});
  // A (c=3,h=1,w=1) blob is flattened first; activation 1 (ReLU) is fused: [-14.5+... ] -> relu.
  BinWriter n;
  n.raw_blob({-1, -2, -3, 4, 5, 6});
  n.raw({0.f, 0.f});
  const std::string img = "7767517\n2 2\nInput a 0 1 a 0=1 1=1 2=3\nInnerProduct fc 1 1 a out 0=2 1=1 2=6 9=1\n";
  auto i = run_ncnn(img, n.bytes, {{"a", iota({1, 3, 1, 1})}});
  expect_values(i["out"], {1, 2}, {0.f, 32.f});
}

TEST(NcnnRun, PerChannelLayers) {
  // Input (c=2, h=1, w=2): channel 0 = [1 5], channel 1 = [2 3].
  Tensor x = Tensor::from_vector<float>(DataType::Float32, {1, 2, 1, 2}, {1, 5, 2, 3});
  // BatchNorm: slope [1 2], mean [1 0], var [3 0], bias [0 1], eps 1:
  //   c0: (x - 1) / 2 -> [0 2];  c1: 2x / 1 + 1 -> [5 7].
  BinWriter bn;
  bn.raw({1, 2, 1, 0, 3, 0, 0, 1});
  auto b = run_ncnn("7767517\n2 2\nInput a 0 1 a 0=2 1=1 2=2\nBatchNorm bn 1 1 a out 0=2 1=1.0\n", bn.bytes,
                    {{"a", x}});
  expect_values(b["out"], {1, 2, 1, 2}, {0, 2, 5, 7});
  // Scale [2 -1] with bias [1 0]: c0 [3 11], c1 [-2 -3].
  BinWriter sc;
  sc.raw({2, -1, 1, 0});
  auto s = run_ncnn("7767517\n2 2\nInput a 0 1 a 0=2 1=1 2=2\nScale sc 1 1 a out 0=2 1=1\n", sc.bytes, {{"a", x}});
  expect_values(s["out"], {1, 2, 1, 2}, {3, 11, -2, -3});
  // PReLU slopes [0.5 2] on [-2 4 | -3 1]: [-1 4 | -6 1].
  BinWriter pr;
  pr.raw({0.5f, 2.f});
  Tensor y = Tensor::from_vector<float>(DataType::Float32, {1, 2, 1, 2}, {-2, 4, -3, 1});
  auto p = run_ncnn("7767517\n2 2\nInput a 0 1 a 0=2 1=1 2=2\nPReLU pr 1 1 a out 0=2\n", pr.bytes, {{"a", y}});
  expect_values(p["out"], {1, 2, 1, 2}, {-1, 4, -6, 1});
}

TEST(NcnnRun, ActivationsEltwiseConcatSoftmax) {
  Tensor x = Tensor::from_vector<float>(DataType::Float32, {1, 1, 1, 4}, {-4, -1, 0.5f, 3});
  const std::string in = "7767517\n2 2\nInput a 0 1 a 0=4 1=1 2=1\n";
  expect_values(run_ncnn(in + "Clip c 1 1 a out 0=-2.0 1=1.0\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {-2, -1, 0.5f, 1});
  expect_values(run_ncnn(in + "AbsVal c 1 1 a out\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {4, 1, 0.5f, 3});
  // HardSigmoid with ncnn's defaults alpha 0.2, beta 0.5: clamp(0.2x + 0.5, 0, 1).
  expect_values(run_ncnn(in + "HardSigmoid c 1 1 a out\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {0, 0.3f, 0.6f, 1});
  // HardSwish, same defaults: x * clamp(0.2x + 0.5, 0, 1).
  expect_values(run_ncnn(in + "HardSwish c 1 1 a out\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {0, -0.3f, 0.3f, 3});
  expect_values(run_ncnn(in + "ReLU c 1 1 a out 0=0.1\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {-0.4f, -0.1f, 0.5f, 3});
  expect_values(run_ncnn(in + "Dropout c 1 1 a out 0=2.0\n", "", {{"a", x}})["out"], {1, 1, 1, 4}, {-8, -2, 1, 6});
  expect_values(run_ncnn(in + "Sigmoid c 1 1 a out\n", "", {{"a", x}})["out"], {1, 1, 1, 4},
                {0.01798621f, 0.26894142f, 0.62245933f, 0.95257413f});
  // Eltwise sum with coefficients [2 -1], product, max of x and 1..4.
  const std::string two = "7767517\n3 3\nInput a 0 1 a 0=4 1=1 2=1\nInput b 0 1 b 0=4 1=1 2=1\n";
  Tensor b = iota({1, 1, 1, 4});
  expect_values(run_ncnn(two + "Eltwise e 2 1 a b out 0=1 -23301=2,2.0,-1.0\n", "", {{"a", x}, {"b", b}})["out"],
                {1, 1, 1, 4}, {-9, -4, -2, 2});
  expect_values(run_ncnn(two + "Eltwise e 2 1 a b out 0=0\n", "", {{"a", x}, {"b", b}})["out"], {1, 1, 1, 4},
                {-4, -2, 1.5f, 12});
  expect_values(run_ncnn(two + "Eltwise e 2 1 a b out 0=2\n", "", {{"a", x}, {"b", b}})["out"], {1, 1, 1, 4},
                {1, 2, 3, 4});
  // Concat on ncnn axis 2 (w).
  expect_values(run_ncnn(two + "Concat c 2 1 a b out 0=2\n", "", {{"a", x}, {"b", b}})["out"], {1, 1, 1, 8},
                {-4, -1, 0.5f, 3, 1, 2, 3, 4});
  // Softmax over channels of a (c=2,h=1,w=1) blob holding [0, ln 3]: [0.25 0.75].
  Tensor lg = Tensor::from_vector<float>(DataType::Float32, {1, 2, 1, 1}, {0.f, std::log(3.f)});
  expect_values(run_ncnn("7767517\n2 2\nInput a 0 1 a 0=1 1=1 2=2\nSoftmax s 1 1 a out\n", "", {{"a", lg}})["out"],
                {1, 2, 1, 1}, {0.25f, 0.75f});
}

TEST(NcnnRun, PermuteFlattenPadding) {
  // (c=1, h=2, w=3) = [[0 1 2] [3 4 5]]. Permute order 1 ("h w c": w-major) transposes h and w.
  const std::string in = "7767517\n2 2\nInput a 0 1 a 0=3 1=2 2=1\n";
  Tensor x = iota({1, 1, 2, 3}, 0.f);
  expect_values(run_ncnn(in + "Permute p 1 1 a out 0=1\n", "", {{"a", x}})["out"], {1, 1, 3, 2}, {0, 3, 1, 4, 2, 5});
  expect_values(run_ncnn(in + "Flatten f 1 1 a out\n", "", {{"a", x}})["out"], {1, 6}, {0, 1, 2, 3, 4, 5});
  // Pad 1 row on top and 1 column on the left with the value 9.
  expect_values(run_ncnn(in + "Padding p 1 1 a out 0=1 2=1 5=9.0\n", "", {{"a", x}})["out"], {1, 1, 3, 4},
                {9, 9, 9, 9, 9, 0, 1, 2, 9, 3, 4, 5});
}

TEST(NcnnRun, DeconvolutionScattersWithoutFlipping) {
  // One input pixel of value 1 through a 2x2 kernel [1 2; 3 4]: ConvTranspose copies the kernel as is.
  BinWriter w;
  w.raw_blob({1, 2, 3, 4});
  auto k = run_ncnn("7767517\n2 2\nInput a 0 1 a 0=1 1=1 2=1\nDeconvolution d 1 1 a out 0=1 1=2 6=4\n", w.bytes,
                    {{"a", iota({1, 1, 1, 1})}});
  expect_values(k["out"], {1, 1, 2, 2}, {1, 2, 3, 4});
  // 2 -> 2 channels, 1x1 kernel: ncnn stores [out][in] = [[1 2] [3 4]]: out0 = 1*1 + 2*10, out1 = 3 + 40.
  BinWriter m;
  m.raw_blob({1, 2, 3, 4});
  m.raw({0.5f, 0.f});
  Tensor x = Tensor::from_vector<float>(DataType::Float32, {1, 2, 1, 1}, {1, 10});
  auto c = run_ncnn("7767517\n2 2\nInput a 0 1 a 0=1 1=1 2=2\nDeconvolution d 1 1 a out 0=2 1=1 5=1 6=4\n",
                    m.bytes, {{"a", x}});
  expect_values(c["out"], {1, 2, 1, 1}, {21.5f, 43.f});
}

// ---------------------------------------------------------------------------------------------------
// Robustness: truncated and garbled real files give an Error or a model, never a crash (also run under
// AddressSanitizer and UndefinedBehaviorSanitizer in CI).

// Imports, and when that works builds the model with a small input shape (shape inference of every
// operator); returns whether it loaded.
bool try_load(const std::string& param, const std::string& bin) {
  try {
    Graph g = import_ncnn(param, bin.data(), bin.size());
    Options o;
    for (int v : g.inputs) o.input_shapes[g.values[v].name] = {1, 3, 32, 32};
    Model::load_ncnn(param, bin.data(), bin.size(), o);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(NcnnRobustness, TruncatedParamAndBin) {
  const std::string param = read_file(shared_models() + "mnet.25-opt.param");
  const std::string bin = read_file(shared_models() + "mnet.25-opt.bin");
  ASSERT_FALSE(param.empty());
  ASSERT_FALSE(bin.empty());
  // Every cut of the param text before its last layer line loses a declared layer: always an error.
  const size_t last_line = param.rfind('\n', param.size() - 2);
  for (size_t cut = 0; cut < last_line; cut += 37) EXPECT_FALSE(try_load(param.substr(0, cut), bin)) << "cut " << cut;
  // Any cut of the weights is reported as truncation, at the layer whose read runs past the end.
  for (size_t cut = 0; cut < bin.size(); cut += 4099)
    expect_error([&] { import_ncnn(param, bin.data(), cut); }, {"weights file is truncated at layer '"});
  // The last byte belongs to the last layer's bias; extra bytes at the end are ignored.
  expect_error([&] { import_ncnn(param, bin.data(), bin.size() - 1); },
               {"truncated at layer 'face_rpn_landmark_pred_stride8'"});
  std::string longer = bin + std::string(64, '\x5a');
  EXPECT_NO_THROW(import_ncnn(param, longer.data(), longer.size()));
}

TEST(NcnnRobustness, RandomByteFlips) {
  const std::string param = read_file(shared_models() + "mnet.25-opt.param");
  const std::string bin = read_file(shared_models() + "mnet.25-opt.bin");
  int loaded = 0, refused = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    std::string p = param;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      const size_t at = rng() % p.size();
      // Half the flips are printable (digits and separators break numbers and counts subtly).
      p[at] = (rng() & 1) ? static_cast<char>(rng() % 256) : "0123456789=-,. \n"[rng() % 16];
    }
    (try_load(p, bin) ? loaded : refused)++;
  }
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed * 7919u);
    std::string b = bin;
    for (int i = 0; i < 16; ++i) b[rng() % b.size()] = static_cast<char>(rng() % 256);
    (try_load(param, b) ? loaded : refused)++;
  }
  // Both outcomes occur; what matters is that every case ended in one of them.
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(loaded + refused, 340);
}

// ---------------------------------------------------------------------------------------------------
// Whole models

struct Rgb {
  int w = 0, h = 0;
  std::vector<uint8_t> pixels;  // HWC
};

Rgb load_astronaut() {
  Rgb img;
  int n = 0;
  unsigned char* data = stbi_load(kAstronaut, &img.w, &img.h, &n, 3);
  if (!data) return img;
  img.pixels.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

// |a - b| <= 1e-4 * max(1, max |golden|) elementwise: 1e-4 relative to the output's scale.
void expect_close_to_golden(const Tensor& got, const Tensor& golden, const std::string& name) {
  ASSERT_TRUE(got.defined()) << name << " was not produced";
  Shape want{1};
  want.insert(want.end(), golden.shape().begin(), golden.shape().end());
  ASSERT_EQ(got.shape(), want) << name;
  const float* a = got.data_as<float>();
  const float* g = golden.data_as<float>();
  float scale = 1.f;
  for (int64_t i = 0; i < golden.numel(); ++i) scale = std::max(scale, std::fabs(g[i]));
  const float tol = 1e-4f * scale;
  int64_t bad = 0;
  float worst = 0.f;
  for (int64_t i = 0; i < golden.numel(); ++i) {
    const float d = std::fabs(a[i] - g[i]);
    worst = std::max(worst, d);
    if (!(d <= tol)) ++bad;
  }
  EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << golden.numel() << " values differ by more than " << tol
                    << " (worst " << worst << ")";
}

TEST(NcnnModels, RetinaFaceMobileNetMatchesNcnnGolden) {
  Rgb img = load_astronaut();
  ASSERT_EQ(img.w, 512) << "cannot read " << kAstronaut;
  ASSERT_EQ(img.h, 512);
  // HWC uint8 RGB -> 1x3x512x512 float 0..255, no normalisation.
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, 512, 512});
  float* xp = x.data_as<float>();
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 512 * 512; ++i) xp[c * 512 * 512 + i] = img.pixels[static_cast<size_t>(i) * 3 + c];

  std::map<std::string, Tensor> out;
  try {
    auto model = Model::load(shared_models() + "mnet.25-opt.param");
    ASSERT_EQ(model->outputs().size(), 9u);
    out = model->create_session()->run({{"data", x}});
  } catch (const Error& e) {
    FAIL() << "mnet.25 failed to load or run (a missing operator is named here): " << e.what();
  }
  const char* names[] = {"face_rpn_cls_prob_reshape_stride32", "face_rpn_bbox_pred_stride32",
                         "face_rpn_landmark_pred_stride32",    "face_rpn_cls_prob_reshape_stride16",
                         "face_rpn_bbox_pred_stride16",        "face_rpn_landmark_pred_stride16",
                         "face_rpn_cls_prob_reshape_stride8",  "face_rpn_bbox_pred_stride8",
                         "face_rpn_landmark_pred_stride8"};
  for (const char* name : names) {
    Tensor golden = read_npy(shared_models() + "mnet.25-golden/" + name + ".npy");
    expect_close_to_golden(out[name], golden, name);
  }
  // The face: the largest face probability at stride 16 (channels 2 and 3 are the two anchors' face
  // scores) is 0.987 at cell (x 13, y 6), i.e. pixel (208, 96).
  const Tensor& cls = out["face_rpn_cls_prob_reshape_stride16"];
  ASSERT_EQ(cls.shape(), (Shape{1, 4, 32, 32}));
  const float* p = cls.data_as<float>();
  float best = -1.f;
  int best_x = -1, best_y = -1;
  for (int c = 2; c < 4; ++c)
    for (int y = 0; y < 32; ++y)
      for (int xx = 0; xx < 32; ++xx)
        if (p[(c * 32 + y) * 32 + xx] > best) best = p[(c * 32 + y) * 32 + xx], best_x = xx * 16, best_y = y * 16;
  EXPECT_NEAR(best, 0.987f, 1e-3f);
  EXPECT_EQ(best_x, 208);
  EXPECT_EQ(best_y, 96);
}

// SqueezeNet's input: the centre 227x227 of the astronaut, BGR, mean (104, 117, 123) subtracted.
Tensor squeezenet_input(const Rgb& img) {
  const int off = (512 - 227) / 2;
  const float mean[3] = {104.f, 117.f, 123.f};
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, 227, 227});
  float* xp = x.data_as<float>();
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 227; ++y)
      for (int xx = 0; xx < 227; ++xx) {
        const size_t src = (static_cast<size_t>(y + off) * 512 + (xx + off)) * 3 + (2 - c);  // BGR
        xp[(c * 227 + y) * 227 + xx] = img.pixels[src] - mean[c];
      }
  return x;
}

TEST(NcnnModels, SqueezeNetGivesAProbabilityVector) {
  Rgb img = load_astronaut();
  ASSERT_EQ(img.w, 512) << "cannot read " << kAstronaut;
  std::map<std::string, Tensor> out;
  try {
    auto model = Model::load(shared_models() + "squeezenet_v1.1.param");
    ASSERT_EQ(model->inputs().size(), 1u);
    EXPECT_EQ(model->inputs()[0].shape, (Shape{1, 3, 227, 227}));
    out = model->create_session()->run({{"data", squeezenet_input(img)}});
  } catch (const Error& e) {
    FAIL() << "squeezenet_v1.1 failed to load or run (a missing operator is named here): " << e.what();
  }
  const Tensor& prob = out["prob"];
  ASSERT_EQ(prob.shape(), (Shape{1, 1000}));
  double sum = 0;
  for (int i = 0; i < 1000; ++i) {
    const float v = prob.data_as<float>()[i];
    EXPECT_GE(v, 0.f);
    EXPECT_LE(v, 1.f);
    sum += v;
  }
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

TEST(NcnnModels, SqueezeNetMatchesIndependentTorchReference) {
  const std::string dir = cache_dir() + "/models/ncnn_ref/squeezenet_v1.1/";
  if (!file_exists(dir + "prob.npy")) {
    // Produce it: a PyTorch implementation of the same network with its own .param/.bin reader.
    const std::string cmd = "/usr/bin/python3 " + std::string(NINEGRID_SOURCE_DIR) +
                            "/scripts/ncnn_reference.py --shared " + NINEGRID_SHARED_DIR + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0 || !file_exists(dir + "prob.npy"))
      GTEST_SKIP() << "no reference at " << dir << " and scripts/ncnn_reference.py could not make one "
                   << "(needs /usr/bin/python3 with numpy, torch, skimage)";
  }
  Tensor ref_in = read_npy(dir + "input.npy");
  Tensor ref_prob = read_npy(dir + "prob.npy");
  // The reference saw the same input as our preprocessing makes.
  Rgb img = load_astronaut();
  ASSERT_EQ(img.w, 512);
  Tensor x = squeezenet_input(img);
  ASSERT_EQ(ref_in.shape(), x.shape());
  EXPECT_EQ(std::memcmp(ref_in.data(), x.data(), x.nbytes()), 0);
  std::map<std::string, Tensor> out;
  try {
    out = Model::load(shared_models() + "squeezenet_v1.1.param")->create_session()->run({{"data", x}});
  } catch (const Error& e) {
    FAIL() << "squeezenet_v1.1 failed to load or run: " << e.what();
  }
  Tensor golden = ref_prob.reshaped({1000});
  expect_close_to_golden(out["prob"], golden, "prob");
}

}  // namespace
}  // namespace ninegrid
