// Feeds the input as an ONNX model to Model::load_onnx and, when every input has a known shape and all
// inputs together hold at most kMaxInputElements elements, runs it once: a session (memory plan, kernel
// preparation), deterministic input values, run(), and every output fetched. This reaches the kernels
// and the planner with shapes and attributes no test chose.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "ninegrid/ninegrid.h"
#include "runtime/session_impl.h"

namespace {

using ninegrid::DataType;
using ninegrid::Tensor;

// Small enough that one run of an ordinary op stays far below the timeout in the sanitizer build.
constexpr int64_t kMaxInputElements = 1 << 18;
// Work bounds for one run: a model of a few bytes can legitimately ask for billions of multiply-adds
// (a depthwise conv whose weight shape was edited to 1.7M output channels: 2.2 G MACs, minutes under
// ASan), which would be a slow input, not a hang. Such plans are loaded and planned but not run. Ops
// whose work per output grows with an attribute (pooling windows, Resize taps, LRN) count it in their
// MACs; the bytes bound covers the copies (nearest Resizes to 94 and 66 MB, 0.4-0.5 s in Release, took
// most of a minute under ASan).
constexpr int64_t kMaxRunMacs = int64_t(1) << 25;
constexpr int64_t kMaxRunBytes = int64_t(1) << 25;

template <class T>
void fill_as(Tensor& t, const T* pattern, size_t n) {
  T* p = static_cast<T*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = pattern[(i * 7 + i / 5) % n];
}

// The same values every time, so a finding reproduces: for floats a spread of small positive and
// negative numbers, for integers 0..2 (valid as indices, axes and repeat counts of small tensors).
void fill(Tensor& t) {
  if (t.numel() == 0) return;
  static const float f32[] = {0.5f, -1.25f, 2.f, 0.f, -0.125f, 1.f, -3.5f};
  static const double f64[] = {0.5, -1.25, 2., 0., -0.125, 1., -3.5};
  static const uint16_t f16[] = {0x3800, 0xBD00, 0x4000, 0x0000, 0xB000, 0x3C00, 0xC300};
  static const uint16_t bf16[] = {0x3F00, 0xBFA0, 0x4000, 0x0000, 0xBE00, 0x3F80, 0xC060};
  static const int64_t ints[] = {0, 1, 2};
  switch (t.dtype()) {
    case DataType::Float32: fill_as(t, f32, 7); return;
    case DataType::Float64: fill_as(t, f64, 7); return;
    case DataType::Float16: fill_as(t, f16, 7); return;
    case DataType::BFloat16: fill_as(t, bf16, 7); return;
    case DataType::Bool: {
      uint8_t* p = static_cast<uint8_t*>(t.data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = (i % 3) == 1;
      return;
    }
    default: break;
  }
  // Integer types: each element is 0, 1 or 2 in the tensor's own width (little-endian: the low byte).
  const size_t width = ninegrid::dtype_size(t.dtype());
  std::memset(t.data(), 0, t.nbytes());
  uint8_t* p = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i * width] = static_cast<uint8_t>(ints[(i * 7 + i / 5) % 3]);
}

// Whether every input shape is known and the inputs are small enough to run.
bool runnable(const ninegrid::Model& model) {
  int64_t total = 0;
  for (const ninegrid::ValueInfo& in : model.inputs()) {
    int64_t n = 1;
    for (int64_t d : in.shape) {
      if (d < 0 || d > kMaxInputElements) return false;
      n *= d;
      if (n > kMaxInputElements) return false;
    }
    total += n;
    if (total > kMaxInputElements) return false;
  }
  return true;
}

// Whether the planned steps' work is small enough to run within the harness's time limit.
bool cheap_enough(const ninegrid::Session& session) {
  int64_t macs = 0, bytes = 0;
  for (const ninegrid::StepProfile& step : session.profile()) {
    macs += step.macs;
    bytes += step.bytes;
    if (macs > kMaxRunMacs || bytes > kMaxRunBytes) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ninegrid::Options options;
  options.threads = 1;
  try {
    std::shared_ptr<ninegrid::Model> model = ninegrid::Model::load_onnx(data, size, options);
    if (!runnable(*model)) return 0;
    std::unique_ptr<ninegrid::Session> session = model->create_session();
    std::map<std::string, ninegrid::Shape> shapes;
    for (const ninegrid::ValueInfo& in : model->inputs()) shapes[in.name] = in.shape;
    session->prepare(shapes);
    if (!cheap_enough(*session)) return 0;
    // The tensors stay alive until run() returns: the session reads them in place.
    std::vector<Tensor> inputs;
    for (const ninegrid::ValueInfo& in : model->inputs()) {
      inputs.push_back(Tensor::empty(in.dtype, in.shape));
      fill(inputs.back());
      session->set_input(in.name, inputs.back());
    }
    // A model whose shapes depend on inputs' contents (a Reshape's target as an input) is planned only
    // once they are bound: plan now and check the work before running.
    ninegrid::InternalAccess::impl(*session).prepare_for_bound_inputs();
    if (!cheap_enough(*session)) return 0;
    session->run();
    for (const ninegrid::ValueInfo& out : model->outputs()) session->output(out.name);
  } catch (const ninegrid::Error&) {
  }
  return 0;
}
