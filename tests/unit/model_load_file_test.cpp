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
