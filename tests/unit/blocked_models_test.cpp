// RetinaFace-MobileNet0.25 with layout-tolerant pools, Resize and Crop: at --opt-level 2 the layout pass
// keeps the whole network channel-blocked through its two upsample(+crop) stages, so the optimised graph
// holds no ng.Reorder at all (the heads' convs write plain NCHW themselves), in both formats; and the
// blocked network still computes the reference outputs: ncnn's golden files for the ncnn model, PyTorch's
// outputs for the ONNX export (scripts/make_test_models.sh), both on the astronaut photo.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/npy.h"
#include "ninegrid/ninegrid.h"
#include "core/cpu_features.h"
#include "runtime/model_impl.h"

#ifndef NINEGRID_CACHE_DIR
#define NINEGRID_CACHE_DIR NINEGRID_SOURCE_DIR "/.cache"
#endif

namespace ninegrid {
namespace {

const char* const kOutputs[] = {
    "face_rpn_cls_prob_reshape_stride32", "face_rpn_bbox_pred_stride32", "face_rpn_landmark_pred_stride32",
    "face_rpn_cls_prob_reshape_stride16", "face_rpn_bbox_pred_stride16", "face_rpn_landmark_pred_stride16",
    "face_rpn_cls_prob_reshape_stride8",  "face_rpn_bbox_pred_stride8",  "face_rpn_landmark_pred_stride8",
};

std::string cache_dir() {
  const char* env = std::getenv("NINEGRID_CACHE");
  return env && *env ? std::string(env) : std::string(NINEGRID_CACHE_DIR);
}
const std::string kNcnnModel = NINEGRID_SHARED_DIR "/models/mnet.25-opt.param";
const std::string kGoldenDir = NINEGRID_SHARED_DIR "/models/mnet.25-golden/";
std::string onnx_model() { return cache_dir() + "/models/retinaface_mnet25.onnx"; }

std::shared_ptr<Model> load_opt2(const std::string& path, std::map<std::string, Shape> shapes = {}) {
  Options o;
  o.opt_level = 2;
  o.input_shapes = std::move(shapes);
  return Model::load(path, o);
}

int count_ops(const Model& m, const std::string& op) {
  int n = 0;
  for (const Node& node : InternalAccess::impl(m).graph().nodes) n += node.op_type == op;
  return n;
}

// The blocked ops the network relies on: after planning they carry a block (when the CPU has one).
int blocked_count(const Model& m, const std::string& op) {
  int n = 0;
  for (const Node& node : InternalAccess::impl(m).graph().nodes)
    n += node.op_type == op && node.attrs.get_int("ng.in_block", 1) > 1;
  return n;
}

// |ours - reference| <= 1e-4 of the reference's range (ncnn_import_test and torchvision_models_test use
// the same bound), shapes equal after dropping a leading 1 that ncnn's (c, h, w) goldens lack.
void expect_close(const Tensor& ours, const Tensor& reference, const std::string& what) {
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

Tensor astronaut_nchw() {
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

TEST(RetinaFaceBlocked, NcnnModelHasNoLayoutTransforms) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  for (int64_t side : {640, 512, 320}) {
    auto m = load_opt2(kNcnnModel, {{"data", {1, 3, side, side}}});
    EXPECT_EQ(count_ops(*m, "ng.Reorder"), 0) << side << "x" << side;
    if (isa_block(hardware_isa()) > 1) {
      EXPECT_EQ(blocked_count(*m, "Resize"), 2) << "both upsamplings run blocked";
      EXPECT_EQ(blocked_count(*m, "ng.Crop"), 2) << "both crops run blocked";
    }
  }
}

TEST(RetinaFaceBlocked, OnnxModelHasNoLayoutTransforms) {
  ASSERT_TRUE(std::ifstream(onnx_model()).good()) << "missing " << onnx_model() << ": run scripts/make_test_models.sh";
  auto m = load_opt2(onnx_model());
  EXPECT_EQ(count_ops(*m, "ng.Reorder"), 0);
  if (isa_block(hardware_isa()) > 1) EXPECT_EQ(blocked_count(*m, "Resize"), 2) << "both upsamplings run blocked";
}

TEST(RetinaFaceBlocked, NcnnModelMatchesNcnnGolden) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  const Tensor x = astronaut_nchw();
  ASSERT_TRUE(x.defined()) << "cannot read the astronaut photo";
  auto m = load_opt2(kNcnnModel, {{"data", x.shape()}});
  ASSERT_EQ(count_ops(*m, "ng.Reorder"), 0);
  auto out = m->create_session()->run({{"data", x}});
  for (const char* name : kOutputs) expect_close(out[name], read_npy(kGoldenDir + name + ".npy"), name);
}

TEST(RetinaFaceBlocked, OnnxModelMatchesPyTorch) {
  const std::string dir = cache_dir() + "/models/";
  ASSERT_TRUE(std::ifstream(onnx_model()).good()) << "missing " << onnx_model() << ": run scripts/make_test_models.sh";
  auto m = load_opt2(onnx_model());
  ASSERT_EQ(count_ops(*m, "ng.Reorder"), 0);
  auto out = m->create_session()->run({{"data", read_npy(dir + "retinaface_mnet25.input.npy")}});
  for (const char* name : kOutputs)
    expect_close(out[name], read_npy(dir + "retinaface_mnet25." + name + ".npy"), name);
}

}  // namespace
}  // namespace ninegrid
