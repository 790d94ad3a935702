// ONNX's own node tests (Debian libonnx-testdata) for the operators whose output shape depends on an
// input's contents: Resize (scales / sizes / roi), Upsample (scales) and Pad (pads). The test models
// feed those as graph inputs; here, as a model exporter would, they are bound as constants from the
// test's own input files (so load-time folding and layout planning see them), and the outputs compared with
// ONNX's expected ones (|got - want| <= 1e-7 + 1e-3 * |want|, the backend tests' tolerance).
// The conformance runner (tests/onnx_conformance) runs the same models with those inputs bound at run
// time, where the session plans by their contents (runtime_shape_tests.txt lists them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "ir/graph.h"
#include "import/onnx/onnx_importer.h"
#include "import/onnx/tensor_proto.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"

namespace ninegrid {
namespace {

namespace fs = std::filesystem;

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

Tensor read_pb(const fs::path& p) {
  const std::string bytes = read_file(p);
  return parse_tensor_proto(bytes.data(), bytes.size());
}

// Runs one test directory with graph inputs 1.. frozen; returns "" or what went wrong.
std::string run_frozen(const fs::path& dir) {
  const std::string model_bytes = read_file(dir / "model.onnx");
  Graph g = import_onnx(model_bytes.data(), model_bytes.size());
  const fs::path set = dir / "test_data_set_0";
  std::map<std::string, Tensor> feeds;
  std::vector<int> kept;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    Tensor t = read_pb(set / ("input_" + std::to_string(i) + ".pb"));
    Value& v = g.values[g.inputs[i]];
    if (i == 0) {
      feeds[v.name] = t;
      kept.push_back(g.inputs[i]);
    } else {
      v.constant = t;
      v.shape = t.shape();
      v.shape_known = true;
    }
  }
  g.inputs = kept;
  Options opts;
  opts.threads = 1;
  auto model = std::make_shared<Model>(std::make_unique<ModelImpl>(g, opts, "onnx"));
  auto outputs = model->create_session()->run(feeds);
  for (size_t o = 0; o < model->outputs().size(); ++o) {
    const Tensor want = read_pb(set / ("output_" + std::to_string(o) + ".pb"));
    const Tensor& got = outputs.at(model->outputs()[o].name);
    if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", want " + shape_str(want.shape());
    if (got.dtype() != want.dtype())
      return std::string("dtype ") + dtype_name(got.dtype()) + ", want " + dtype_name(want.dtype());
    if (want.dtype() != DataType::Float32) {  // integers: exact
      if (std::memcmp(got.data(), want.data(), want.nbytes()) != 0) return "values differ";
      continue;
    }
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double w = want.data_as<float>()[i], v = got.data_as<float>()[i];
      if (!(std::fabs(v - w) <= 1e-7 + 1e-3 * std::fabs(w)))
        return "element " + std::to_string(i) + " is " + std::to_string(v) + ", want " + std::to_string(w);
    }
  }
  return "";
}

TEST(OnnxShapeInputNodes, ResizeUpsampleAndPadMatchOnnxWithConstantShapeInputs) {
  if (!fs::is_directory(kNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) {
    const std::string name = entry.path().filename().string();
    const bool wanted = name.rfind("test_resize_", 0) == 0 || name.rfind("test_upsample_", 0) == 0 ||
                        name == "test_constant_pad" || name == "test_edge_pad" || name == "test_reflect_pad";
    if (!wanted) continue;
    std::string problem;
    try {
      problem = run_frozen(entry.path());
    } catch (const Error& e) {
      problem = e.what();
    }
    EXPECT_EQ(problem, "") << name;
    ++ran;
  }
  EXPECT_GE(ran, 25);  // 23 Resize, 1 Upsample, 3 Pad tests in libonnx-testdata 1.12
}

}  // namespace
}  // namespace ninegrid
