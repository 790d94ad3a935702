// A session used wrongly must give a clear error, never read freed memory or race: borrowed inputs are
// bound for one run, a missing input is named, and a second thread calling into a busy session is
// refused instead of corrupting it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "graph_builder.h"
#include "ninegrid/ninegrid.h"

namespace ninegrid {
namespace {

using test_graph::GraphBuilder;

// x -> conv 3x3 (8 -> 8 channels) -> relu -> y, on a 1 x 8 x H x W input.
std::shared_ptr<Model> small_model(int64_t side, int threads = 1) {
  GraphBuilder b;
  b.input("x", {1, 8, side, side});
  b.constant("w", {8, 8, 3, 3});
  b.node("Conv", {"x", "w"}, {"c"}).attrs.set("pads", Attribute::of_ints({1, 1, 1, 1}));
  b.node("Relu", {"c"}, {"y"});
  b.output("y");
  Options o;
  o.threads = threads;
  return std::make_shared<Model>(std::make_unique<ModelImpl>(b.g, o, "onnx"));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SessionMisuse, ABorrowedInputIsBoundForOneRunOnly) {
  auto model = small_model(8);
  auto s = model->create_session();
  std::vector<float> pixels(8 * 8 * 8, 0.5f);
  s->set_input("x", Tensor::wrap(DataType::Float32, {1, 8, 8, 8}, pixels.data()));
  s->run();
  // The caller may free `pixels` now: a second run must not read it.
  const std::string e = error_of([&] { s->run(); });
  EXPECT_NE(e.find("'x' was not set"), std::string::npos) << e;
}

TEST(SessionMisuse, AnOwnedInputStaysBound) {
  auto model = small_model(8);
  auto s = model->create_session();
  Tensor x = test_graph::random_input({1, 8, 8, 8}, 3);
  s->set_input("x", x);
  s->run();
  const Tensor first = s->output("y");
  s->run();
  const Tensor second = s->output("y");
  ASSERT_EQ(first.numel(), second.numel());
  for (int64_t i = 0; i < first.numel(); ++i) ASSERT_EQ(first.data_as<float>()[i], second.data_as<float>()[i]);
}

TEST(SessionMisuse, RunWithAMapDoesNotReuseAnEarlierCallsBorrowedInput) {
  // Python's run({}) after a run with an array: the session kept the freed array bound and the conv
  // read it (heap use-after-free).
  auto model = small_model(8);
  auto s = model->create_session();
  {
    std::vector<float> pixels(8 * 8 * 8, 1.f);
    s->run({{"x", Tensor::wrap(DataType::Float32, {1, 8, 8, 8}, pixels.data())}});
  }
  const std::string e = error_of([&] { s->run(std::map<std::string, Tensor>{}); });
  EXPECT_NE(e.find("'x' was not set"), std::string::npos) << e;
  // A failing bind releases what the same call bound before it.
  std::vector<float> pixels(8 * 8 * 8, 1.f);
  const std::string bad = error_of([&] {
    s->run({{"x", Tensor::wrap(DataType::Float32, {1, 8, 8, 8}, pixels.data())},
            {"nope", Tensor::wrap(DataType::Float32, {1}, pixels.data())}});
  });
  EXPECT_NE(bad.find("no input named 'nope'"), std::string::npos) << bad;
  EXPECT_NE(error_of([&] { s->run(); }).find("was not set"), std::string::npos);
}

TEST(SessionMisuse, TwoThreadsOnOneSessionGetAnErrorInsteadOfARace) {
  // Before: glibc aborted on a corrupted heap in 2 of 6 trials, and the other runs' outputs were wrong.
  auto model = small_model(96, /*threads=*/1);
  Tensor x = test_graph::random_input({1, 8, 96, 96}, 5);
  Tensor expected;
  {
    auto ref = model->create_session();
    expected = ref->run({{"x", x}}).at("y");
  }
  auto s = model->create_session();
  s->set_input("x", x);
  std::atomic<int> refused{0}, wrong{0}, ran{0};
  std::atomic<bool> stop{false};
  auto worker = [&] {
    while (!stop.load()) {
      try {
        s->run();
        ++ran;
        Tensor y = s->output("y");
        for (int64_t i = 0; i < y.numel(); ++i)
          if (y.data_as<float>()[i] != expected.data_as<float>()[i]) {
            ++wrong;
            break;
          }
      } catch (const Error& e) {
        if (std::string(e.what()).find("another thread") != std::string::npos) ++refused;
        else ++wrong;
      }
    }
  };
  std::thread a(worker), b(worker);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (refused.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  a.join();
  b.join();
  EXPECT_GT(refused.load(), 0) << "the two threads never overlapped in " << ran.load() << " runs";
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(ran.load(), 0);
}

TEST(SessionMisuse, ProfileDescribesEveryStep) {
  auto model = small_model(16);
  auto s = model->create_session();
  EXPECT_FALSE(s->profile().empty()) << "planned at creation: every input shape is fixed";
  s->set_profiling(true);
  s->run({{"x", test_graph::random_input({1, 8, 16, 16}, 1)}});
  const std::vector<StepProfile> p = s->profile();
  ASSERT_EQ(p.size(), 1u) << "the Relu is fused into the conv";
  EXPECT_EQ(p[0].op_type, "Conv");
  EXPECT_EQ(p[0].fused, std::vector<std::string>{"Relu"});
  EXPECT_EQ(p[0].precision, "fp32");
  EXPECT_EQ(p[0].macs, 16 * 16 * 8 * 8 * 9);
  EXPECT_EQ(p[0].output_shapes, (std::vector<Shape>{{1, 8, 16, 16}}));
  EXPECT_GT(p[0].time_ms, 0.0);
  // Bytes: the input, the weights and the output (no bias).
  EXPECT_EQ(p[0].bytes, 4 * (8 * 16 * 16 + 8 * 8 * 9 + 8 * 16 * 16));
}

}  // namespace
}  // namespace ninegrid
