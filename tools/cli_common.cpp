#include "cli_common.h"

#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ninegrid/npy.h"

namespace ninegrid::cli {

namespace {

// Options::spin_microseconds's upper bound.
constexpr int kMaxSpinUs = 1000000;

std::string input_names(const std::vector<ValueInfo>& ins) {
  std::string names;
  for (const ValueInfo& in : ins) names += (names.empty() ? "'" : ", '") + in.name + "'";
  return names.empty() ? "none" : names;
}

// Whether `actual` can bind to an input declared as `declared` (-1 = any size).
bool shape_fits(const Shape& declared, const Shape& actual) {
  if (declared.size() != actual.size()) return false;
  for (size_t d = 0; d < declared.size(); ++d)
    if (declared[d] >= 0 && declared[d] != actual[d]) return false;
  return true;
}

const ValueInfo* find_input(const std::vector<ValueInfo>& ins, const std::string& name) {
  for (const ValueInfo& in : ins)
    if (in.name == name) return &in;
  return nullptr;
}

// Splits "NAME=VALUE" at its last '=' (input names may contain anything, values never contain '=').
std::pair<std::string, std::string> split_name(const std::string& text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos) return {"", text};
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// A fixed 64-bit LCG (Knuth's MMIX constants): reproducible everywhere, no <random> distribution
// differences between standard libraries.
struct Lcg {
  uint64_t state;
  uint64_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state;
  }
  double uniform() { return static_cast<double>(next() >> 40) * (1.0 / 16777216.0); }  // [0, 1), 24 bits
  uint64_t small_int() { return (next() >> 33) % 4; }
};

template <class T>
void fill_floats(Tensor& t, Lcg& rng) {
  T* p = static_cast<T*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(rng.uniform());
}

template <class T>
void fill_ints(Tensor& t, Lcg& rng) {
  T* p = static_cast<T*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(rng.small_int());
}

template <class T>
TensorStats stats_of(const Tensor& t) {
  TensorStats s;
  s.numeric = true;
  const T* p = static_cast<const T*>(t.data());
  double sum = 0;
  int64_t count = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = static_cast<double>(p[i]);
    if (!std::isfinite(v)) {
      ++s.non_finite;
      continue;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    ++count;
  }
  if (count == 0) {
    s.min = s.max = s.mean = std::numeric_limits<double>::quiet_NaN();
  } else {
    s.mean = sum / static_cast<double>(count);
  }
  return s;
}

}  // namespace

void add_model_options(ArgParser& parser, ModelArgs& args, ModelOptionSet which) {
  parser.positional("MODEL", "an ONNX model (.onnx) or an ncnn model (.param, with its .bin beside it)",
                    &args.model_path);
  parser.repeated("--shape", "[NAME=]SHAPE",
                  "input shape like 1x3x640x640, for dynamic dimensions; NAME may be left out when the model "
                  "has one input (default: the declared shape, a dynamic leading batch dimension as 1)",
                  &args.shapes, [](const std::string& v) { parse_shape_arg(v); });
  if (which.threads) {
    parser.option_int("--threads", "N", "worker threads", &args.threads, 0, 1024, "0 = one per core");
    parser.option_int("--spin", "US",
                      "microseconds an idle worker thread may spin before it sleeps, 0 never (env NINEGRID_SPIN)",
                      &args.spin_us, 0, kMaxSpinUs, "chosen by the engine");
  }
  parser.option("--weights", "FILE", "ncnn weights file", &args.weights, "MODEL with .param replaced by .bin");
  if (which.opt_level)
    parser.option_int("--opt-level", "N",
                      "graph optimisation: 0 none, 1 fusion and constant folding, 2 also layout planning",
                      &args.opt_level, 0, 2);
  parser.option("--isa", "ISA", "cap the kernels' instruction set: ref, avx2, avx512 (x86-64), neon, dotprod (AArch64) (env NINEGRID_ISA)", &args.isa,
                "the best this CPU has");
  parser.option("--conv-algorithms", "LIST",
                "convolution algorithms allowed, a subset of winograd,strassen,direct,indirect "
                "(env NINEGRID_CONV_ALGORITHMS)",
                &args.conv_algorithms, "all");
  parser.option_int("--winograd-tile", "M", "force Winograd's output tile: 2, 4 or 6 (env NINEGRID_WINOGRAD_TILE)",
                    &args.winograd_tile, 0, 6, "chosen per layer");
  if (which.tuning_cache) {
    parser.option("--tuning-cache", "FILE", "the tuning cache to use (written by `ninegrid tune`)", &args.tuning_cache,
                  "$XDG_CACHE_HOME/ninegrid/tuning.cache");
    parser.flag("--no-tuning-cache", "read no tuning cache: every conv runs the rules' plan", &args.no_tuning_cache);
  }
  parser.option_int("--max-tensor-mb", "MB", "refuse a model whose any one tensor needs more (0: no limit)",
                    &args.max_tensor_mb, 0, 1 << 30, "4096");
  parser.option_int("--max-memory-mb", "MB", "refuse a model whose working memory needs more (0: no limit)",
                    &args.max_arena_mb, 0, 1 << 30, "8192");
  parser.option_int("--max-file-mb", "MB", "refuse model, weights and --input files larger than this (0: no limit)",
                    &args.max_file_mb, 0, 1 << 30, "4096");
}

Options options_from_args(const ModelArgs& args) {
  Options o;
  o.threads = args.threads;
  o.weights_path = args.weights;
  o.opt_level = args.opt_level;
  // The environment variables are documented overrides for the command line; the library reads none.
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  o.isa = !args.isa.empty() ? args.isa : env("NINEGRID_ISA");
  o.conv_algorithms = !args.conv_algorithms.empty() ? args.conv_algorithms : env("NINEGRID_CONV_ALGORITHMS");
  if (args.winograd_tile >= 0) {
    o.winograd_tile = args.winograd_tile;
  } else if (!env("NINEGRID_WINOGRAD_TILE").empty()) {
    const std::string t = env("NINEGRID_WINOGRAD_TILE");
    if (t != "2" && t != "4" && t != "6") throw Error("NINEGRID_WINOGRAD_TILE must be 2, 4 or 6, got '" + t + "'");
    o.winograd_tile = std::stoi(t);
  }
  if (args.spin_us >= 0) {
    o.spin_microseconds = args.spin_us;
  } else if (!env("NINEGRID_SPIN").empty()) {
    const std::string t = env("NINEGRID_SPIN");
    char* end = nullptr;
    errno = 0;
    const long us = std::strtol(t.c_str(), &end, 10);
    if (end == t.c_str() || *end != '\0' || errno != 0 || us < 0 || us > kMaxSpinUs)
      throw Error("NINEGRID_SPIN must be microseconds from 0 to " + std::to_string(kMaxSpinUs) + ", got '" + t + "'");
    o.spin_microseconds = static_cast<int>(us);
  }
  o.tuning_cache = args.tuning_cache;
  o.use_tuning_cache = !args.no_tuning_cache;
  constexpr int64_t kMiB = int64_t(1) << 20;
  if (args.max_tensor_mb >= 0) o.max_tensor_bytes = args.max_tensor_mb * kMiB;
  if (args.max_arena_mb >= 0) o.max_arena_bytes = args.max_arena_mb * kMiB;
  if (args.max_file_mb >= 0) o.max_file_bytes = args.max_file_mb * kMiB;
  return o;
}

std::pair<std::string, Shape> parse_shape_arg(const std::string& text) {
  auto [name, dims] = split_name(text);
  if (text.find('=') != std::string::npos && name.empty())
    throw Error("'" + text + "' has an empty input name; use NAME=1x3x224x224");
  Shape shape = parse_shape(dims);
  for (int64_t d : shape)
    if (d <= 0) throw Error("bad shape '" + dims + "': dimensions must be positive");
  shape_numel(shape);  // rejects products that overflow
  return {name, shape};
}

GivenInput read_input_arg(const std::string& text, int64_t max_file_bytes) {
  GivenInput g;
  auto [name, path] = split_name(text);
  if (path.empty()) throw Error("--input '" + text + "' names no file; use --input NAME=FILE.npy");
  g.name = name;
  g.path = path;
  try {
    g.value = read_npy(path, max_file_bytes);
  } catch (const Error& e) {
    throw Error("--input " + (name.empty() ? "" : "'" + name + "' ") + "from '" + path + "': " + e.what());
  }
  return g;
}

LoadedModel load_model(const ModelArgs& args, std::vector<GivenInput>& given, bool require_shapes) {
  Options opts = options_from_args(args);

  // Shapes from --shape; a bare one applies to the model's only input, known after loading.
  std::map<std::string, Shape> shapes;
  Shape bare;
  bool has_bare = false;
  for (const std::string& s : args.shapes) {
    auto [name, shape] = parse_shape_arg(s);
    if (name.empty()) {
      if (has_bare) throw Error("--shape without an input name was given twice; use --shape NAME=...");
      bare = shape;
      has_bare = true;
    } else {
      if (shapes.count(name) && shapes[name] != shape) throw Error("--shape for input '" + name + "' was given twice");
      shapes[name] = shape;
    }
  }

  opts.input_shapes = shapes;
  double t0 = now_ms();
  std::shared_ptr<Model> model;
  try {
    model = Model::load(args.model_path, opts);
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.find("has no declared shape") != std::string::npos) msg += " (pass --shape NAME=1x3x224x224)";
    throw Error(msg);
  }
  for (const std::string& w : model->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const std::vector<ValueInfo>& ins = model->inputs();

  if (has_bare) {
    if (ins.size() != 1)
      throw Error("--shape " + shape_str(bare) + " has no input name, but the model has " + std::to_string(ins.size()) +
                  " inputs (" + input_names(ins) + "); use --shape NAME=" + shape_str(bare));
    if (shapes.count(ins[0].name) && shapes[ins[0].name] != bare)
      throw Error("--shape for input '" + ins[0].name + "' was given twice");
    if (!shape_fits(ins[0].shape, bare))
      throw Error("input '" + ins[0].name + "' has shape " + shape_str(ins[0].shape) + ", but --shape " +
                  shape_str(bare) + " was given");
    shapes[ins[0].name] = bare;
  }

  for (GivenInput& g : given) {
    if (g.name.empty()) {
      if (ins.size() != 1)
        throw Error("--input '" + g.path + "' has no input name, but the model has " + std::to_string(ins.size()) +
                    " inputs (" + input_names(ins) + "); use --input NAME=" + g.path);
      g.name = ins[0].name;
    }
    const ValueInfo* info = find_input(ins, g.name);
    if (!info)
      throw Error("--input names '" + g.name + "', which is not an input of the model (inputs: " + input_names(ins) +
                  ")");
    const Shape& have = g.value.shape();
    if (g.value.dtype() != info->dtype)
      throw Error("input '" + g.name + "' from '" + g.path + "' is " + dtype_name(g.value.dtype()) +
                  ", but the model expects " + dtype_name(info->dtype));
    if (!shape_fits(info->shape, have))
      throw Error("input '" + g.name + "' from '" + g.path + "' has shape " + shape_str(have) +
                  ", but the model expects " + shape_str(info->shape));
    if (shapes.count(g.name) && shapes[g.name] != have)
      throw Error("input '" + g.name + "' from '" + g.path + "' has shape " + shape_str(have) + ", but --shape " +
                  shape_str(shapes[g.name]) + " was given");
    for (int64_t d : have)
      if (d <= 0) throw Error("input '" + g.name + "' from '" + g.path + "' is empty (shape " + shape_str(have) + ")");
    for (const GivenInput& other : given)
      if (&other != &g && other.name == g.name) throw Error("--input for input '" + g.name + "' was given twice");
    shapes[g.name] = have;
  }

  // Every input's final shape; a dynamic leading dimension is a batch and defaults to 1.
  LoadedModel out;
  out.declared_inputs = ins;
  bool changed = false;
  for (const ValueInfo& in : ins) {
    Shape s = shapes.count(in.name) ? shapes[in.name] : in.shape;
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] >= 0) continue;
      if (d == 0 && s.size() > 1) {
        s[d] = 1;
        continue;
      }
      out.unresolved = "input '" + in.name + "' has dynamic shape " + shape_str(in.shape) +
                       " (-1 = dynamic); pass its shape with --shape " + in.name + "=...";
      break;
    }
    if (!out.unresolved.empty()) break;
    if (s != in.shape) changed = true;
    out.input_shapes.push_back(s);
  }
  if (!out.unresolved.empty()) {
    if (require_shapes) throw Error(out.unresolved);
    out.input_shapes.clear();
    out.model = model;
    out.load_ms = now_ms() - t0;
    return out;
  }

  if (changed) {
    // Load again with every shape fixed, so the optimiser and planner see concrete shapes at load time
    // (this is the load a user with known shapes pays; only it is timed).
    for (size_t i = 0; i < ins.size(); ++i) opts.input_shapes[ins[i].name] = out.input_shapes[i];
    model.reset();
    t0 = now_ms();
    model = Model::load(args.model_path, opts);
  }
  out.session = model->create_session();
  std::map<std::string, Shape> planned;
  for (size_t i = 0; i < model->inputs().size(); ++i) planned[model->inputs()[i].name] = out.input_shapes[i];
  out.session->prepare(planned);
  out.load_ms = now_ms() - t0;
  out.model = model;
  return out;
}

Tensor make_input(DataType dtype, const Shape& shape, size_t index) {
  Tensor t = Tensor::empty(dtype, shape);
  Lcg rng{0x9E3779B97F4A7C15ULL * (index + 1)};
  switch (dtype) {
    case DataType::Float32: fill_floats<float>(t, rng); break;
    case DataType::Float64: fill_floats<double>(t, rng); break;
    case DataType::Int8: fill_ints<int8_t>(t, rng); break;
    case DataType::UInt8: fill_ints<uint8_t>(t, rng); break;
    case DataType::Int16: fill_ints<int16_t>(t, rng); break;
    case DataType::UInt16: fill_ints<uint16_t>(t, rng); break;
    case DataType::Int32: fill_ints<int32_t>(t, rng); break;
    case DataType::UInt32: fill_ints<uint32_t>(t, rng); break;
    case DataType::Int64: fill_ints<int64_t>(t, rng); break;
    case DataType::UInt64: fill_ints<uint64_t>(t, rng); break;
    case DataType::Bool: {
      uint8_t* p = static_cast<uint8_t*>(t.data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(rng.small_int() & 1);
      break;
    }
    default:
      throw Error(std::string("cannot make test data of type ") + dtype_name(dtype) + "; give the input as a .npy");
  }
  return t;
}

std::vector<Tensor> bind_inputs(const LoadedModel& loaded, const std::vector<GivenInput>& given) {
  const std::vector<ValueInfo>& ins = loaded.model->inputs();
  std::vector<Tensor> bound;
  for (size_t i = 0; i < ins.size(); ++i) {
    Tensor t;
    for (const GivenInput& g : given)
      if (g.name == ins[i].name) t = g.value;
    if (!t.defined()) {
      try {
        t = make_input(ins[i].dtype, loaded.input_shapes[i], i);
      } catch (const Error& e) {
        throw Error("input '" + ins[i].name + "': " + e.what());
      }
    }
    loaded.session->set_input(ins[i].name, t);
    bound.push_back(t);
  }
  return bound;
}

TensorStats tensor_stats(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::Float32: return stats_of<float>(t);
    case DataType::Float64: return stats_of<double>(t);
    case DataType::Int8: return stats_of<int8_t>(t);
    case DataType::UInt8: return stats_of<uint8_t>(t);
    case DataType::Int16: return stats_of<int16_t>(t);
    case DataType::UInt16: return stats_of<uint16_t>(t);
    case DataType::Int32: return stats_of<int32_t>(t);
    case DataType::UInt32: return stats_of<uint32_t>(t);
    case DataType::Int64: return stats_of<int64_t>(t);
    case DataType::UInt64: return stats_of<uint64_t>(t);
    case DataType::Bool: return stats_of<uint8_t>(t);
    default: return TensorStats{};
  }
}

std::string file_safe_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) c = '_';
  }
  return out.empty() ? "_" : out;
}

double peak_rss_mb() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
    if (kib >= 0) return static_cast<double>(kib) / 1024.0;
  }
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) return static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB on Linux
  return 0;
}

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace ninegrid::cli
