// Model loading: recognise the format, import, optimise, validate.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "core/checked_math.h"
#include "core/mapped_file.h"
#include "graph/infer_values.h"
#include "graph/passes/pipeline.h"
#include "import/ncnn/ncnn_importer.h"
#include "import/onnx/onnx_importer.h"
#include "runtime/model_impl.h"
#include "graph/layout_search.h"
#include "runtime/layout_choice.h"
#include "runtime/session_impl.h"
#include "runtime/thread_choice.h"
#include "runtime/tuning_cache.h"

namespace ninegrid {

namespace {

// The whole file, refusing more than `max_bytes` (0: no limit) before reading it: a device or a pipe
// given as a model (/dev/zero) must not fill the memory.
std::string read_file(const std::string& path, const char* what, int64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(std::string("cannot read ") + what + " '" + path + "': it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(std::string("cannot open ") + what + " '" + path + "'");
  auto too_large = [&] {
    return Error(std::string(what) + " '" + path + "' is larger than the limit of " + bytes_str(max_bytes) +
                 " (Options::max_file_bytes)");
  };
  std::string data;
  // A regular file in one read of its known size (ResNet-50's 100 MB: a character-by-character copy
  // was an eighth of the model's load time); anything else (a pipe, a device) in chunks up to the limit.
  if (std::filesystem::is_regular_file(path, ec)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec) {
      if (max_bytes > 0 && size > static_cast<std::uintmax_t>(max_bytes)) throw too_large();
      data.resize(static_cast<size_t>(size));
      f.read(data.data(), static_cast<std::streamsize>(size));
      if (static_cast<std::uintmax_t>(f.gcount()) != size || f.bad())
        throw Error(std::string("cannot read ") + what + " '" + path + "'");
      return data;
    }
  }
  char chunk[1 << 16];
  while (f.read(chunk, sizeof chunk) || f.gcount() > 0) {
    data.append(chunk, static_cast<size_t>(f.gcount()));
    if (max_bytes > 0 && data.size() > static_cast<size_t>(max_bytes)) throw too_large();
  }
  if (f.bad()) throw Error(std::string("cannot read ") + what + " '" + path + "'");
  return data;
}

// ncnn .param files start with the magic number 7767517 on the first line.
bool looks_like_ncnn_param(const std::string& bytes) {
  size_t i = 0;
  while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\r' || bytes[i] == '\n')) ++i;
  return bytes.compare(i, 7, "7767517") == 0;
}

// A file named *.param is meant as an ncnn model, whatever its contents: say so when it is not one,
// rather than reporting it as a bad ONNX file.
bool named_like_ncnn_param(const std::string& path) {
  return path.size() > 6 && path.compare(path.size() - 6, 6, ".param") == 0;
}

std::string default_weights_path(const std::string& param_path) {
  size_t slash = param_path.find_last_of('/');
  size_t dot = param_path.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    return param_path.substr(0, dot) + ".bin";
  return param_path + ".bin";
}

}  // namespace

ModelImpl::ModelImpl(Graph graph, Options options, std::string format)
    : graph_(std::move(graph)), options_(std::move(options)), format_(std::move(format)) {
  resolved_ = resolve_options(options_);
  // A graph taken from a model that released weights after packing them (prepare_for_declared_shapes)
  // lacks their contents: another model could not pack them.
  for (const Value& v : graph_.values)
    if (v.constant_released)
      throw Error("constant '" + v.name + "' was released by the model this graph comes from (its ops had "
                  "packed it); a new model needs the graph as it was imported");
  graph_.topo_sort();

  // Input shapes given by the user replace the model's declared (possibly dynamic) ones.
  for (const auto& kv : options_.input_shapes) {
    bool found = false;
    for (int v : graph_.inputs) {
      Value& val = graph_.values[v];
      if (val.name != kv.first) continue;
      found = true;
      if (val.shape_known && val.shape.size() != kv.second.size())
        throw Error("input '" + kv.first + "' has rank " + std::to_string(val.shape.size()) + " (" +
                    shape_str(val.shape) + "), but shape " + shape_str(kv.second) + " was given");
      for (size_t d = 0; val.shape_known && d < val.shape.size(); ++d)
        if (val.shape[d] >= 0 && val.shape[d] != kv.second[d])
          throw Error("input '" + kv.first + "' has fixed shape " + shape_str(val.shape) + ", but shape " +
                      shape_str(kv.second) + " was given");
      shape_numel(kv.second);  // rejects overflowing products
      val.shape = kv.second;
      val.shape_known = true;
    }
    if (!found) throw Error("a shape was given for '" + kv.first + "', which is not an input of the model");
  }

  // The names of dynamic dimensions, as the file declared them (the passes below may replace values).
  std::vector<std::vector<std::string>> input_dim_names, output_dim_names;
  for (int v : graph_.inputs) input_dim_names.push_back(graph_.values[v].dim_names);
  for (int v : graph_.outputs) output_dim_names.push_back(graph_.values[v].dim_names);

  // The tuning cache: this CPU's measured conv plans (used by the conv policy) and layouts (by the layout pass).
  TuningEntries tuned;
  if (options_.use_tuning_cache) {
    std::string warning;
    tuned = read_tuning_entries(options_.tuning_cache.empty() ? default_tuning_cache_path() : options_.tuning_cache,
                                &warning);
    if (!warning.empty()) warnings_.push_back(warning);
    if (!tuned.convs.empty()) {
      auto plans = std::make_shared<std::map<std::string, ConvPlan>>();
      for (auto it = tuned.convs.begin(); it != tuned.convs.end();) {
        auto node = tuned.convs.extract(it++);  // the key moves, not copied: a cache may hold thousands
        plans->emplace_hint(plans->end(), std::move(node.key()), node.mapped().plan);
      }
      resolved_.exec.tuned_plans = std::move(plans);
    }
  }
  const int max_block = isa_block(resolved_.exec.isa);
  // The threads to run on: fewer than asked where the tuner measured this model faster on fewer.
  threads_asked_ = resolved_.exec.threads;
  thread_fingerprint_ =
      model_thread_fingerprint(graph_, isa_name(resolved_.exec.isa), max_block, options_.opt_level, threads_asked_);
  resolved_.exec.threads = threads_to_run(tuned.threads, thread_fingerprint_, threads_asked_);
  // The searched layout for this graph, if the cache holds one (and what the tuner asks to see).
  LayoutCapture* capture = active_layout_capture();
  ConvBlockChooser chooser;
  if (!tuned.layouts.empty() || capture)
    chooser = [&](const Graph& g) {
      const std::string fingerprint =
          layout_fingerprint(g, layout_salt(max_block, isa_name(resolved_.exec.isa), resolved_.exec.threads));
      if (capture) {
        capture->graph = g;
        capture->fingerprint = fingerprint;
        capture->captured = true;
      }
      return stored_conv_blocks(g, fingerprint, tuned.layouts);
    };
  optimize_graph(graph_, options_.opt_level, max_block, resolved_.limits, chooser);

  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const Value& val = graph_.values[graph_.inputs[i]];
    if (!val.shape_known) throw Error("input '" + val.name + "' has no declared shape; give one in the options");
    inputs_.push_back({val.name, val.dtype, val.shape, {}, true});
    if (i < input_dim_names.size()) inputs_.back().dim_names = input_dim_names[i];
  }
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    const Value& val = graph_.values[graph_.outputs[i]];
    outputs_.push_back({val.name, val.dtype, val.shape, {}, val.shape_known});
    if (i < output_dim_names.size()) outputs_.back().dim_names = output_dim_names[i];
  }

  // Create every operator once: unsupported operators and bad attributes are reported at load time.
  std::vector<std::unique_ptr<Op>> ops = create_ops(graph_);
  // With all input shapes known, infer the outputs' now, so shape errors surface at load time too (unless
  // a shape depends on an input's contents: then the first run tells).
  ValueInference values;
  if (infer_values_for_declared_shapes(graph_, &values, resolved_.limits, &ops)) {
    for (size_t i = 0; i < outputs_.size(); ++i) {
      outputs_[i].shape = values.values[graph_.outputs[i]].desc.shape;
      outputs_[i].dtype = values.values[graph_.outputs[i]].desc.dtype;
      outputs_[i].shape_known = true;
    }
    prepare_for_declared_shapes(values, ops);
  }
  // A name stays only on a dimension that is still dynamic, and only where the rank is what the file said.
  for (auto* infos : {&inputs_, &outputs_}) {
    for (ValueInfo& info : *infos) {
      if (info.dim_names.size() != info.shape.size()) info.dim_names.clear();
      bool named = false;
      for (size_t d = 0; d < info.dim_names.size(); ++d) {
        if (info.shape[d] >= 0) info.dim_names[d].clear();
        named = named || !info.dim_names[d].empty();
      }
      if (!named) info.dim_names.clear();
    }
  }
}

namespace {
thread_local int g_loads_for_tuning = 0;
}  // namespace

ModelLoadForTuning::ModelLoadForTuning() { ++g_loads_for_tuning; }
ModelLoadForTuning::~ModelLoadForTuning() { --g_loads_for_tuning; }

void ModelImpl::prepare_for_declared_shapes(const ValueInference& values, std::vector<std::unique_ptr<Op>>& ops) {
  if (g_loads_for_tuning > 0) return;
  std::vector<Shape> shapes;
  if (!fixed_input_shapes(graph_, &shapes)) return;
  const std::string signature = PreparedKernels::signature(shapes);
  // Per constant: the reads by steps (nodes left to run) not yet prepared, and whether anything else
  // needs its contents (a graph output, or a step that did not pack it).
  std::vector<int> reads(graph_.values.size(), 0);
  std::vector<char> kept(graph_.values.size(), 0);
  for (int o : graph_.outputs) kept[o] = 1;
  for (size_t n = 0; n < graph_.nodes.size(); ++n)
    for (int v : graph_.nodes[n].inputs)
      if (v >= 0 && graph_.values[v].is_constant()) {
        if (values.folded[n]) kept[v] = 1;  // evaluated again by every plan
        else ++reads[v];
      }
  std::vector<TensorDesc> in;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    if (values.folded[n]) continue;
    const Node& node = graph_.nodes[n];
    in.clear();
    for (int v : node.inputs) {
      if (v < 0) {
        in.emplace_back();
        in.back().present = false;
      } else {
        in.push_back(values.values[v].desc);
      }
    }
    Op& op = *ops[n];
    op.prepare(in, resolved_.exec);
    prepared_.add(signature, static_cast<int>(n), op.prepared_state(), /*pin=*/true);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      if (v < 0 || !graph_.values[v].is_constant()) continue;
      if (!op.packed_input(i)) kept[v] = 1;
      if (--reads[v] > 0 || kept[v]) continue;
      Value& val = graph_.values[v];
      val.dtype = val.constant.dtype();
      val.shape = val.constant.shape();
      val.shape_known = true;
      released_bytes_ += static_cast<int64_t>(val.constant.nbytes());
      val.constant = Tensor();  // the descs in `values` that point here are not read again
      val.constant_released = true;
    }
  }
}

Model::Model(std::unique_ptr<ModelImpl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs(); }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs(); }
const Options& Model::options() const { return impl_->options(); }
const std::string& Model::format() const { return impl_->format(); }
const std::vector<std::string>& Model::warnings() const { return impl_->warnings(); }
std::string Model::isa() const { return isa_name(impl_->resolved().exec.isa); }
int Model::threads() const { return impl_->threads(); }

std::shared_ptr<Model> Model::load_onnx(const void* data, size_t size, const Options& options) {
  return std::make_shared<Model>(std::make_unique<ModelImpl>(import_onnx(data, size), options, "onnx"));
}

std::shared_ptr<Model> Model::load_ncnn(const std::string& param_text, const void* weights, size_t weights_size,
                                        const Options& options) {
  return std::make_shared<Model>(
      std::make_unique<ModelImpl>(import_ncnn(param_text, weights, weights_size), options, "ncnn"));
}

std::shared_ptr<Model> Model::load(const std::string& path, const Options& options) {
  const int64_t max_bytes = resolve_options(options).max_file_bytes;
  auto check_size = [&](uint64_t size, const std::string& file, const char* what) {
    if (max_bytes > 0 && size > static_cast<uint64_t>(max_bytes))
      throw Error(std::string(what) + " '" + file + "' is larger than the limit of " + bytes_str(max_bytes) +
                  " (Options::max_file_bytes)");
  };
  // Model files are mapped, not read: the weights are decoded from the page cache straight into their
  // tensors, with no copy of the file in fresh memory (the kernel clearing such pages was much of
  // ResNet-50's load time). (A file truncated by another process while it is mapped faults the process.)
  {
    MappedFile mapped;
    if (mapped.map(path)) {
      check_size(mapped.size(), path, "model file");
      const std::string head(reinterpret_cast<const char*>(mapped.data()), std::min<size_t>(mapped.size(), 4096));
      try {
        if (looks_like_ncnn_param(head)) {
          const std::string param(reinterpret_cast<const char*>(mapped.data()), mapped.size());
          const std::string wpath = options.weights_path.empty() ? default_weights_path(path) : options.weights_path;
          MappedFile weights;
          if (weights.map(wpath)) {
            check_size(weights.size(), wpath, "ncnn weights file");
            return load_ncnn(param, weights.data(), weights.size(), options);
          }
          const std::string bytes = read_file(wpath, "ncnn weights file", max_bytes);
          return load_ncnn(param, bytes.data(), bytes.size(), options);
        }
        if (named_like_ncnn_param(path))
          throw Error("not an ncnn .param file: its first line must be ncnn's magic number 7767517");
        Graph graph = import_onnx(mapped);
        mapped.unmap();  // before the passes and the packing allocate
        return std::make_shared<Model>(std::make_unique<ModelImpl>(std::move(graph), options, "onnx"));
      } catch (const Error& e) {
        throw Error(path + ": " + e.what());
      }
    }
  }
  // A regular file that could not be mapped and is not an ncnn .param is parsed as ONNX straight from the
  // file: reading it whole first would cost a copy and as much fresh memory as the weights.
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    std::ifstream f(path, std::ios::binary);
    if (!ec && f) {
      if (max_bytes > 0 && size > static_cast<std::uintmax_t>(max_bytes))
        throw Error("model file '" + path + "' is larger than the limit of " + bytes_str(max_bytes) +
                    " (Options::max_file_bytes)");
      std::string head(4096, '\0');
      f.read(head.data(), static_cast<std::streamsize>(head.size()));
      head.resize(static_cast<size_t>(f.gcount()));
      if (!f.bad() && !looks_like_ncnn_param(head) && !named_like_ncnn_param(path)) {
        f.clear();
        f.seekg(0);
        try {
          if (!f) throw Error("cannot read the model file");
          return std::make_shared<Model>(std::make_unique<ModelImpl>(import_onnx_stream(f, size), options, "onnx"));
        } catch (const Error& e) {
          throw Error(path + ": " + e.what());
        }
      }
    }
  }
  std::string bytes = read_file(path, "model file", max_bytes);
  try {
    if (looks_like_ncnn_param(bytes)) {
      std::string wpath = options.weights_path.empty() ? default_weights_path(path) : options.weights_path;
      std::string weights = read_file(wpath, "ncnn weights file", max_bytes);
      return load_ncnn(bytes, weights.data(), weights.size(), options);
    }
    if (named_like_ncnn_param(path))
      throw Error("not an ncnn .param file: its first line must be ncnn's magic number 7767517");
    return std::make_shared<Model>(std::make_unique<ModelImpl>(import_onnx(std::move(bytes)), options, "onnx"));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

std::unique_ptr<Session> Model::create_session() const {
  // Sessions keep the model alive; models are always created by make_shared in load*().
  return std::make_unique<Session>(std::make_unique<SessionImpl>(shared_from_this()));
}

}  // namespace ninegrid
