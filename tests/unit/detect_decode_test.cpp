// Decoding of each detector's outputs: hand-built output tensors decode to hand-computed boxes, and the
// reference ncnn outputs of mnet.25 on the astronaut photo decode to the astronaut's face.
#include <gtest/gtest.h>

#include <cmath>

#include "core/npy.h"
#include "detect/decode.h"
#include "detect/nms.h"

namespace ninegrid::detect {
namespace {

TEST(DetectDecode, RetinaFaceLevelHandBuilt) {
  // Stride 16, 2 rows x 3 columns, 2 anchors. One face: anchor 1 (size 64) at row 1, column 2, whose
  // centre is (2*16 + 8, 1*16 + 8) = (40, 24).
  const int rows = 2, cols = 3, plane = rows * cols, a = 2;
  std::vector<float> scores(2 * a * plane, 0.1f), boxes(4 * a * plane, 0.f), landmarks(10 * a * plane, 0.f);
  const int i = 1 * cols + 2, anchor = 1;
  scores[(a + anchor) * plane + i] = 0.9f;
  scores[anchor * plane + i] = 0.95f;  // background channel: must be ignored
  boxes[(anchor * 4 + 0) * plane + i] = 0.25f;  // dx -> centre x 40 + 0.25*64 = 56
  boxes[(anchor * 4 + 1) * plane + i] = -0.5f;  // dy -> centre y 24 - 32 = -8
  boxes[(anchor * 4 + 2) * plane + i] = std::log(2.f);  // width 128
  boxes[(anchor * 4 + 3) * plane + i] = 0.f;            // height 64
  landmarks[(anchor * 10 + 0) * plane + i] = 0.5f;      // landmark 0: (40 + 32, 24 + 16)
  landmarks[(anchor * 10 + 1) * plane + i] = 0.25f;
  landmarks[(anchor * 10 + 9) * plane + i] = -1.f;  // landmark 4 y: 24 - 64

  std::vector<Face> faces;
  decode_retinaface_level(scores.data(), boxes.data(), landmarks.data(), retinaface_anchors(16, rows, cols), rows,
                          cols, 0.5f, faces);
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_FLOAT_EQ(f.score, 0.9f);
  EXPECT_FLOAT_EQ(f.x1, -8.f);
  EXPECT_FLOAT_EQ(f.x2, 120.f);
  EXPECT_FLOAT_EQ(f.y1, -40.f);
  EXPECT_FLOAT_EQ(f.y2, 24.f);
  EXPECT_FLOAT_EQ(f.landmarks[0][0], 72.f);
  EXPECT_FLOAT_EQ(f.landmarks[0][1], 40.f);
  EXPECT_FLOAT_EQ(f.landmarks[4][0], 40.f);
  EXPECT_FLOAT_EQ(f.landmarks[4][1], -40.f);
}

TEST(DetectDecode, RetinaFaceSkipsNonFiniteOutputs) {
  const int rows = 1, cols = 1, a = 2;
  std::vector<float> scores(2 * a, 0.9f), boxes(4 * a, 0.f), landmarks(10 * a, 0.f);
  boxes[0] = NAN;                          // anchor 0: dropped
  boxes[4 + 2] = 1e30f;                    // anchor 1: exp() clamped, stays finite
  std::vector<Face> faces;
  decode_retinaface_level(scores.data(), boxes.data(), landmarks.data(), retinaface_anchors(8, rows, cols), rows,
                          cols, 0.5f, faces);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_TRUE(std::isfinite(faces[0].x2));
}

TEST(DetectDecode, PytorchRetinaFaceHandBuilt) {
  // One prior centred at (0.5, 0.25) of size (0.1, 0.2) on a 200x100 input.
  std::vector<Anchor> priors(1);
  priors[0].cx = 0.5f;
  priors[0].cy = 0.25f;
  priors[0].w = 0.1f;
  priors[0].h = 0.2f;
  // Centre (0.5 + 1*0.1*0.1, 0.25 - 2*0.1*0.2) = (0.51, 0.21) -> (102, 21) px; size (0.1 * exp(0.2 * 5 ln 2),
  // 0.2) = (0.2, 0.2) -> (40, 20) px.
  const float loc[4] = {1.f, -2.f, 5 * std::log(2.f), 0.f};
  const float conf[2] = {0.2f, 0.8f};
  float landms[10] = {1.f, 1.f};  // landmark 0: (0.51 * 200, 0.27 * 100)
  std::vector<Face> faces;
  decode_pytorch_retinaface(loc, conf, landms, priors, 200, 100, 0.5f, faces);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_FLOAT_EQ(faces[0].score, 0.8f);
  EXPECT_NEAR(faces[0].x1, 82.f, 1e-4);
  EXPECT_NEAR(faces[0].x2, 122.f, 1e-4);
  EXPECT_NEAR(faces[0].y1, 11.f, 1e-4);
  EXPECT_NEAR(faces[0].y2, 31.f, 1e-4);
  EXPECT_NEAR(faces[0].landmarks[0][0], 102.f, 1e-4);
  EXPECT_NEAR(faces[0].landmarks[0][1], 27.f, 1e-4);
  EXPECT_NEAR(faces[0].landmarks[1][0], 100.f, 1e-4);  // zero offset: the prior centre
  EXPECT_NEAR(faces[0].landmarks[1][1], 25.f, 1e-4);

  // Logits instead of probabilities: softmax(0, ln 4) = (0.2, 0.8).
  const float logits[2] = {0.f, std::log(4.f)};
  faces.clear();
  decode_pytorch_retinaface(loc, logits, landms, priors, 200, 100, 0.5f, faces);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_NEAR(faces[0].score, 0.8f, 1e-6);
  faces.clear();
  decode_pytorch_retinaface(loc, conf, landms, priors, 200, 100, 0.85f, faces);
  EXPECT_TRUE(faces.empty());
}

TEST(DetectDecode, BlazeFaceHandBuilt) {
  // Anchor centre (0.5, 0.25) on a 128 input = (64, 32) px.
  Anchor anchors[2];
  anchors[0].cx = anchors[1].cx = 0.5f;
  anchors[0].cy = anchors[1].cy = 0.25f;
  anchors[0].w = anchors[0].h = anchors[1].w = anchors[1].h = 1.f;
  const float scores[2] = {std::log(3.f), 0.f};  // sigmoid: 0.75 and 0.5
  float boxes[32] = {4, -8, 40, 20,  // centre (68, 24), size 40 x 20
                     1, 2,  3, 4, 5, 6, 0, 10, 99, 99, 99, 99};
  std::vector<Face> faces;
  decode_blazeface(scores, boxes, anchors, 2, 128, 128, 0.6f, faces);
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_FLOAT_EQ(f.score, 0.75f);
  EXPECT_FLOAT_EQ(f.x1, 48.f);
  EXPECT_FLOAT_EQ(f.y1, 14.f);
  EXPECT_FLOAT_EQ(f.x2, 88.f);
  EXPECT_FLOAT_EQ(f.y2, 34.f);
  EXPECT_FLOAT_EQ(f.landmarks[0][0], 65.f);  // keypoint 0: eye
  EXPECT_FLOAT_EQ(f.landmarks[0][1], 34.f);
  EXPECT_FLOAT_EQ(f.landmarks[1][0], 67.f);  // keypoint 1: eye
  EXPECT_FLOAT_EQ(f.landmarks[2][1], 38.f);  // keypoint 2: nose
  EXPECT_FLOAT_EQ(f.landmarks[3][0], 64.f);  // keypoint 3: mouth centre, in both mouth slots
  EXPECT_FLOAT_EQ(f.landmarks[3][1], 42.f);
  EXPECT_FLOAT_EQ(f.landmarks[4][0], 64.f);
  EXPECT_FLOAT_EQ(f.landmarks[4][1], 42.f);
}

// The outputs the reference ncnn implementation computes for mnet.25 on the 512x512 astronaut photo
// (see ../shared/README.md): decoding them must find the astronaut's face, independently of the engine.
TEST(DetectDecode, MnetGoldenOutputsDecodeToTheAstronautsFace) {
  const std::string dir = std::string(NINEGRID_SHARED_DIR) + "/models/mnet.25-golden/";
  std::vector<Face> faces;
  for (int stride : {32, 16, 8}) {
    const std::string s = std::to_string(stride);
    Tensor scores = read_npy(dir + "face_rpn_cls_prob_reshape_stride" + s + ".npy");
    Tensor boxes = read_npy(dir + "face_rpn_bbox_pred_stride" + s + ".npy");
    Tensor landmarks = read_npy(dir + "face_rpn_landmark_pred_stride" + s + ".npy");
    const int rows = static_cast<int>(scores.dim(1)), cols = static_cast<int>(scores.dim(2));
    ASSERT_EQ(rows, 512 / stride);
    ASSERT_EQ(boxes.dim(0), 8);
    ASSERT_EQ(landmarks.dim(0), 20);
    decode_retinaface_level(scores.data_as<float>(), boxes.data_as<float>(), landmarks.data_as<float>(),
                            retinaface_anchors(stride, rows, cols), rows, cols, 0.9f, faces);
  }
  faces = nms(faces, 0.4f);
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_NEAR(f.score, 0.987f, 0.001f);  // the probability the README gives
  EXPECT_LT(f.x1, 220.f);
  EXPECT_GT(f.x2, 220.f);
  EXPECT_LT(f.y1, 120.f);
  EXPECT_GT(f.y2, 120.f);
  EXPECT_GE(f.x2 - f.x1, 60.f);
  EXPECT_LE(f.x2 - f.x1, 160.f);
  // Eyes above the nose, nose above the mouth corners, left eye left of right eye.
  EXPECT_LT(f.landmarks[0][0], f.landmarks[1][0]);
  EXPECT_LT(f.landmarks[0][1], f.landmarks[2][1]);
  EXPECT_LT(f.landmarks[2][1], f.landmarks[3][1]);
  EXPECT_LT(f.landmarks[3][0], f.landmarks[4][0]);
}

}  // namespace
}  // namespace ninegrid::detect
