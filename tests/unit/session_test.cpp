// Sessions: one model shared by sessions running at the same time on different threads, repeated runs,
// re-planning when the input shape changes, input binding errors, and the thread settings.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include "core/thread_pool.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"
#include "runtime/session_impl.h"

namespace ninegrid {
namespace {

const char* kParam = NINEGRID_SHARED_DIR "/models/mnet.25-opt.param";

Tensor image(int64_t h, int64_t w, unsigned seed) {
  Tensor t = Tensor::empty(DataType::Float32, {1, 3, h, w});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 255.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::equal(a.data_as<float>(), a.data_as<float>() + a.numel(), b.data_as<float>());
}

TEST(Session, ConcurrentSessionsOfOneModelAgreeWithSequentialRuns) {
  Options o;
  o.threads = 1;
  auto model = Model::load(kParam, o);
  std::vector<Tensor> inputs = {image(96, 128, 1), image(96, 128, 2), image(64, 64, 3)};
  std::vector<std::map<std::string, Tensor>> expected;
  {
    auto s = model->create_session();
    for (const Tensor& x : inputs) expected.push_back(s->run({{"data", x}}));
  }
  std::vector<std::vector<std::map<std::string, Tensor>>> got(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto s = model->create_session();
      for (int rep = 0; rep < 2; ++rep)
        for (const Tensor& x : inputs) got[t].push_back(s->run({{"data", x}}));
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(got[t].size(), 2 * inputs.size());
    for (size_t i = 0; i < got[t].size(); ++i)
      for (const auto& kv : expected[i % inputs.size()])
        EXPECT_TRUE(same(got[t][i].at(kv.first), kv.second)) << "thread " << t << " run " << i << " " << kv.first;
  }
}

// Many sessions of one model, each with its own workers, on more threads than the machine has cores
// (the ThreadSanitizer build runs this too): every output is bit for bit what one session computes alone
// with the same number of workers (the same work split).
TEST(Session, ManySessionsOnManyThreadsAreBitIdenticalToOne) {
  constexpr int kSessions = 8, kWorkers = 2, kRuns = 3;
  Options o;
  o.threads = kWorkers;
  auto model = Model::load(kParam, o);
  std::vector<Tensor> inputs;
  for (int i = 0; i < kSessions; ++i) inputs.push_back(image(64 + 16 * (i % 3), 80, 20 + i));
  std::vector<std::map<std::string, Tensor>> expected;
  {
    auto s = model->create_session();
    for (const Tensor& x : inputs) expected.push_back(s->run({{"data", x}}));
  }
  std::vector<int> mismatches(kSessions, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSessions; ++t)
    threads.emplace_back([&, t] {
      auto s = model->create_session();
      for (int r = 0; r < kRuns; ++r) {
        const int i = (t + r) % kSessions;
        auto got = s->run({{"data", inputs[i]}});
        for (const auto& kv : expected[i]) mismatches[t] += !same(got.at(kv.first), kv.second);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kSessions; ++t) EXPECT_EQ(mismatches[t], 0) << "session " << t;
}

// A model with a fixed input shape packs its kernels at load and releases its float weights; sessions
// created on two threads at once adopt those kernels and run them at the same time (the ThreadSanitizer
// build runs this too): every output is bit for bit what one session computes alone, and no session
// packed anything of its own.
TEST(Session, SessionsOnTwoThreadsShareTheKernelsAFixedShapeModelPackedAtLoad) {
  Options o;
  o.threads = 1;
  o.input_shapes = {{"data", {1, 3, 96, 128}}};
  auto model = Model::load(kParam, o);
  const PreparedKernels& kernels = InternalAccess::impl(*model).prepared();
  const int64_t packed = kernels.added();
  ASSERT_GT(packed, 20);
  ASSERT_GT(InternalAccess::impl(*model).released_bytes(), 0);
  std::vector<Tensor> inputs = {image(96, 128, 31), image(96, 128, 32)};
  std::vector<std::map<std::string, Tensor>> expected;
  {
    auto s = model->create_session();
    for (const Tensor& x : inputs) expected.push_back(s->run({{"data", x}}));
  }
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto s = model->create_session();
      for (int r = 0; r < 3; ++r) {
        const size_t i = static_cast<size_t>(t + r) % inputs.size();
        auto got = s->run({{"data", inputs[i]}});
        for (const auto& kv : expected[i]) mismatches[t] += !same(got.at(kv.first), kv.second);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 2; ++t) EXPECT_EQ(mismatches[t], 0) << "session " << t;
  EXPECT_EQ(kernels.added(), packed) << "a session packed kernels of its own";
}

// Options::spin_microseconds is each session's thread pool spin limit (-1: the pool's default), and the
// outputs do not depend on it.
TEST(Session, TheSpinSettingReachesTheThreadPool) {
  const Tensor x = image(96, 80, 7);
  std::map<std::string, Tensor> expected;
  for (int spin : {-1, 0, 1, 5000}) {
    Options o;
    o.threads = 2;
    o.spin_microseconds = spin;
    auto model = Model::load(kParam, o);
    auto s = model->create_session();
    EXPECT_EQ(InternalAccess::impl(*s).pool().spin(),
              spin < 0 ? ThreadPool::kDefaultSpin : std::chrono::microseconds(spin));
    EXPECT_EQ(s->threads(), 2);
    auto got = s->run({{"data", x}});
    if (expected.empty()) {
      expected = got;
      continue;
    }
    for (const auto& kv : expected) EXPECT_TRUE(same(got.at(kv.first), kv.second)) << "spin " << spin << " " << kv.first;
  }
}

TEST(Session, OutputsStayValidAfterTheNextRun) {
  auto model = Model::load(kParam);
  auto s = model->create_session();
  Tensor first = s->run({{"data", image(64, 64, 4)}}).at("face_rpn_bbox_pred_stride32");
  Tensor copy = first.clone();
  s->run({{"data", image(64, 64, 5)}});
  EXPECT_TRUE(same(first, copy));
}

TEST(Session, InputErrorsNameTheInput) {
  auto model = Model::load(kParam);
  auto s = model->create_session();
  try {
    s->set_input("data", Tensor::zeros(DataType::Float32, {3, 64, 64}));
    FAIL() << "a rank-3 input was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s->set_input("data", Tensor::zeros(DataType::Int64, {1, 3, 8, 8})), Error);
  EXPECT_THROW(s->set_input("nope", Tensor::zeros(DataType::Float32, {1, 3, 8, 8})), Error);
  EXPECT_THROW(s->run(), Error);  // nothing bound yet
}

}  // namespace
}  // namespace ninegrid
