// Tuned plans give the reference's results: each whole model of the test set runs from a tuning cache in
// which every conv has another of its candidate plans than the rules' (cycling through algorithms, vector
// widths, Winograd tiles, register tiles, Strassen depths and thread splits) and, under AVX-512, every
// conv whose output block is free writes its other block (the global search's alternative layout); its
// outputs must match PyTorch's as closely as the rules' plans must (1e-4 of each output's range). The
// quantised models (scripts/make_test_models.sh's QDQ files) run their int8 convs from such a cache (the
// int8 policy's candidates: kernel families, AVX2 forms, splits) with two threads, and must give exactly
// the outputs of the integer reference kernels (isa ref).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/npy.h"
#include "graph/passes/passes.h"
#include "ninegrid/ninegrid.h"
#include "ops/conv_select.h"
#include "ops/qconv_select.h"
#include "runtime/layout_choice.h"
#include "runtime/model_impl.h"
#include "runtime/session_impl.h"
#include "runtime/tuning_cache.h"

#ifndef NINEGRID_CACHE_DIR
#define NINEGRID_CACHE_DIR NINEGRID_SOURCE_DIR "/.cache"
#endif

namespace ninegrid {
namespace {

std::string cache_dir() {
  const char* env = std::getenv("NINEGRID_CACHE");
  return env && *env ? std::string(env) : std::string(NINEGRID_CACHE_DIR);
}

// max |a - b| <= 1e-4 of b's range.
void expect_close(const Tensor& ours, const Tensor& reference, const std::string& what) {
  ASSERT_EQ(shape_str(ours.shape()), shape_str(reference.shape())) << what;
  const float* a = ours.data_as<float>();
  const float* b = reference.data_as<float>();
  float lo = b[0], hi = b[0];
  for (int64_t i = 0; i < reference.numel(); ++i) lo = std::min(lo, b[i]), hi = std::max(hi, b[i]);
  double worst = 0;
  for (int64_t i = 0; i < reference.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i])) << what << " output " << i;
    worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  }
  EXPECT_LE(worst, 1e-4 * (double(hi) - lo)) << what;
}

struct Tuned {
  int convs = 0, tuned = 0, layout_changes = 0;
};

// Writes a cache for `path` loaded with `base`: first the alternative layout (AVX-512 only), then for each
// conv of a session under that layout another candidate plan; returns the counts.
Tuned write_alternative_cache(const std::string& path, const Options& base, const std::string& cache) {
  Tuned t;
  TuningCacheFile file;
  TuningEntries& e = file.cpus[cpu_identity()];
  Options rules = base;
  rules.use_tuning_cache = false;
  const Isa isa = hardware_isa();
  const int max_block = isa_block(isa);
  {
    LayoutCapture capture;
    auto m = Model::load(path, rules);
    if (capture.captured && max_block >= 16) {
      const LayoutProblem pb = layout_problem(capture.graph, max_block);
      std::map<int, int64_t> chosen;
      for (const LayoutProblem::Node& n : pb.nodes)
        if (n.kind == LayoutProblem::Kind::Conv && n.tag >= 0 && n.choices.size() > 1) chosen[n.tag] = n.choices[1];
      if (!chosen.empty()) e.layouts[capture.fingerprint] = chosen;
      t.layout_changes = static_cast<int>(chosen.size());
    }
  }
  write_tuning_cache(cache, file);
  Options with_layout = base;
  with_layout.tuning_cache = cache;
  auto m = Model::load(path, with_layout);
  auto s = m->create_session();
  const ExecSettings& settings = InternalAccess::impl(*m).resolved().exec;
  int i = 0;
  for (const PlanStep& st : InternalAccess::impl(*s).plan().steps) {
    ConvTunable* c = st.op->conv_tunable();
    if (!c) continue;
    ++t.convs;
    const ConvKey& k = c->key();
    const std::vector<ConvPlan> candidates =
        k.int8 ? qconv_plan_candidates(k, settings) : conv_plan_candidates(k.p, k.in_block, k.out_block, settings);
    // Not the rules' plan when there is another.
    ConvPlan pick = candidates[static_cast<size_t>(i++ * 5 + 1) % candidates.size()];
    if (pick == c->plan() && candidates.size() > 1) pick = candidates[(static_cast<size_t>(i) * 5 + 2) % candidates.size()];
    e.convs[format_conv_key(k)] = TunedConv{pick, 1, 1};
  }
  write_tuning_cache(cache, file);
  return t;
}

void expect_tuned_model_matches(const std::string& model, const std::string& input_path,
                                const std::vector<std::pair<std::string, std::string>>& outputs,
                                const std::map<std::string, Shape>& shapes = {}) {
  for (const std::string& f : {model, input_path})
    if (!std::ifstream(f).good()) FAIL() << "missing " << f << ": run scripts/make_test_models.sh";
  const std::string cache =
      (std::filesystem::temp_directory_path() / ("ninegrid-tuned-models-" + std::to_string(::getpid()))).string();
  Options o;
  o.input_shapes = shapes;
  const Tuned t = write_alternative_cache(model, o, cache);
  o.tuning_cache = cache;
  auto m = Model::load(model, o);
  EXPECT_TRUE(m->warnings().empty());
  auto s = m->create_session();
  auto got = s->run({{m->inputs()[0].name, read_npy(input_path)}});
  int tuned = 0;
  for (const StepProfile& p : s->profile()) tuned += p.tuned;
  EXPECT_EQ(tuned, t.convs) << "every conv must run its plan from the cache";
  if (isa_block(hardware_isa()) >= 16) {
    EXPECT_GT(t.layout_changes, 0);
  }
  for (const auto& [name, reference] : outputs) {
    ASSERT_EQ(got.count(name), 1u) << name;
    expect_close(got.at(name), read_npy(reference), model + " " + name);
  }
  std::filesystem::remove(cache);
}

class TunedTorchvision : public ::testing::TestWithParam<const char*> {};

TEST_P(TunedTorchvision, MatchesPyTorch) {
  const std::string dir = cache_dir() + "/models/torchvision/";
  const std::string name = GetParam();
  auto m = Model::load(dir + name + ".onnx");
  expect_tuned_model_matches(dir + name + ".onnx", dir + name + ".input.npy",
                             {{m->outputs()[0].name, dir + name + ".expected.npy"}});
}

INSTANTIATE_TEST_SUITE_P(Models, TunedTorchvision,
                         ::testing::Values("mobilenet_v2", "mobilenet_v3_large", "resnet18", "resnet50",
                                           "shufflenet_v2_x1_0", "efficientnet_b0", "squeezenet1_1", "googlenet",
                                           "regnet_y_400mf"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

TEST(TunedRetinaFace, MatchesPyTorch) {
  const std::string dir = cache_dir() + "/models/";
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* out : {"face_rpn_cls_prob_reshape_stride32", "face_rpn_bbox_pred_stride16",
                          "face_rpn_landmark_pred_stride8", "face_rpn_cls_prob_reshape_stride8"})
    outputs.push_back({out, dir + "retinaface_mnet25." + out + ".npy"});
  expect_tuned_model_matches(dir + "retinaface_mnet25.onnx", dir + "retinaface_mnet25.input.npy", outputs);
}

class TunedQuantized : public ::testing::TestWithParam<const char*> {};

TEST_P(TunedQuantized, MatchesTheReferenceKernelsExactly) {
  const std::string path = cache_dir() + "/models/quantized/" + GetParam() + ".onnx";
  if (!std::ifstream(path).good()) FAIL() << "missing " << path << ": run scripts/make_test_models.sh";
  if (hardware_isa() == Isa::Ref) GTEST_SKIP() << "no int8 vector kernels on this CPU";
  const std::string cache =
      (std::filesystem::temp_directory_path() / ("ninegrid-tuned-int8-" + std::to_string(::getpid()))).string();
  Options o;
  o.threads = 2;
  const Tuned t = write_alternative_cache(path, o, cache);
  o.tuning_cache = cache;
  auto m = Model::load(path, o);
  EXPECT_TRUE(m->warnings().empty());
  auto s = m->create_session();
  int int8_convs = 0;
  for (const PlanStep& st : InternalAccess::impl(*s).plan().steps)
    if (ConvTunable* c = st.op->conv_tunable()) int8_convs += c->key().int8;
  EXPECT_GT(int8_convs, 5) << "the model's convs must run as int8 convs";
  // A deterministic input in the model's usual range.
  const ValueInfo& in = m->inputs()[0];
  Shape shape = in.shape;
  for (int64_t& d : shape) d = d < 0 ? 1 : d;
  Tensor x = Tensor::zeros(DataType::Float32, shape);
  float* xv = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) xv[i] = static_cast<float>((i * 7919) % 1000) / 400.0f - 1.2f;
  auto got = s->run({{in.name, x}});
  int tuned = 0;
  for (const StepProfile& p : s->profile()) tuned += p.tuned;
  EXPECT_EQ(tuned, t.convs) << "every conv must run its plan from the cache";
  Options ref;
  ref.isa = "ref";
  ref.use_tuning_cache = false;
  auto mr = Model::load(path, ref);
  auto want = mr->create_session()->run({{in.name, x}});
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, w] : want) {
    ASSERT_EQ(got.count(name), 1u) << name;
    const Tensor& g = got.at(name);
    ASSERT_EQ(g.nbytes(), w.nbytes()) << name;
    EXPECT_EQ(std::memcmp(g.data(), w.data(), w.nbytes()), 0) << GetParam() << " " << name;
  }
  std::filesystem::remove(cache);
}

INSTANTIATE_TEST_SUITE_P(Models, TunedQuantized,
                         ::testing::Values("resnet18_qdq", "mobilenet_v2_qdq", "squeezenet1_1_qdq",
                                           "resnet18_qoperator"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace ninegrid
