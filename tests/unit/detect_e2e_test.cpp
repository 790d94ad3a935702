// Face detection end to end on the astronaut photo (512x512, Debian's python3-skimage): each model finds
// exactly one face, whose box contains the point (220, 120) and is 60 to 160 px wide.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "ninegrid/detect.h"

namespace ninegrid {
namespace {

const char* kAstronaut = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png";

std::string blazeface_path() {
  const char* cache = std::getenv("NINEGRID_CACHE");
  std::string dir = cache && *cache ? cache : std::string(NINEGRID_SOURCE_DIR) + "/.cache";
  return dir + "/npm/blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx";
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

void expect_one_astronaut_face(const std::vector<Face>& faces) {
  ASSERT_EQ(faces.size(), 1u);
  const Face& f = faces[0];
  EXPECT_LT(f.x1, 220.f);
  EXPECT_GT(f.x2, 220.f);
  EXPECT_LT(f.y1, 120.f);
  EXPECT_GT(f.y2, 120.f);
  EXPECT_GE(f.x2 - f.x1, 60.f);
  EXPECT_LE(f.x2 - f.x1, 160.f);
  // The landmarks lie inside the box, eyes left to right and above the mouth.
  for (const auto& p : f.landmarks) {
    EXPECT_GE(p[0], f.x1);
    EXPECT_LE(p[0], f.x2);
    EXPECT_GE(p[1], f.y1);
    EXPECT_LE(p[1], f.y2);
  }
  EXPECT_LT(f.landmarks[0][0], f.landmarks[1][0]);
  EXPECT_LT(f.landmarks[0][1], f.landmarks[3][1]);
}

TEST(DetectE2E, MnetNcnnFindsTheAstronaut) {
  FaceDetectorOptions o;
  o.score_threshold = 0.9f;
  FaceDetector det(std::string(NINEGRID_SHARED_DIR) + "/models/mnet.25-opt.param", o);
  EXPECT_EQ(det.arch(), FaceArch::RetinaFaceNcnn);
  EXPECT_EQ(det.input_width(), 640);
  Image photo = load_image(kAstronaut);
  std::vector<Face> faces = det.detect(photo);
  expect_one_astronaut_face(faces);
  if (!faces.empty()) {
    EXPECT_GT(faces[0].score, 0.9f);
  }
  draw_faces(photo, faces);
  write_image(testing::TempDir() + "/astronaut_mnet_faces.png", photo);
}

// The ONNX reproduction of mnet.25 that scripts/make_test_models.sh exports keeps ncnn's output names,
// so the same decoder applies.
TEST(DetectE2E, MnetOnnxExportFindsTheAstronaut) {
  const char* cache = std::getenv("NINEGRID_CACHE");
  const std::string model =
      (cache && *cache ? std::string(cache) : std::string(NINEGRID_SOURCE_DIR) + "/.cache") +
      "/models/retinaface_mnet25.onnx";
  if (!exists(model)) GTEST_SKIP() << model << " is missing: run scripts/setup.sh";
  FaceDetectorOptions o;
  o.score_threshold = 0.9f;
  FaceDetector det(model, o);
  EXPECT_EQ(det.arch(), FaceArch::RetinaFaceNcnn);
  expect_one_astronaut_face(det.detect(load_image(kAstronaut)));
}

TEST(DetectE2E, BlazeFaceFindsTheAstronaut) {
  const std::string model = blazeface_path();
  if (!exists(model)) GTEST_SKIP() << model << " is missing: run scripts/setup.sh";
  FaceDetector det(model);
  EXPECT_EQ(det.arch(), FaceArch::BlazeFace);
  EXPECT_EQ(det.input_width(), 128);
  Image photo = load_image(kAstronaut);
  std::vector<Face> faces = det.detect(photo);
  expect_one_astronaut_face(faces);
  draw_faces(photo, faces);
  write_image(testing::TempDir() + "/astronaut_blazeface_faces.png", photo);
}

TEST(DetectE2E, BlazeFaceOnNonSquarePhotosMapsBackThroughTheLetterbox) {
  const std::string model = blazeface_path();
  if (!exists(model)) GTEST_SKIP() << model << " is missing: run scripts/setup.sh";
  // The astronaut pasted 64 px from the left of a 576x512 grey canvas, then 64 px from the top of a
  // 512x576 one: the face moves by those 64 px (BlazeFace sees the canvas shrunk to 128 px and padded).
  Image photo = load_image(kAstronaut);
  Image wide(576, 512), tall(512, 576);
  std::fill(wide.rgb.begin(), wide.rgb.end(), 128);
  std::fill(tall.rgb.begin(), tall.rgb.end(), 128);
  for (int y = 0; y < 512; ++y) {
    std::copy(photo.pixel(0, y), photo.pixel(0, y) + 512 * 3, wide.pixel(64, y));
    std::copy(photo.pixel(0, y), photo.pixel(0, y) + 512 * 3, tall.pixel(0, y + 64));
  }
  FaceDetector det(model);
  std::vector<Face> faces = det.detect(wide);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_LT(faces[0].x1, 284.f);
  EXPECT_GT(faces[0].x2, 284.f);
  EXPECT_LT(faces[0].y1, 120.f);
  EXPECT_GT(faces[0].y2, 120.f);
  faces = det.detect(tall);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_LT(faces[0].x1, 220.f);
  EXPECT_GT(faces[0].x2, 220.f);
  EXPECT_LT(faces[0].y1, 184.f);
  EXPECT_GT(faces[0].y2, 184.f);
}

TEST(DetectE2E, BadModelsAndOptionsAreErrors) {
  EXPECT_THROW(FaceDetector("/nonexistent/model.onnx"), Error);
  FaceDetectorOptions o;
  o.score_threshold = 1.5f;
  EXPECT_THROW(FaceDetector(std::string(NINEGRID_SHARED_DIR) + "/models/mnet.25-opt.param", o), Error);
  o = FaceDetectorOptions();
  o.input_size = 100;  // not a multiple of 32
  EXPECT_THROW(FaceDetector(std::string(NINEGRID_SHARED_DIR) + "/models/mnet.25-opt.param", o), Error);
  // SqueezeNet is a classifier, not a face detector: the error says how to force an architecture.
  try {
    FaceDetector(std::string(NINEGRID_SHARED_DIR) + "/models/squeezenet_v1.1.param");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FaceDetectorOptions::arch"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ninegrid
