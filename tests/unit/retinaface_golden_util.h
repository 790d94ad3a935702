// What the whole-model tests of RetinaFace-MobileNet0.25 share (blocked_models_test, shared_weights_test):
// where the test models and ncnn's golden outputs are, the output blob names, the astronaut photo as a
// float NCHW tensor (raw 0..255, RGB planes) and the tolerance of the whole-model tests.
#pragma once

#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "ninegrid/tensor.h"

#ifndef NINEGRID_CACHE_DIR
#define NINEGRID_CACHE_DIR NINEGRID_SOURCE_DIR "/.cache"
#endif

namespace ninegrid {
namespace retinaface_golden {

// The generated test models (scripts/make_test_models.sh): $NINEGRID_CACHE, or the source tree's .cache.
inline std::string cache_dir() {
  const char* env = std::getenv("NINEGRID_CACHE");
  return env && *env ? std::string(env) : std::string(NINEGRID_CACHE_DIR);
}

inline const std::string kNcnnModel = NINEGRID_SHARED_DIR "/models/mnet.25-opt.param";
inline const std::string kGoldenDir = NINEGRID_SHARED_DIR "/models/mnet.25-golden/";
inline const char* const kOutputs[] = {
    "face_rpn_cls_prob_reshape_stride32", "face_rpn_bbox_pred_stride32", "face_rpn_landmark_pred_stride32",
    "face_rpn_cls_prob_reshape_stride16", "face_rpn_bbox_pred_stride16", "face_rpn_landmark_pred_stride16",
    "face_rpn_cls_prob_reshape_stride8",  "face_rpn_bbox_pred_stride8",  "face_rpn_landmark_pred_stride8",
};

// |ours - reference| <= 1e-4 of the reference's range (ncnn_import_test and torchvision_models_test use
// the same bound), element counts equal (ncnn's (c, h, w) goldens lack the leading batch dimension).
inline void expect_close(const Tensor& ours, const Tensor& reference, const std::string& what) {
  ASSERT_TRUE(ours.defined()) << what << " was not produced";
  ASSERT_EQ(ours.numel(), reference.numel()) << what << ": " << shape_str(ours.shape()) << " vs "
                                             << shape_str(reference.shape());
  const float* a = ours.data_as<float>();
  const float* b = reference.data_as<float>();
  float lo = b[0], hi = b[0];
  for (int64_t i = 0; i < reference.numel(); ++i) lo = std::min(lo, b[i]), hi = std::max(hi, b[i]);
  ASSERT_GT(hi - lo, 0.f) << what << ": constant reference";
  double worst = 0;
  for (int64_t i = 0; i < reference.numel(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    worst = std::isfinite(d) ? std::max(worst, d) : 1e30;
  }
  EXPECT_LE(worst, 1e-4 * (hi - lo)) << what;
}

// The astronaut photo of Debian's python3-skimage as [1, 3, 512, 512] floats, or an undefined tensor.
inline Tensor astronaut_nchw() {
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load("/usr/lib/python3/dist-packages/skimage/data/astronaut.png", &w, &h, &n, 3);
  if (!data) return Tensor();
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, h, w});
  float* xp = x.data_as<float>();
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < w * h; ++i) xp[c * w * h + i] = data[static_cast<size_t>(i) * 3 + c];
  stbi_image_free(data);
  return x;
}

}  // namespace retinaface_golden
}  // namespace ninegrid
