// Feeds the input as a tuning cache file (the text `ninegrid tune` writes, which every load reads from the
// user's cache directory) to a load of a fixed real model, RetinaFace mnet.25 at 32x32 on AVX2 with one
// thread, runs it, and compares every output with the rules' run. The cache is never trusted: a plan or
// layout the policy accepts must compute what the rules' plans compute, and one it refuses must leave the
// rules' plan. A mismatch beyond float rounding is a finding (the harness aborts), as is a crash.
//
// A line "cpu THIS" stands for this CPU's identity, so that seeds written on one machine reach the plans'
// use on another (a cache holding only other CPUs' entries is ignored before any plan is read).
//
// Seeds: with NINEGRID_FUZZ_TUNING_SEEDS=DIR the harness writes its seed corpus into DIR and exits
// (scripts/fuzz.sh does this before fuzzing): the cache ninegrid::tune writes for the fixture, and for each
// conv entry that file with the entry's plan replaced by every kernel family, Winograd tile, Strassen
// depth and thread split, so the fuzzer starts from plans that reach every driver.
//
// The .param is $NINEGRID_FUZZ_NCNN_PARAM or the build's default (../shared/models/mnet.25-opt.param),
// its .bin beside it.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "fuzz_input.h"
#include "ninegrid/ninegrid.h"
#include "ninegrid/tune.h"
#include "ops/conv_plan.h"

namespace {

using ninegrid::Tensor;

constexpr int64_t kSide = 32;  // the fixture's input: 1x3x32x32 (a run takes about a millisecond)
const char kThisCpu[] = "cpu THIS";

std::string g_param_path, g_param, g_bin, g_cache_path;
std::map<std::string, std::vector<float>> g_reference;  // the rules' outputs

ninegrid::Options fixture_options() {
  ninegrid::Options o;
  o.threads = 1;
  o.isa = "avx2";  // the keys name the ISA: seeds from any x86-64 machine with AVX2 match on another
  o.input_shapes["data"] = {1, 3, kSide, kSide};
  return o;
}

std::shared_ptr<ninegrid::Model> load(const ninegrid::Options& o) {
  return ninegrid::Model::load_ncnn(g_param, g_bin.data(), g_bin.size(), o);
}

std::map<std::string, std::vector<float>> run(const ninegrid::Model& model) {
  Tensor input = Tensor::empty(ninegrid::DataType::Float32, {1, 3, kSide, kSide});
  float* x = static_cast<float*>(input.data());
  for (int64_t i = 0; i < input.numel(); ++i) x[i] = static_cast<float>((i * 37 + i / 11) % 256);
  std::unique_ptr<ninegrid::Session> session = model.create_session();
  std::map<std::string, std::vector<float>> outputs;
  for (const auto& [name, t] : session->run({{"data", input}})) {
    const float* p = static_cast<const float*>(t.data());
    outputs[name].assign(p, p + t.numel());
  }
  return outputs;
}

// The text with every "cpu THIS" line naming this CPU.
std::string with_this_cpu(std::string text) {
  const std::string mine = "cpu " + ninegrid::cpu_identity();
  size_t at = text.find(kThisCpu);
  while (at != std::string::npos) {
    const size_t end = at + sizeof(kThisCpu) - 1;
    const bool whole_line =
        (at == 0 || text[at - 1] == '\n') && (end == text.size() || text[end] == '\n' || text[end] == '\r');
    if (whole_line) text.replace(at, sizeof(kThisCpu) - 1, mine);
    at = text.find(kThisCpu, whole_line ? at + mine.size() : at + 1);
  }
  return text;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) {
    std::fprintf(stderr, "tuning_cache_fuzzer: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

// Every plan a seed puts in place of a conv entry's own: each kernel family with its parameters, and the
// entry's own plan under each thread split.
std::vector<ninegrid::ConvPlan> variants(const ninegrid::ConvPlan& plan) {
  using ninegrid::ConvKernel;
  using ninegrid::ConvSplit;
  std::vector<ninegrid::ConvPlan> out;
  for (ConvKernel k : {ConvKernel::FirstLayer, ConvKernel::Direct, ConvKernel::Pointwise, ConvKernel::Depthwise,
                       ConvKernel::Winograd, ConvKernel::Strassen, ConvKernel::Indirect}) {
    ninegrid::ConvPlan v = plan;
    v.kernel = k;
    v.oc_tile = k == ConvKernel::Direct || k == ConvKernel::Pointwise ? 2 : 0;
    v.winograd_tile = k == ConvKernel::Winograd ? 4 : 0;
    v.strassen_levels = 0;
    v.split = ConvSplit::Auto;
    out.push_back(v);
    if (k == ConvKernel::Winograd) {
      v.winograd_tile = 2;
      out.push_back(v);
      v.winograd_tile = 6;
      out.push_back(v);
    }
    if (k == ConvKernel::Strassen) {
      v.strassen_levels = 1;
      out.push_back(v);
    }
    if (k == ConvKernel::Direct || k == ConvKernel::Pointwise) {
      v.oc_tile = 1;
      out.push_back(v);
    }
  }
  for (ConvSplit s : {ConvSplit::Serial, ConvSplit::Channels, ConvSplit::Rows, ConvSplit::Tiles}) {
    ninegrid::ConvPlan v = plan;
    v.split = s;
    out.push_back(v);
  }
  return out;
}

void write_seeds(const std::string& dir) {
  ninegrid::TuneOptions t;
  t.model = fixture_options();
  t.model.tuning_cache = g_cache_path;
  t.model.use_tuning_cache = false;  // time every conv
  t.budget_seconds = 60;
  ninegrid::tune(g_param_path, t);
  std::ifstream f(g_cache_path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);)
    lines.push_back(line.rfind("cpu ", 0) == 0 ? std::string(kThisCpu) : line);
  auto join = [](const std::vector<std::string>& ls) {
    std::string s;
    for (const std::string& l : ls) s += l + "\n";
    return s;
  };
  int written = 0;
  auto seed = [&](const std::string& text) {
    write_file(dir + "/seed-" + std::to_string(written++), text);
  };
  seed(join(lines));
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("conv ", 0) != 0) continue;
    const size_t bar1 = lines[i].find(" | "), bar2 = lines[i].find(" | ", bar1 + 3);
    if (bar1 == std::string::npos || bar2 == std::string::npos) continue;
    ninegrid::ConvPlan plan;
    if (!ninegrid::parse_conv_plan(lines[i].substr(bar1 + 3, bar2 - bar1 - 3), &plan)) continue;
    for (const ninegrid::ConvPlan& v : variants(plan)) {
      std::vector<std::string> edited = lines;
      edited[i] = lines[i].substr(0, bar1 + 3) + ninegrid::format_conv_plan(v) + lines[i].substr(bar2);
      seed(join(edited));
    }
  }
  std::fprintf(stderr, "tuning_cache_fuzzer: %d seeds written to %s\n", written, dir.c_str());
}

bool close_enough(float got, float want) {
  // Winograd F(6,3) against the direct kernels: relative differences of a few 1e-5 on this model.
  return std::fabs(got - want) <= 1e-3f + 1e-3f * std::fabs(want);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_param_path = ninegrid_fuzz::env_or("NINEGRID_FUZZ_NCNN_PARAM", NINEGRID_FUZZ_NCNN_PARAM_DEFAULT);
  g_param = ninegrid_fuzz::read_fixture(g_param_path);
  const std::string bin_path = g_param_path.substr(0, g_param_path.rfind('.')) + ".bin";
  g_bin = ninegrid_fuzz::read_fixture(bin_path);
  g_cache_path = "/tmp/ninegrid-tuning-cache-fuzzer-" + std::to_string(getpid());
  const std::string seeds = ninegrid_fuzz::env_or("NINEGRID_FUZZ_TUNING_SEEDS", "");
  if (!seeds.empty()) {
    write_seeds(seeds);
    std::remove(g_cache_path.c_str());
    std::exit(0);
  }
  ninegrid::Options rules = fixture_options();
  rules.use_tuning_cache = false;
  g_reference = run(*load(rules));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_file(g_cache_path, with_this_cpu(std::string(reinterpret_cast<const char*>(data), size)));
  ninegrid::Options o = fixture_options();
  o.tuning_cache = g_cache_path;
  std::map<std::string, std::vector<float>> outputs;
  try {
    std::shared_ptr<ninegrid::Model> model = load(o);
    if (!model->warnings().empty()) return 0;  // the file was ignored whole: the rules' plans, as the reference
    outputs = run(*model);
  } catch (const ninegrid::Error& e) {
    // A cache must never make a loadable model fail: whatever it holds, the rules' plan is the fallback.
    std::fprintf(stderr, "tuning_cache_fuzzer: the model failed with this cache: %s\n", e.what());
    std::abort();
  }
  for (const auto& [name, want] : g_reference) {
    const std::vector<float>& got = outputs[name];
    if (got.size() != want.size()) {
      std::fprintf(stderr, "tuning_cache_fuzzer: output %s has %zu values, the rules' run %zu\n", name.c_str(),
                   got.size(), want.size());
      std::abort();
    }
    for (size_t i = 0; i < want.size(); ++i)
      if (!close_enough(got[i], want[i])) {
        std::fprintf(stderr, "tuning_cache_fuzzer: output %s[%zu] = %g, the rules' run %g\n", name.c_str(), i,
                     static_cast<double>(got[i]), static_cast<double>(want[i]));
        std::abort();
      }
  }
  return 0;
}
