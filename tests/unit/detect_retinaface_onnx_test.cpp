// The PyTorch RetinaFace (retinaface-onnx) path end to end, without trained weights: a hand-built ONNX
// model with that export's interface (input (1,3,64,64), outputs loc (1,168,4), conf (1,168,2),
// landms (1,168,10)) whose outputs are constants, except that one landmark offset is the mean of input
// channel 0. The detector must recognise the model, feed it BGR minus the means (104, 117, 123), and
// decode the one confident prior to the box and landmark computed by hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "ninegrid/detect.h"
#include "onnx_proto_writer.h"

namespace ninegrid {
namespace {

using namespace onnx_pb;

// Priors of a 64x64 input: 8x8x2 (step 8), 4x4x2 (step 16), 2x2x2 (step 32) = 168.
constexpr int kPriors = 168;
// Step 16, row 1, column 2, first min size (64): index 128 + (1*4 + 2)*2 = 140, centre (40, 24) px.
constexpr int kFacePrior = 140;

std::string write_model() {
  std::vector<float> loc(kPriors * 4, 0.f), conf(kPriors * 2), landms(kPriors * 10, 0.f), mask(kPriors * 10, 0.f);
  for (int n = 0; n < kPriors; ++n) {
    conf[2 * n] = n == kFacePrior ? 0.1f : 0.9f;
    conf[2 * n + 1] = n == kFacePrior ? 0.9f : 0.1f;
  }
  mask[kFacePrior * 10 + 0] = 0.01f;  // landmark 0 x offset = 0.01 * mean(input channel 0)
  Writer g = graph(
      {node("Slice", {"x", "starts", "ends", "axes"}, {"ch0"}, "slice"),
       node("ReduceMean", {"ch0"}, {"mean"}, "mean", {attr_int("keepdims", 0)}),
       node("Mul", {"mean", "zero"}, {"nothing"}, "times_zero"),
       node("Add", {"loc_c", "nothing"}, {"loc"}, "loc"),
       node("Add", {"conf_c", "nothing"}, {"conf"}, "conf"),
       node("Mul", {"mean", "mask"}, {"offset"}, "offset"),
       node("Add", {"landms_c", "offset"}, {"landms"}, "landms")},
      {value_info("x", FLOAT, {1, 3, 64, 64})},
      {value_info("loc", FLOAT, {1, kPriors, 4}), value_info("conf", FLOAT, {1, kPriors, 2}),
       value_info("landms", FLOAT, {1, kPriors, 10})},
      {raw(tensor("starts", INT64, {1}), raw_bytes(std::vector<int64_t>{0})),
       raw(tensor("ends", INT64, {1}), raw_bytes(std::vector<int64_t>{1})),
       raw(tensor("axes", INT64, {1}), raw_bytes(std::vector<int64_t>{1})),
       raw(tensor("zero", FLOAT, {}), raw_bytes(std::vector<float>{0.f})),
       raw(tensor("loc_c", FLOAT, {1, kPriors, 4}), raw_bytes(loc)),
       raw(tensor("conf_c", FLOAT, {1, kPriors, 2}), raw_bytes(conf)),
       raw(tensor("landms_c", FLOAT, {1, kPriors, 10}), raw_bytes(landms)),
       raw(tensor("mask", FLOAT, {1, kPriors, 10}), raw_bytes(mask))});
  const std::string path = testing::TempDir() + "/fake_pytorch_retinaface.onnx";
  std::ofstream(path, std::ios::binary) << model(g, 13);
  return path;
}

TEST(DetectRetinaFaceOnnx, RecognisedPreprocessedAndDecoded) {
  const std::string path = write_model();
  FaceDetector det(path);
  EXPECT_EQ(det.arch(), FaceArch::RetinaFaceOnnx);
  EXPECT_EQ(det.input_width(), 64);  // the model's fixed size, not the default 640

  Image img(64, 64);  // uniform RGB (10, 20, 200): channel 0 of the input is B - 104 = 96
  for (size_t i = 0; i < img.rgb.size(); i += 3) {
    img.rgb[i] = 10;
    img.rgb[i + 1] = 20;
    img.rgb[i + 2] = 200;
  }
  std::vector<Face> faces = det.detect(img);
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_FLOAT_EQ(f.score, 0.9f);
  // The prior itself (zero offsets): centre (40, 24), 64x64, clamped to the 64x64 image.
  EXPECT_NEAR(f.x1, 8.f, 1e-4);
  EXPECT_NEAR(f.y1, 0.f, 1e-4);
  EXPECT_NEAR(f.x2, 64.f, 1e-4);
  EXPECT_NEAR(f.y2, 56.f, 1e-4);
  // Landmark 0 x = 40 + (0.01 * 96) * 0.1 * 64 = 46.144 (R first would give 32.77, no means 52.8).
  EXPECT_NEAR(f.landmarks[0][0], 46.144f, 1e-3);
  EXPECT_NEAR(f.landmarks[0][1], 24.f, 1e-4);
  EXPECT_NEAR(f.landmarks[1][0], 40.f, 1e-4);

  // A higher threshold leaves nothing; forcing another architecture is an error.
  FaceDetectorOptions strict;
  strict.score_threshold = 0.95f;
  EXPECT_TRUE(FaceDetector(path, strict).detect(img).empty());
  FaceDetectorOptions blaze;
  blaze.arch = FaceArch::BlazeFace;
  EXPECT_THROW(FaceDetector(path, blaze), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ninegrid
