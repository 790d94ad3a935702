// Hostile numbers in a model: one edited pad, scale or shape must not ask for gigabytes (or overflow a
// size computation). The resource budget in Options is checked when the plan is made, before any
// allocation, with an error that names the node and the size it would need.
#include <gtest/gtest.h>

#include <string>

#include "graph_builder.h"
#include "ninegrid/ninegrid.h"
#include "onnx_proto_writer.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;

std::shared_ptr<Model> model_of(const Graph& g, const Options& o = {}) {
  return std::make_shared<Model>(std::make_unique<ModelImpl>(g, o, "onnx"));
}

// The Error message from loading the graph and planning a session for it.
std::string load_error(const Graph& g, const Options& o = {}) {
  try {
    model_of(g, o)->create_session();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

// A 3x3 conv on a small image whose pads someone edited to 65535: the output would be 131k x 131k
// pixels (about 550 GB). Before the budget this allocated until the machine ran out of memory.
GraphBuilder huge_pad_conv(int64_t pad) {
  GraphBuilder b;
  b.input("x", {1, 8, 16, 16});
  b.constant("w", {8, 8, 3, 3});
  Node& conv = b.node("Conv", {"x", "w"}, {"y"});
  conv.name = "edited_conv";
  conv.attrs.set("pads", Attribute::of_ints({pad, pad, pad, pad}));
  b.output("y");
  return b;
}

TEST(ResourceBudget, AHugePadIsRefusedNamingTheNodeAndTheSize) {
  for (int64_t pad : {int64_t(65535), int64_t(1000000)}) {
    for (int level : {0, 2}) {
      Options o;
      o.opt_level = level;
      const std::string e = load_error(huge_pad_conv(pad).g, o);
      expect_contains(e, "edited_conv");
      expect_contains(e, "GiB");
      expect_contains(e, "max_tensor_bytes");
    }
  }
}

TEST(ResourceBudget, TheLimitCanBeRaisedOrRemoved) {
  // 1 x 8 x 18 x 18 floats = 10 KiB: refused under a 4 KiB limit, accepted without one.
  Options o;
  o.max_tensor_bytes = 4096;
  expect_contains(load_error(huge_pad_conv(1).g, o), "edited_conv");
  o.max_tensor_bytes = 0;
  EXPECT_EQ(load_error(huge_pad_conv(1).g, o), "");
}

TEST(ResourceBudget, TheArenaLimitNamesItsLargestTensor) {
  GraphBuilder b;
  b.input("x", {1, 8, 64, 64});
  b.node("Relu", {"x"}, {"a"}).name = "first";
  b.node("Sigmoid", {"a"}, {"b"}).name = "second";
  b.node("Relu", {"b"}, {"y"}).name = "third";
  b.output("y");
  Options o;
  o.max_arena_bytes = 64 * 1024;  // the two 128 KiB intermediates need 256 KiB
  const std::string e = load_error(b.g, o);
  expect_contains(e, "working memory");
  expect_contains(e, "max_arena_bytes");
  o.max_arena_bytes = 1 << 20;
  EXPECT_EQ(load_error(b.g, o), "");
}

TEST(ResourceBudget, AnUpsamplingScaleOf3000IsRefused) {
  GraphBuilder b;
  b.input("x", {1, 3, 64, 64});
  Tensor scales = Tensor::from_vector<float>(DataType::Float32, {4}, {1.f, 1.f, 3000.f, 3000.f});
  const int s = b.value("scales");
  b.g.values[s].constant = scales;
  b.g.values[s].dtype = DataType::Float32;
  b.g.values[s].shape = {4};
  b.g.values[s].shape_known = true;
  b.node("Resize", {"x", "", "scales"}, {"y"}).name = "edited_resize";
  b.output("y");
  const std::string e = load_error(b.g);
  expect_contains(e, "edited_resize");
  expect_contains(e, "max_tensor_bytes");
}

// Found by fuzz/onnx_load_fuzzer: a Pad whose pads make one axis 2^39 long built its per-axis index table
// (8 bytes per output coordinate, 4 TiB) in shape inference, before the output was checked against the
// budget. Every pad mode, on a constant input (folded at load) and on a graph input (planned).
TEST(ResourceBudget, AnEditedPadOpIsRefusedBeforeItsIndexTablesAreBuilt) {
  const int64_t huge = int64_t(1) << 39;
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    for (bool constant_input : {false, true}) {
      GraphBuilder b;
      if (constant_input) b.constant("x", {1, 1, 2, 2});
      else b.input("x", {1, 1, 2, 2});
      const int p = b.value("pads");
      b.g.values[p].constant = Tensor::from_vector<int64_t>(DataType::Int64, {8}, {0, 0, 0, 0, 0, 0, 0, huge});
      b.g.values[p].dtype = DataType::Int64;
      b.g.values[p].shape = {8};
      b.g.values[p].shape_known = true;
      Node& pad = b.node("Pad", {"x", "pads"}, {"y"});
      pad.name = "edited_pad";
      pad.attrs.set("mode", Attribute::of_string(mode));
      b.output("y");
      const std::string e = load_error(b.g);
      expect_contains(e, "edited_pad");
      expect_contains(e, "max_tensor_bytes");
    }
  }
}

// Found by fuzz/onnx_run_fuzzer: a Pad node with no outputs reached shape inference, which wrote the
// output the op always has into an empty list (UBSan: reference binding to null pointer). Refused at
// import naming the node, and by shape inference for graphs built without an importer.
TEST(ResourceBudget, ANodeWithoutOutputsIsRefusedNamingIt) {
  namespace pb = onnx_pb;
  const std::string bytes = pb::model(pb::graph(
      {pb::node("Pad", {"x", "pads"}, {}, "outputless_pad"), pb::node("Relu", {"x"}, {"y"}, "relu")},
      {pb::value_info("x", 1, {1, 1, 2, 2})}, {pb::value_info("y", 1, {1, 1, 2, 2})},
      {pb::raw(pb::tensor("pads", 7, {8}), pb::raw_bytes<int64_t>({0, 0, 1, 1, 0, 0, 1, 1}))}));
  std::string e;
  try {
    Model::load_onnx(bytes.data(), bytes.size());
  } catch (const Error& err) {
    e = err.what();
  }
  expect_contains(e, "outputless_pad");
  expect_contains(e, "no outputs");

  GraphBuilder b;
  b.input("x", {1, 1, 2, 2});
  b.node("Relu", {"x"}, {"y"});
  Node& pad = b.node("Pad", {"x", "x"}, {});
  pad.name = "built_pad";
  b.output("y");
  expect_contains(load_error(b.g), "built_pad");
}

// Found by fuzz/onnx_run_fuzzer: Resize built its per-axis taps (entries per output coordinate) in shape
// inference, before the output was checked against the budget: a scale of 2^31 asked for a 67 GB table.
TEST(ResourceBudget, AnEditedResizeScaleIsRefusedBeforeItsTapsAreBuilt) {
  GraphBuilder b;
  b.input("x", {1, 1, 1, 4});
  const int s = b.value("scales");
  b.g.values[s].constant = Tensor::from_vector<float>(DataType::Float32, {4}, {1.f, 1.f, 1.f, 2147483648.f});
  b.g.values[s].dtype = DataType::Float32;
  b.g.values[s].shape = {4};
  b.g.values[s].shape_known = true;
  b.node("Resize", {"x", "", "scales"}, {"y"}).name = "edited_resize";
  b.output("y");
  const std::string e = load_error(b.g);
  expect_contains(e, "edited_resize");
  expect_contains(e, "max_tensor_bytes");
}

TEST(ResourceBudget, AShapeOf2To62ElementsIsAnErrorNotAnOverflow) {
  // ConstantOfShape's int64 element count times 8 bytes does not fit an int64 (it overflowed a signed
  // multiplication in the planner, which UBSan reported).
  GraphBuilder b;
  b.input("x", {1});
  Tensor shape = Tensor::from_vector<int64_t>(DataType::Int64, {2}, {int64_t(1) << 31, int64_t(1) << 31});
  const int s = b.value("shape");
  b.g.values[s].constant = shape;
  b.g.values[s].dtype = DataType::Int64;
  b.g.values[s].shape = {2};
  b.g.values[s].shape_known = true;
  Node& n = b.node("ConstantOfShape", {"shape"}, {"big"});
  n.name = "edited_shape";
  n.attrs.set("value", Attribute::of_tensor(Tensor::from_vector<int64_t>(DataType::Int64, {1}, {7})));
  b.node("Add", {"x", "big"}, {"y"});
  b.output("y");
  for (int level : {0, 2}) {
    Options o;
    o.opt_level = level;
    const std::string e = load_error(b.g, o);
    expect_contains(e, "edited_shape");
  }
}

TEST(ResourceBudget, OptionsOutOfRangeAreNamed) {
  GraphBuilder b = huge_pad_conv(1);
  Options o;
  o.max_arena_bytes = -1;
  expect_contains(load_error(b.g, o), "Options::max_arena_bytes");
  o = Options();
  o.isa = "sse9";
  expect_contains(load_error(b.g, o), "Options::isa");
  o = Options();
  o.conv_algorithms = "direct,fft";
  expect_contains(load_error(b.g, o), "'fft'");
  o = Options();
  o.winograd_tile = 3;
  expect_contains(load_error(b.g, o), "Options::winograd_tile");
  for (int spin : {-2, 1000001}) {
    o = Options();
    o.spin_microseconds = spin;
    const std::string e = load_error(b.g, o);
    expect_contains(e, "Options::spin_microseconds");
    expect_contains(e, std::to_string(spin));
  }
}

TEST(ResourceBudget, AModelFileLargerThanTheLimitIsRefusedBeforeReadingIt) {
  // /dev/zero never ends: before the limit, reading it as a model filled the memory.
  Options o;
  o.max_file_bytes = 1 << 20;
  try {
    Model::load("/dev/zero", o);
    ADD_FAILURE() << "/dev/zero loaded";
  } catch (const Error& e) {
    expect_contains(e.what(), "max_file_bytes");
  }
}

TEST(ResourceBudget, ANonNcnnParamIsReportedAsSuch) {
  // A .param file without ncnn's magic number was reported as "not a valid ONNX model".
  const std::string path = ::testing::TempDir() + "/bad_magic.param";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("7767518\n1 1\nInput data 0 1 data 0=4 1=4 2=3\n", f);
  std::fclose(f);
  try {
    Model::load(path);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    expect_contains(e.what(), "ncnn");
    expect_contains(e.what(), "7767517");
  }
}

}  // namespace
}  // namespace ninegrid
