// Recognising which face detector a model is from its inputs and outputs.
#include <gtest/gtest.h>

#include "detect/layout.h"

namespace ninegrid::detect {
namespace {

ValueInfo vi(const std::string& name, Shape shape) { return {name, DataType::Float32, std::move(shape)}; }

std::vector<ValueInfo> mnet_outputs() {
  std::vector<ValueInfo> out;
  for (int s : {32, 16, 8})
    for (const char* kind : {"cls_prob_reshape", "bbox_pred", "landmark_pred"})
      out.push_back(vi(std::string("face_rpn_") + kind + "_stride" + std::to_string(s), {-1, -1, -1, -1}));
  return out;
}

TEST(DetectLayout, RecognisesInsightfaceRetinaFaceByOutputNames) {
  DetectorLayout l = match_detector_layout(FaceArch::Auto, {vi("data", {1, 3, 640, 640})}, mnet_outputs());
  EXPECT_EQ(l.arch, FaceArch::RetinaFaceNcnn);
  EXPECT_EQ(l.input, "data");
  EXPECT_FALSE(l.nhwc);
  ASSERT_EQ(l.levels.size(), 3u);
  EXPECT_EQ(l.levels[0].stride, 32);
  EXPECT_EQ(l.levels[2].landmarks, "face_rpn_landmark_pred_stride8");
  // One output missing: not this architecture, and nothing else fits.
  auto outs = mnet_outputs();
  outs.pop_back();
  EXPECT_THROW(match_detector_layout(FaceArch::Auto, {vi("data", {1, 3, 640, 640})}, outs), Error);
}

TEST(DetectLayout, RecognisesBlazeFaceByShapes) {
  // The Barracuda model's interface, outputs listed in its own order.
  std::vector<ValueInfo> outs = {vi("Identity:0", {1, 512, 1}), vi("Identity_1:0", {1, 384, 1}),
                                 vi("Identity_2:0", {1, 512, 16}), vi("Identity_3:0", {1, 384, 16})};
  DetectorLayout l = match_detector_layout(FaceArch::Auto, {vi("input:0", {1, 128, 128, 3})}, outs);
  EXPECT_EQ(l.arch, FaceArch::BlazeFace);
  EXPECT_TRUE(l.nhwc);
  ASSERT_EQ(l.levels.size(), 2u);
  EXPECT_EQ(l.levels[0].scores, "Identity:0");
  EXPECT_EQ(l.levels[0].boxes, "Identity_2:0");
  EXPECT_EQ(l.levels[1].scores, "Identity_1:0");
  EXPECT_EQ(l.levels[1].boxes, "Identity_3:0");
  // Forcing another architecture on it fails with a reason.
  try {
    match_detector_layout(FaceArch::RetinaFaceOnnx, {vi("input:0", {1, 128, 128, 3})}, outs);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("retinaface-onnx"), std::string::npos) << e.what();
  }
}

TEST(DetectLayout, RecognisesPytorchRetinaFaceByShapes) {
  std::vector<ValueInfo> outs = {vi("output0", {1, 16800, 4}), vi("592", {1, 16800, 2}),
                                 vi("591", {1, 16800, 10})};
  DetectorLayout l = match_detector_layout(FaceArch::Auto, {vi("input0", {1, 3, 640, 640})}, outs);
  EXPECT_EQ(l.arch, FaceArch::RetinaFaceOnnx);
  EXPECT_EQ(l.loc, "output0");
  EXPECT_EQ(l.conf, "592");
  EXPECT_EQ(l.landms, "591");
  // Dynamic sizes still match by the last dimension.
  outs = {vi("loc", {-1, -1, 4}), vi("conf", {-1, -1, 2}), vi("landms", {-1, -1, 10})};
  EXPECT_EQ(match_detector_layout(FaceArch::Auto, {vi("in", {-1, 3, -1, -1})}, outs).arch, FaceArch::RetinaFaceOnnx);
}

TEST(DetectLayout, UnknownModelsAreErrorsThatSuggestArch) {
  try {
    match_detector_layout(FaceArch::Auto, {vi("x", {1, 3, 224, 224})}, {vi("prob", {1, 1000})});
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("FaceDetectorOptions::arch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("prob"), std::string::npos) << msg;
  }
}

TEST(DetectLayout, ArchNames) {
  EXPECT_EQ(parse_face_arch("blazeface"), FaceArch::BlazeFace);
  EXPECT_EQ(parse_face_arch("retinaface-ncnn"), FaceArch::RetinaFaceNcnn);
  EXPECT_EQ(parse_face_arch("retinaface-onnx"), FaceArch::RetinaFaceOnnx);
  EXPECT_EQ(parse_face_arch("auto"), FaceArch::Auto);
  EXPECT_THROW(parse_face_arch("yolo"), Error);
  for (FaceArch a : {FaceArch::Auto, FaceArch::RetinaFaceNcnn, FaceArch::RetinaFaceOnnx, FaceArch::BlazeFace})
    EXPECT_EQ(parse_face_arch(face_arch_name(a)), a);
}

}  // namespace
}  // namespace ninegrid::detect
