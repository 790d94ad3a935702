// RetinaFace-MobileNet0.25 with layout-tolerant pools, Resize and Crop: at --opt-level 2 the layout pass
// keeps the whole network channel-blocked through its two upsample(+crop) stages, so the optimised graph
// holds no ng.Reorder at all (the heads' convs write plain NCHW themselves), in both formats; and the
// blocked network still computes the reference outputs: ncnn's golden files for the ncnn model, PyTorch's
// outputs for the ONNX export (scripts/make_test_models.sh), both on the astronaut photo.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/npy.h"
#include "ninegrid/ninegrid.h"
#include "core/cpu_features.h"
#include "runtime/model_impl.h"
#include "unit/retinaface_golden_util.h"

namespace ninegrid {
namespace {

using namespace retinaface_golden;

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
  if (isa_block(hardware_isa()) > 1) {
    EXPECT_EQ(blocked_count(*m, "Resize"), 2) << "both upsamplings run blocked";
  }
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
