// Model::load(path) reading files: a model read in one piece (ncnn) or parsed straight from the file (ONNX)
// loads as its bytes do, and a missing path, a directory or a truncated file give an Error naming the
// path, never a crash.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ninegrid/ninegrid.h"
#include "unit/onnx_proto_writer.h"

namespace ninegrid {
namespace {

namespace fs = std::filesystem;

const char* kParam = NINEGRID_SHARED_DIR "/models/mnet.25-opt.param";
const char* kBin = NINEGRID_SHARED_DIR "/models/mnet.25-opt.bin";

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A scratch directory of this test's own, removed at the end.
class ModelLoadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ninegrid_model_load_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  fs::path dir_;
};

std::string error_of(const std::string& path) {
  try {
    Model::load(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(ModelLoadFile, ReadsTheWholeFile) {
  ASSERT_TRUE(fs::exists(kParam)) << "missing " << kParam;
  // A copy under another name (the weights beside it, as ncnn expects): the same graph as the original.
  const std::string param = write("copy.param", bytes_of(kParam));
  write("copy.bin", bytes_of(kBin));
  const auto original = Model::load(kParam), copy = Model::load(param);
  ASSERT_EQ(copy->inputs().size(), 1u);
  ASSERT_EQ(copy->outputs().size(), original->outputs().size());
  // Both compute the same outputs, bit for bit, on one input.
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, 64, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i % 251);
  auto a = original->create_session(), b = copy->create_session();
  a->set_input(original->inputs()[0].name, x);
  b->set_input(copy->inputs()[0].name, x);
  a->run();
  b->run();
  for (const ValueInfo& out : original->outputs()) {
    const Tensor ya = a->output(out.name), yb = b->output(out.name);
    ASSERT_EQ(ya.shape(), yb.shape()) << out.name;
    EXPECT_TRUE(std::equal(ya.data_as<float>(), ya.data_as<float>() + ya.numel(), yb.data_as<float>())) << out.name;
  }
}

// ONNX files are parsed from the file itself (import_onnx_stream): the same model as from its bytes in
// memory, and a file cut short is an error naming it.
TEST_F(ModelLoadFile, OnnxFileParsedFromTheFileAsFromItsBytes) {
  using namespace onnx_pb;
  std::vector<float> w(3000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i % 17) - 1.f;
  const std::string bytes = model(graph({node("Add", {"x", "w"}, {"y"})}, {value_info("x", FLOAT, {3000})},
                                        {value_info("y", FLOAT, {3000})}, {raw(tensor("w", FLOAT, {3000}), raw_bytes<float>(w))}));
  const std::string path = write("add.onnx", bytes);
  const auto from_file = Model::load(path), from_bytes = Model::load_onnx(bytes.data(), bytes.size());
  Tensor x = Tensor::empty(DataType::Float32, {3000});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i % 5);
  auto a = from_file->create_session(), b = from_bytes->create_session();
  a->set_input("x", x);
  b->set_input("x", x);
  a->run();
  b->run();
  const Tensor ya = a->output("y"), yb = b->output("y");
  ASSERT_EQ(ya.numel(), 3000);
  for (int64_t i = 0; i < 3000; ++i) {
    EXPECT_EQ(ya.data_as<float>()[i], static_cast<float>(i % 5) + w[static_cast<size_t>(i)]) << i;
    EXPECT_EQ(ya.data_as<float>()[i], yb.data_as<float>()[i]) << i;
  }
  const std::string cut = write("cut.onnx", bytes.substr(0, bytes.size() - 100));  // inside the weights
  const std::string message = error_of(cut);
  EXPECT_NE(message.find(cut), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

// Model files are mapped (core/mapped_file.h): a file cut short anywhere, at a page boundary or a byte
// either side of one (where a read past the end would fault rather than read zeros), inside a weight or
// in the structure, is an Error naming the path. The whole file loads and runs, so the cuts are the
// only cause. Under ASan a read past the mapping would not be reported as a heap overflow, so the page
// boundaries are where such a read would crash the test.
TEST_F(ModelLoadFile, MappedOnnxFileCutAnywhereIsAnError) {
  using namespace onnx_pb;
  const int64_t oc = 64, ic = 32;
  std::vector<float> w(static_cast<size_t>(oc * ic * 9)), b(static_cast<size_t>(oc));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 23) - 11);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f * static_cast<float>(i % 3);
  const std::string bytes =
      model(graph({node("Conv", {"x", "w", "b"}, {"y"}, "conv", {attr_ints("pads", {1, 1, 1, 1})})},
                  {value_info("x", FLOAT, {1, ic, 8, 8})}, {value_info("y", FLOAT, {1, oc, 8, 8})},
                  {raw(tensor("w", FLOAT, {oc, ic, 3, 3}), raw_bytes<float>(w)),
                   raw(tensor("b", FLOAT, {oc}), raw_bytes<float>(b))}));
  ASSERT_GT(bytes.size(), size_t(16) * 4096);
  {
    const auto whole = Model::load(write("whole.onnx", bytes));
    Tensor x = Tensor::empty(DataType::Float32, {1, ic, 8, 8});
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 1.f;
    const Tensor y = whole->create_session()->run({{"x", x}}).at("y");
    // At the centre pixel every tap sees a 1: y = sum of the channel's weights + bias.
    for (int64_t c = 0; c < oc; ++c) {
      double want = b[static_cast<size_t>(c)];
      for (int64_t k = 0; k < ic * 9; ++k) want += w[static_cast<size_t>(c * ic * 9 + k)];
      EXPECT_NEAR(y.data_as<float>()[(c * 8 + 4) * 8 + 4], want, 1e-4) << "channel " << c;
    }
  }
  std::vector<size_t> cuts = {1, 2, 7, 20, bytes.size() - 1};
  for (size_t page = 4096; page < bytes.size(); page += 4096)
    for (size_t c : {page - 1, page, page + 1}) cuts.push_back(c);
  for (size_t c = 3; c < bytes.size(); c += 997) cuts.push_back(c);
  for (size_t c : cuts) {
    const std::string cut = write("cut.onnx", bytes.substr(0, c));
    ASSERT_EQ(fs::file_size(cut), c);
    const std::string message = error_of(cut);
    EXPECT_NE(message.find(cut), std::string::npos) << "cut at " << c << ": " << message;
  }
}

// The same for an ncnn weights file (mapped beside its .param): cut at page boundaries and between them,
// loading stops with an Error naming the .param.
TEST_F(ModelLoadFile, MappedNcnnWeightsCutAnywhereIsAnError) {
  ASSERT_TRUE(fs::exists(kParam)) << "missing " << kParam;
  const std::string bin = bytes_of(kBin);
  ASSERT_GT(bin.size(), size_t(64) * 4096);
  write("cut.param", bytes_of(kParam));
  const std::string param = (dir_ / "cut.param").string();
  std::vector<size_t> cuts = {1, 3, 4, bin.size() - 4, bin.size() - 1};
  for (size_t page = 4096; page < bin.size(); page += 16 * 4096)
    for (size_t c : {page - 1, page, page + 1}) cuts.push_back(c);
  for (size_t c : cuts) {
    write("cut.bin", bin.substr(0, c));
    const std::string message = error_of(param);
    EXPECT_NE(message.find(param), std::string::npos) << "cut at " << c << ": " << message;
  }
}

TEST_F(ModelLoadFile, MissingPathDirectoryAndTruncatedFileAreErrors) {
  const std::string missing = (dir_ / "no_such_model.onnx").string();
  EXPECT_NE(error_of(missing).find(missing), std::string::npos) << error_of(missing);

  // A directory opens like a file on Linux; reading it must fail cleanly.
  const std::string directory_error = error_of(dir_.string());
  EXPECT_FALSE(directory_error.empty());
  EXPECT_NE(directory_error.find(dir_.string()), std::string::npos) << directory_error;

  ASSERT_TRUE(fs::exists(kParam)) << "missing " << kParam;
  const std::string bin = bytes_of(kBin);
  write("cut.param", bytes_of(kParam));
  write("cut.bin", bin.substr(0, bin.size() / 2));  // the weights end half way through
  const std::string cut = (dir_ / "cut.param").string();
  EXPECT_NE(error_of(cut).find(cut), std::string::npos) << error_of(cut);

  write("empty.onnx", "");
  const std::string empty = (dir_ / "empty.onnx").string();
  EXPECT_NE(error_of(empty).find(empty), std::string::npos) << error_of(empty);
}

}  // namespace
}  // namespace ninegrid
