// Weights held once: a model whose plan cannot change (fixed input shapes) packs its weights at load and
// releases the float constants its ops have packed; its sessions adopt the packed kernels instead of
// packing their own (runtime/prepared_kernels.h). A model with dynamic shapes keeps its constants, and
// its sessions share the kernels of the shapes they plan for. Checked here: outputs against PyTorch's or
// ncnn's golden files from the first session, from sessions created after it and from a session that
// re-plans for another shape; the shared kernels by the model's counters and by the bytes the engine's
// allocator holds (aligned_memory_live_bytes), not by the noisy resident set.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "core/aligned_memory.h"
#include "core/npy.h"
#include "ninegrid/ninegrid.h"
#include "ops/conv_select.h"
#include "ops/op.h"
#include "runtime/model_impl.h"
#include "runtime/session_impl.h"
#include "unit/retinaface_golden_util.h"

namespace ninegrid {
namespace {

using namespace retinaface_golden;

const ModelImpl& impl(const Model& m) { return InternalAccess::impl(m); }
const SessionImpl& impl(Session& s) { return InternalAccess::impl(s); }

int64_t constant_bytes(const Graph& g, bool released) {
  int64_t bytes = 0;
  for (const Value& v : g.values)
    if (v.is_constant() && v.constant_released == released)
      bytes += released ? shape_numel(v.shape) * static_cast<int64_t>(dtype_size(v.dtype)) : v.constant.nbytes();
  return bytes;
}

// ResNet-18 (fixed input shape): the float weights of every conv and of the classifier are released at
// load, and the first session, one created after it and one created while the first is alive all compute
// PyTorch's output.
TEST(ReleasedWeights, SessionsOfAModelWithoutItsFloatWeightsMatchPyTorch) {
  const std::string dir = cache_dir() + "/models/torchvision/";
  for (const char* f : {"resnet18.onnx", "resnet18.input.npy", "resnet18.expected.npy"})
    ASSERT_TRUE(std::ifstream(dir + f).good()) << "missing " << dir << f << ": run scripts/make_test_models.sh";
  Options o;
  o.threads = 1;
  auto model = Model::load(dir + "resnet18.onnx", o);
  const Graph& g = impl(*model).graph();
  // ResNet-18 has 11.7 M parameters (44.6 MiB), nearly all of them in its convs and its classifier.
  EXPECT_GT(impl(*model).released_bytes(), int64_t(40) << 20);
  EXPECT_EQ(impl(*model).released_bytes(), constant_bytes(g, true));
  EXPECT_LT(constant_bytes(g, false), int64_t(1) << 20) << "float weights left in the graph";

  const Tensor input = read_npy(dir + "resnet18.input.npy");
  const Tensor expected = read_npy(dir + "resnet18.expected.npy");
  const std::string in = model->inputs()[0].name, out = model->outputs()[0].name;
  auto first = model->create_session();
  expect_close(first->run({{in, input}}).at(out), expected, "first session");
  auto second = model->create_session();
  expect_close(second->run({{in, input}}).at(out), expected, "second session, the first alive");
  first.reset();
  second.reset();
  auto third = model->create_session();
  expect_close(third->run({{in, input}}).at(out), expected, "a session after the others were destroyed");
}

// Sessions adopt what the model packed at load: none packs anything, and a second session adds to the
// engine's memory only its own working memory (its arena), not another copy of the packed weights.
TEST(SharedKernels, SessionsOfAFixedShapeModelPackNothing) {
  const std::string path = cache_dir() + "/models/torchvision/squeezenet1_1.onnx";
  ASSERT_TRUE(std::ifstream(path).good()) << "missing " << path << ": run scripts/make_test_models.sh";
  Options o;
  o.threads = 1;
  const int64_t before_load = aligned_memory_live_bytes();
  auto model = Model::load(path, o);
  const int64_t model_bytes = aligned_memory_live_bytes() - before_load;
  const PreparedKernels& kernels = impl(*model).prepared();
  const int64_t packed = kernels.added();
  ASSERT_GT(packed, 20) << "SqueezeNet's 26 convs should have been packed at load";
  ASSERT_GT(model_bytes, int64_t(4) << 20) << "SqueezeNet's packed weights are about 5 MB";

  auto first = model->create_session();
  const int64_t after_first = aligned_memory_live_bytes();
  auto second = model->create_session();
  const int64_t after_second = aligned_memory_live_bytes();
  EXPECT_EQ(kernels.added(), packed) << "a session packed weights of its own";
  EXPECT_EQ(kernels.reused(), 2 * packed);
  const int64_t arena = static_cast<int64_t>(impl(*second).plan().arena_bytes);
  EXPECT_LE(after_second - after_first, arena + (int64_t(256) << 10))
      << "the second session holds more than its working memory (" << arena << " bytes)";
  EXPECT_LT(after_second - after_first, model_bytes / 2);
}

// RetinaFace from ncnn's files without an input size: every session plans for the shapes it is given, so
// the model keeps its float weights; sessions planning for the same shape share one set of kernels, and
// a session that re-plans for another shape computes ncnn's golden outputs with kernels another session
// packed.
TEST(SharedKernels, DynamicShapeSessionsShareKernelsPerShapeAndReplanCorrectly) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  const Tensor photo = astronaut_nchw();
  ASSERT_TRUE(photo.defined()) << "cannot read the astronaut photo";
  Options o;
  o.threads = 1;
  auto model = Model::load(kNcnnModel, o);
  const PreparedKernels& kernels = impl(*model).prepared();
  EXPECT_EQ(impl(*model).released_bytes(), 0);
  EXPECT_EQ(kernels.added(), 0) << "nothing to pack before a shape is known";

  auto a = model->create_session();
  a->prepare({{"data", {1, 3, 320, 320}}});
  const int64_t packed = kernels.added();
  ASSERT_GT(packed, 20);
  const int64_t before_b = aligned_memory_live_bytes();
  auto b = model->create_session();
  b->prepare({{"data", {1, 3, 320, 320}}});
  EXPECT_EQ(kernels.added(), packed) << "the second session at the same shape packed again";
  EXPECT_LE(aligned_memory_live_bytes() - before_b,
            static_cast<int64_t>(impl(*b).plan().arena_bytes) + (int64_t(256) << 10));

  // b re-plans for the photo (packing for that shape), then a re-plans too and adopts b's kernels.
  auto out_b = b->run({{"data", photo}});
  const int64_t packed_photo = kernels.added() - packed;
  EXPECT_GT(packed_photo, 20);
  auto out_a = a->run({{"data", photo}});
  EXPECT_EQ(kernels.added() - packed, packed_photo) << "the re-planning session packed again";
  for (const char* name : kOutputs) {
    const Tensor golden = read_npy(kGoldenDir + name + ".npy");
    expect_close(out_b.at(name), golden, std::string("re-planned session, ") + name);
    expect_close(out_a.at(name), golden, std::string("session adopting its kernels, ") + name);
  }
}

// The same model given the photo's size at load: its weights are released, and every session still
// computes the golden outputs.
TEST(ReleasedWeights, NcnnModelWithAFixedShapeMatchesNcnnGolden) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  const Tensor photo = astronaut_nchw();
  ASSERT_TRUE(photo.defined()) << "cannot read the astronaut photo";
  Options o;
  o.threads = 1;
  o.input_shapes = {{"data", photo.shape()}};
  auto model = Model::load(kNcnnModel, o);
  EXPECT_GT(impl(*model).released_bytes(), int64_t(1) << 20) << "RetinaFace-MobileNet0.25 has 1.7 MB of weights";
  for (int s = 0; s < 2; ++s) {
    auto out = model->create_session()->run({{"data", photo}});
    for (const char* name : kOutputs)
      expect_close(out.at(name), read_npy(kGoldenDir + name + ".npy"), "session " + std::to_string(s) + ", " + name);
  }
}

// A model whose weights were released at load cannot be planned for another input shape (there would be
// nothing to pack from): a session given another shape, by prepare() or by run(), gets a clear Error
// naming the input and the shape it expects, before any planning, and afterwards still runs the declared
// shape, matching the same model loaded without a fixed shape (which keeps its weights and packs for the
// shape it is given).
TEST(ReleasedWeights, AnotherInputShapeIsAClearErrorAndTheSessionStillRuns) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  Options o;
  o.threads = 1;
  auto dynamic = Model::load(kNcnnModel, o);
  o.input_shapes = {{"data", {1, 3, 96, 128}}};
  auto fixed = Model::load(kNcnnModel, o);
  ASSERT_GT(impl(*fixed).released_bytes(), int64_t(1) << 20);
  Tensor x = Tensor::empty(DataType::Float32, {1, 3, 96, 128});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>((i * 37) % 255);
  Tensor other = Tensor::empty(DataType::Float32, {1, 3, 128, 96});
  for (int64_t i = 0; i < other.numel(); ++i) other.data_as<float>()[i] = 1.f;

  auto s = fixed->create_session();
  auto message_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const std::string& m : {message_of([&] { s->prepare({{"data", {1, 3, 128, 96}}}); }),
                               message_of([&] { s->run({{"data", other}}); })}) {
    EXPECT_NE(m.find("'data'"), std::string::npos) << m;
    EXPECT_NE(m.find("1x3x96x128"), std::string::npos) << m;
    EXPECT_EQ(m.find("internal error"), std::string::npos) << m;
  }
  const auto ours = s->run({{"data", x}});
  const auto reference = dynamic->create_session()->run({{"data", x}});
  for (const char* name : kOutputs) expect_close(ours.at(name), reference.at(name), name);
}

// The graph of a model that released weights cannot make another model (internal API: tests build models
// from graphs): a clear Error naming a released constant, not a failure when the new model plans.
TEST(ReleasedWeights, AModelsGraphWithoutItsWeightsCannotMakeAnotherModel) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  Options o;
  o.input_shapes = {{"data", {1, 3, 64, 64}}};
  auto fixed = Model::load(kNcnnModel, o);
  ASSERT_GT(impl(*fixed).released_bytes(), 0);
  try {
    ModelImpl again(impl(*fixed).graph(), o, "ncnn");
    ADD_FAILURE() << "a model was made from a graph without its weights";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was released by the model this graph comes from"), std::string::npos)
        << e.what();
  }
}

// The tuner's view of a conv (ConvTunable) in a session that adopted the model's kernels: the key, plan
// and cache flag the model's prepare chose, the same as a session that prepared its own; but no weights
// (the model released them), so candidate() is a clear Error rather than a read of freed memory. A model
// loaded for tuning (ModelLoadForTuning, as runtime/tuner.cpp loads) releases nothing and packs nothing
// at load: its session prepares its own convs and builds any of their candidate plans.
TEST(SharedKernels, AdoptedConvsReportTheirPlanAndBuildOnlyOnTheirOwnWeights) {
  ASSERT_TRUE(std::ifstream(kNcnnModel).good()) << "missing " << kNcnnModel;
  Options o;
  o.threads = 1;
  o.input_shapes = {{"data", {1, 3, 96, 128}}};
  o.use_tuning_cache = false;
  auto shared = Model::load(kNcnnModel, o);
  ASSERT_GT(impl(*shared).released_bytes(), int64_t(1) << 20);
  std::shared_ptr<Model> own;
  {
    ModelLoadForTuning for_tuning;
    own = Model::load(kNcnnModel, o);
  }
  EXPECT_EQ(impl(*own).released_bytes(), 0);
  EXPECT_EQ(impl(*own).prepared().added(), 0) << "a model loaded for tuning packed at load";

  auto adopting = shared->create_session();
  auto preparing = own->create_session();
  const PreparedKernels& kernels = impl(*shared).prepared();
  EXPECT_EQ(kernels.reused(), kernels.added()) << "the session did not adopt every kernel the model packed";
  const auto& a_steps = InternalAccess::impl(*adopting).plan().steps;
  const auto& p_steps = InternalAccess::impl(*preparing).plan().steps;
  ASSERT_EQ(a_steps.size(), p_steps.size());
  const ExecSettings& settings = impl(*own).resolved().exec;
  int convs = 0;
  for (size_t i = 0; i < a_steps.size(); ++i) {
    ConvTunable* a = a_steps[i].op->conv_tunable();
    ConvTunable* p = p_steps[i].op->conv_tunable();
    ASSERT_EQ(a == nullptr, p == nullptr) << "step " << i;
    if (!a) continue;
    ++convs;
    EXPECT_EQ(format_conv_key(a->key()), format_conv_key(p->key())) << "step " << i;
    EXPECT_EQ(a->plan(), p->plan()) << format_conv_key(a->key());
    EXPECT_FALSE(a->tuned());
    EXPECT_EQ(a_steps[i].op->algorithm(), p_steps[i].op->algorithm());
    try {
      a->candidate(a->plan());
      ADD_FAILURE() << "an adopted conv built a kernel without weights: " << format_conv_key(a->key());
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no weights"), std::string::npos) << e.what();
    }
    const ConvKey& k = p->key();
    for (const ConvPlan& plan : conv_plan_candidates(k.p, k.in_block, k.out_block, settings)) {
      std::unique_ptr<ConvCandidate> kernel = p->candidate(plan);
      EXPECT_NE(kernel, nullptr) << describe_plan(plan);
    }
  }
  EXPECT_GT(convs, 20) << "RetinaFace-MobileNet0.25 runs most of its convs on vector kernels";
}

}  // namespace
}  // namespace ninegrid
