// ONNX conformance runner: executes ONNX's backend node tests (Debian libonnx-testdata) through ninegrid.
//
//   onnx_conformance ROOT [--filter SUBSTR] [--verbose] [--threads N] [--must-pass FILE]
// (--verbose adds each test's time; --threads sets the session's workers, default 1; --must-pass names a
// file listing tests, one per line, '#' comments, that must PASS: a SKIP of one of them fails the run too,
// and so does a listed test that is not there)
//
// ROOT holds one directory per test (or is itself one): model.onnx plus test_data_set_*/input_<i>.pb and
// output_<i>.pb, serialized TensorProtos bound to the model's inputs and outputs in order. Each test is
//   SKIP  when the model uses an operator ninegrid does not register, or when loading or running fails
//         with an error that says the feature is unsupported (a dtype, an attribute value, external data);
//   FAIL  on any other error or on an output that differs in dtype, shape or value;
//   PASS  otherwise.
// Values are compared as ONNX's backend tests do: |got - expected| <= atol + rtol * |expected| with
// rtol = 1e-3, atol = 1e-7 for floating types (NaN matches NaN), exact for integers and bools.
// Exit status 1 if anything failed, or a test listed by --must-pass did not pass.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "import/onnx/onnx_importer.h"
#include "import/onnx/tensor_proto.h"
#include "ninegrid/ninegrid.h"
#include "ops/op.h"

namespace fs = std::filesystem;
using namespace ninegrid;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

enum class Status { Pass, Fail, Skip };

struct Outcome {
  Status status = Status::Pass;
  std::string reason;        // what to print after the status
  std::string skip_group;    // SKIP only: the reason with node names removed, for the summary
};

std::string read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path.string() + "'");
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error("cannot read '" + path.string() + "'");
  return data;
}

// Reads a serialized TensorProto. ONNX's generator writes bfloat16 data through numpy, which has no
// bfloat16, so those files hold uint16 tensors of the same bits: `want` (the dtype the model declares)
// lets such a file be read as the bfloat16 it stands for.
Tensor read_tensor(const fs::path& path, DataType want) {
  std::string bytes = read_bytes(path);
  Tensor t;
  try {
    t = parse_tensor_proto(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(path.filename().string() + ": " + e.what());
  }
  if (want == DataType::BFloat16 && t.dtype() == DataType::UInt16) {
    Tensor b = Tensor::empty(DataType::BFloat16, t.shape());
    std::memcpy(b.data(), t.data(), t.nbytes());
    return b;
  }
  return t;
}

// Files "<prefix><N>.pb" in `dir`, ordered by N (so input_10 follows input_9).
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<long, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - 3, 3, ".pb") != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) continue;
    found.emplace_back(std::stol(digits), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i].first != static_cast<long>(i))
      throw Error(dir.filename().string() + ": " + prefix + std::to_string(i) + ".pb is missing");
    out.push_back(found[i].second);
  }
  return out;
}

// Tests whose data contradicts their own model in the ONNX release Debian ships (1.12), checked by hand;
// no correct engine can pass them, so they are skipped with the reason rather than counted as failures.
struct DefectiveTest {
  const char* name;
  const char* reason;
};
const DefectiveTest kDefectiveTestData[] = {
    {"test_castlike_BFLOAT16_to_FLOAT", "defective test data: model declares input 'like' as 3x4, input_1.pb is 1"},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded",
     "defective test data: model declares input 'like' as 3x4, input_1.pb is 1"},
    {"test_castlike_FLOAT_to_BFLOAT16", "defective test data: model declares input 'like' as 3x4, input_1.pb is 1"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded",
     "defective test data: model declares input 'like' as 3x4, input_1.pb is 1"},
    // ONNX 1.12's expected values truncate float to bfloat16; the Cast spec since opset 19, PyTorch and
    // ninegrid round to nearest even, so the two differ in the last bfloat16 bit.
    {"test_cast_FLOAT_to_BFLOAT16", "outdated test data: expects truncation, ninegrid rounds to nearest even"},
};

bool says_unsupported(const std::string& message) {
  return message.find("unsupported") != std::string::npos || message.find("not supported") != std::string::npos;
}

// "node 'conv_3' (Conv): pads ... unsupported" -> "Conv: pads ... unsupported", so that skips of the same
// kind group together in the summary. Also drops a leading "<path>: " added by Model::load.
std::string skip_group_of(std::string message, const std::string& path_prefix) {
  if (!path_prefix.empty() && message.compare(0, path_prefix.size(), path_prefix) == 0)
    message.erase(0, path_prefix.size());
  size_t at;
  while ((at = message.find("node '")) != std::string::npos) {
    size_t close = message.find("' (", at + 6);
    if (close == std::string::npos) break;
    size_t paren = message.find(')', close);
    if (paren == std::string::npos) break;
    // keep the operator name that follows in parentheses
    message = message.substr(0, at) + message.substr(close + 3, paren - close - 3) + message.substr(paren + 1);
  }
  return message;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

bool is_floating(DataType t) {
  return t == DataType::Float32 || t == DataType::Float64 || t == DataType::Float16 || t == DataType::BFloat16;
}

double float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::Float32: return t.data_as<float>()[i];
    case DataType::Float64: return t.data_as<double>()[i];
    case DataType::Float16: return half_to_float(static_cast<const uint16_t*>(t.data())[i]);
    case DataType::BFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(t.data())[i]);
    default: return 0;
  }
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Empty if equal; otherwise what differs.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  const int64_t n = want.numel();
  int64_t bad = 0, first = -1;
  std::string detail;
  if (is_floating(want.dtype())) {
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double a = float_at(got, i), b = float_at(want, i);
      bool ok;
      if (std::isnan(b)) ok = std::isnan(a);
      else if (std::isinf(b)) ok = a == b;
      else ok = std::fabs(a - b) <= kAtol + kRtol * std::fabs(b);
      if (ok) continue;
      ++bad;
      worst = std::isnan(a) || std::isinf(a) ? INFINITY : std::max(worst, std::fabs(a - b));
      if (first < 0) {
        first = i;
        detail = "got " + format_double(a) + ", expected " + format_double(b);
      }
    }
    if (bad) detail += " (max |diff| " + format_double(worst) + ")";
  } else {
    const size_t elem = dtype_size(want.dtype());
    const uint8_t* a = static_cast<const uint8_t*>(got.data());
    const uint8_t* b = static_cast<const uint8_t*>(want.data());
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(a + i * elem, b + i * elem, elem) == 0) continue;
      ++bad;
      if (first < 0) {
        first = i;
        int64_t va = 0, vb = 0;
        std::memcpy(&va, a + i * elem, elem);  // little-endian: the low bytes hold the value
        std::memcpy(&vb, b + i * elem, elem);
        if (elem < 8 && want.dtype() != DataType::UInt8 && want.dtype() != DataType::UInt16 &&
            want.dtype() != DataType::UInt32 && want.dtype() != DataType::Bool) {
          const int shift = static_cast<int>(64 - 8 * elem);  // sign-extend
          va = static_cast<int64_t>(static_cast<uint64_t>(va) << shift) >> shift;
          vb = static_cast<int64_t>(static_cast<uint64_t>(vb) << shift) >> shift;
        }
        detail = "got " + std::to_string(va) + ", expected " + std::to_string(vb);
      }
    }
  }
  if (!bad) return "";
  return std::to_string(bad) + " of " + std::to_string(n) + " elements differ; first at index " +
         std::to_string(first) + ": " + detail;
}

// The first operator of the model that no registered op implements, or "" if all are.
std::string first_unsupported_op(const std::string& model_bytes) {
  Graph g = import_onnx(model_bytes.data(), model_bytes.size());
  std::set<std::string> missing;
  for (const Node& n : g.nodes)
    if (!OpRegistry::instance().supports(n.op_type)) missing.insert(n.op_type);
  return missing.empty() ? "" : *missing.begin();
}

Outcome run_data_set(const fs::path& set_dir, const Model& model, Session& session) {
  std::vector<fs::path> inputs = numbered_files(set_dir, "input_");
  std::vector<fs::path> outputs = numbered_files(set_dir, "output_");
  const std::string set_name = set_dir.filename().string();
  if (inputs.size() != model.inputs().size())
    return {Status::Fail, set_name + ": " + std::to_string(inputs.size()) + " input files for a model with " +
                              std::to_string(model.inputs().size()) + " inputs", ""};
  if (outputs.size() != model.outputs().size())
    return {Status::Fail, set_name + ": " + std::to_string(outputs.size()) + " output files for a model with " +
                              std::to_string(model.outputs().size()) + " outputs", ""};
  std::vector<Tensor> bound;  // keeps the input memory alive through run()
  for (size_t i = 0; i < inputs.size(); ++i) {
    bound.push_back(read_tensor(inputs[i], model.inputs()[i].dtype));
    session.set_input(model.inputs()[i].name, bound.back());
  }
  session.run();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = model.outputs()[i].name;
    Tensor got = session.output(name);
    std::string diff = compare(got, read_tensor(outputs[i], got.dtype()));
    if (!diff.empty()) return {Status::Fail, set_name + ": output '" + name + "': " + diff, ""};
  }
  return {};
}

Outcome run_test(const fs::path& dir, int threads) {
  for (const DefectiveTest& d : kDefectiveTestData)
    if (dir.filename() == d.name) return {Status::Skip, d.reason, "defective test data (model and data disagree)"};
  const fs::path model_path = dir / "model.onnx";
  const std::string path_prefix = model_path.string() + ": ";
  try {
    const std::string bytes = read_bytes(model_path);
    const std::string op = first_unsupported_op(bytes);
    if (!op.empty()) return {Status::Skip, "unsupported operator " + op, "unsupported operator " + op};

    Options options;
    options.threads = threads;
    std::shared_ptr<Model> model = Model::load(model_path.string(), options);
    std::unique_ptr<Session> session = model->create_session();
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) return {Status::Fail, "no test_data_set_* directory", ""};
    for (const fs::path& set : sets) {
      Outcome o = run_data_set(set, *model, *session);
      if (o.status != Status::Pass) return o;
    }
    return {};
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (says_unsupported(msg)) return {Status::Skip, msg, skip_group_of(msg, path_prefix)};
    return {Status::Fail, msg, ""};
  } catch (const std::exception& e) {
    return {Status::Fail, std::string("unexpected exception: ") + e.what(), ""};
  } catch (...) {
    return {Status::Fail, "unexpected exception of unknown type", ""};
  }
}

// Test names from a --must-pass file: one per line; blank lines and text after '#' ignored.
std::set<std::string> read_must_pass(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("cannot open the --must-pass file '" + path + "'");
  std::set<std::string> names;
  std::string line;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find('#'));
    const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b != std::string::npos) names.insert(line.substr(b, e - b + 1));
  }
  return names;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s ROOT [--filter SUBSTR] [--verbose] [--threads N] [--must-pass FILE]\n"
               "Runs each ONNX backend test directory under ROOT (model.onnx + test_data_set_*).\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root, filter, must_pass_file;
  bool verbose = false;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(argv[0]), 0;
    if (a == "--verbose" || a == "-v") verbose = true;
    else if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--must-pass" && i + 1 < argc) must_pass_file = argv[++i];
    else if (!a.empty() && a[0] != '-' && root.empty()) root = a;
    else return usage(argv[0]);
  }
  if (root.empty()) return usage(argv[0]);
  std::set<std::string> must_pass;
  if (!must_pass_file.empty()) {
    try {
      must_pass = read_must_pass(must_pass_file);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }

  std::vector<fs::path> tests;
  std::error_code ec;
  if (fs::exists(fs::path(root) / "model.onnx", ec)) {
    tests.push_back(root);
  } else {
    if (!fs::is_directory(root, ec)) {
      std::fprintf(stderr, "%s is not a directory\n", root.c_str());
      return 2;
    }
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
    std::sort(tests.begin(), tests.end());
  }

  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_reasons;
  std::vector<std::string> failures;
  for (const fs::path& dir : tests) {
    const std::string name = dir.filename().string();
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    const auto t0 = std::chrono::steady_clock::now();
    Outcome o = run_test(dir, threads);
    if (o.status == Status::Pass) must_pass.erase(name);
    if (verbose)
      std::printf("     %s took %.1f ms\n", name.c_str(),
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    switch (o.status) {
      case Status::Pass:
        ++passed;
        std::printf("PASS %s\n", name.c_str());
        break;
      case Status::Fail:
        ++failed;
        failures.push_back(name);
        std::printf("FAIL %s: %s\n", name.c_str(), o.reason.c_str());
        break;
      case Status::Skip:
        ++skipped;
        skip_reasons[o.skip_group]++;
        std::printf("SKIP %s: %s\n", name.c_str(), o.reason.c_str());
        break;
    }
    std::fflush(stdout);
  }

  std::printf("\n%d tests: ran %d (%d passed, %d failed), skipped %d\n", passed + failed + skipped, passed + failed,
              passed, failed, skipped);
  if (!skip_reasons.empty()) {
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& kv : skip_reasons) by_count.emplace_back(-kv.second, kv.first);
    std::sort(by_count.begin(), by_count.end());
    std::printf("skip reasons:\n");
    for (const auto& r : by_count) std::printf("  %4d  %s\n", -r.first, r.second.c_str());
  }
  if (!failures.empty()) {
    std::printf("failed:\n");
    for (const auto& f : failures) std::printf("  %s\n", f.c_str());
  }
  // Listed tests that ran and did not pass, or (without a filter) are missing.
  std::vector<std::string> not_passed;
  for (const std::string& n : must_pass)
    if (filter.empty() || n.find(filter) != std::string::npos) not_passed.push_back(n);
  if (!not_passed.empty()) {
    std::printf("listed in %s but did not pass (or are not there):\n", must_pass_file.c_str());
    for (const auto& n : not_passed) std::printf("  %s\n", n.c_str());
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed || !not_passed.empty() ? 1 : 0;
}
