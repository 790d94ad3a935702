// Whole models against an independent implementation: PyTorch (Debian's python3-torch).
//
// scripts/make_test_models.sh exports, with fixed seeds:
//   - nine torchvision classifiers (random weights, BatchNorm with non-trivial statistics), each with a saved
//     input and PyTorch's output on it;
//   - RetinaFace-MobileNet0.25 with its real trained weights (read from the ncnn files in shared/ by an
//     independent reader that is itself checked against the golden outputs), with the astronaut photo as
//     input and PyTorch's nine outputs.
// Each test loads the .onnx with ninegrid, runs it on the saved input and requires, for every output,
//   max |ours - torch| <= 1e-4 * (max(torch) - min(torch)).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/npy.h"
#include "ninegrid/ninegrid.h"

#ifndef NINEGRID_CACHE_DIR
#define NINEGRID_CACHE_DIR NINEGRID_SOURCE_DIR "/.cache"
#endif

namespace ninegrid {
namespace {

constexpr double kRelativeTolerance = 1e-4;  // of the reference output's range (issue 2)

// The generated-artifact cache: $NINEGRID_CACHE if set, else <repo>/.cache.
std::string cache_dir() {
  const char* env = std::getenv("NINEGRID_CACHE");
  return env && *env ? std::string(env) : std::string(NINEGRID_CACHE_DIR);
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// Empty if all files exist, otherwise a message naming the first missing one and the fix.
std::string missing_files(const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    if (!file_exists(p)) return "missing " + p + ": run scripts/make_test_models.sh";
  return "";
}

// Compares one output with PyTorch's; a failure says where and by how much.
void expect_matches_reference(const Tensor& ours, const Tensor& reference, const std::string& what) {
  ASSERT_EQ(ours.dtype(), DataType::Float32) << what;
  ASSERT_EQ(reference.dtype(), DataType::Float32) << what;
  ASSERT_EQ(shape_str(ours.shape()), shape_str(reference.shape())) << what << ": output shape differs from PyTorch's";
  const float* a = ours.data_as<float>();
  const float* b = reference.data_as<float>();
  const int64_t n = reference.numel();
  ASSERT_GT(n, 0) << what;

  float lo = b[0], hi = b[0];
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, b[i]);
    hi = std::max(hi, b[i]);
  }
  const double range = static_cast<double>(hi) - lo;
  ASSERT_GT(range, 0.0) << what << ": PyTorch's output is constant, the comparison would mean nothing";

  double worst = -1.0;
  int64_t worst_at = 0;
  int64_t not_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i])) {
      ++not_finite;
      continue;
    }
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (d > worst) {
      worst = d;
      worst_at = i;
    }
  }
  EXPECT_EQ(not_finite, 0) << what << ": " << not_finite << " of " << n << " outputs are NaN or infinite";
  EXPECT_LE(worst, kRelativeTolerance * range)
      << what << ": max |ours - torch| = " << worst << " = " << worst / range << " of the output range " << range
      << " (limit " << kRelativeTolerance << "), at flat index " << worst_at << " (ours " << a[worst_at]
      << ", torch " << b[worst_at] << ")";
}

// ---- torchvision classifiers ---------------------------------------------------------------------------

// Loads <cache>/models/torchvision/<name>.onnx, runs it on <name>.input.npy and compares with
// <name>.expected.npy.
void expect_torchvision_model_matches_pytorch(const std::string& name) {
  const std::string dir = cache_dir() + "/models/torchvision/";
  const std::string model_path = dir + name + ".onnx";
  const std::string input_path = dir + name + ".input.npy";
  const std::string expected_path = dir + name + ".expected.npy";
  const std::string missing = missing_files({model_path, input_path, expected_path});
  if (!missing.empty()) FAIL() << missing;

  std::shared_ptr<Model> model = Model::load(model_path);
  ASSERT_EQ(model->inputs().size(), 1u) << name;
  ASSERT_EQ(model->outputs().size(), 1u) << name;
  const Tensor input = read_npy(input_path);
  const Tensor expected = read_npy(expected_path);

  auto session = model->create_session();
  auto outputs = session->run({{model->inputs()[0].name, input}});
  const std::string output_name = model->outputs()[0].name;
  ASSERT_EQ(outputs.count(output_name), 1u) << name << ": no output named " << output_name;
  expect_matches_reference(outputs.at(output_name), expected, name);
}

TEST(TorchvisionVsPyTorch, MobileNetV2) { expect_torchvision_model_matches_pytorch("mobilenet_v2"); }
TEST(TorchvisionVsPyTorch, MobileNetV3Large) { expect_torchvision_model_matches_pytorch("mobilenet_v3_large"); }
TEST(TorchvisionVsPyTorch, ResNet18) { expect_torchvision_model_matches_pytorch("resnet18"); }
TEST(TorchvisionVsPyTorch, ResNet50) { expect_torchvision_model_matches_pytorch("resnet50"); }
TEST(TorchvisionVsPyTorch, ShuffleNetV2x1_0) { expect_torchvision_model_matches_pytorch("shufflenet_v2_x1_0"); }
TEST(TorchvisionVsPyTorch, EfficientNetB0) { expect_torchvision_model_matches_pytorch("efficientnet_b0"); }
TEST(TorchvisionVsPyTorch, SqueezeNet1_1) { expect_torchvision_model_matches_pytorch("squeezenet1_1"); }
TEST(TorchvisionVsPyTorch, GoogLeNet) { expect_torchvision_model_matches_pytorch("googlenet"); }
TEST(TorchvisionVsPyTorch, RegNetY400MF) { expect_torchvision_model_matches_pytorch("regnet_y_400mf"); }

// ---- RetinaFace-MobileNet0.25, real weights --------------------------------------------------------------

const char* const kRetinaFaceOutputs[] = {
    "face_rpn_cls_prob_reshape_stride32", "face_rpn_bbox_pred_stride32", "face_rpn_landmark_pred_stride32",
    "face_rpn_cls_prob_reshape_stride16", "face_rpn_bbox_pred_stride16", "face_rpn_landmark_pred_stride16",
    "face_rpn_cls_prob_reshape_stride8",  "face_rpn_bbox_pred_stride8",  "face_rpn_landmark_pred_stride8",
};

TEST(RetinaFaceOnnxVsPyTorch, AllNineOutputsOnTheAstronautPhoto) {
  const std::string dir = cache_dir() + "/models/";
  const std::string model_path = dir + "retinaface_mnet25.onnx";
  const std::string input_path = dir + "retinaface_mnet25.input.npy";
  std::vector<std::string> needed = {model_path, input_path};
  for (const char* out : kRetinaFaceOutputs) needed.push_back(dir + "retinaface_mnet25." + out + ".npy");
  const std::string missing = missing_files(needed);
  if (!missing.empty()) FAIL() << missing;

  std::shared_ptr<Model> model = Model::load(model_path);
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "data");
  EXPECT_EQ(model->outputs().size(), 9u);

  auto session = model->create_session();
  auto outputs = session->run({{"data", read_npy(input_path)}});
  for (const char* out : kRetinaFaceOutputs) {
    SCOPED_TRACE(out);
    ASSERT_EQ(outputs.count(out), 1u) << "no output named " << out;
    expect_matches_reference(outputs.at(out), read_npy(dir + "retinaface_mnet25." + out + ".npy"),
                             std::string("retinaface_mnet25 ") + out);
  }
}

}  // namespace
}  // namespace ninegrid
