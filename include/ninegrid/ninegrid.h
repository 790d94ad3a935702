// ninegrid public API: load a model, create sessions, run them.
//
//   auto model = ninegrid::Model::load("retinaface.onnx");
//   auto session = model->create_session();
//   session->set_input("input", ninegrid::Tensor::wrap(ninegrid::DataType::Float32, {1, 3, 640, 640}, pixels));
//   session->run();
//   ninegrid::Tensor scores = session->output("scores");
//
// A Model is immutable once loaded and may be shared by any number of Sessions; each Session is used by
// one thread at a time (a second thread's call throws Error), and different Sessions of one Model may run
// at once on different threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ninegrid/tensor.h"
#include "ninegrid/version.h"

namespace ninegrid {

// The library's version, "MAJOR.MINOR.PATCH" (NINEGRID_VERSION is the headers').
const char* version();

struct Options {
  // Worker threads per session; 0 means one per available core. A session runs on fewer where the tuning
  // cache (below) says `ninegrid tune` measured this model faster on fewer (Model::threads()).
  int threads = 0;
  // Shapes for inputs whose dimensions the model leaves dynamic (or to override them), by input name.
  std::map<std::string, Shape> input_shapes;
  // Graph optimisation: 0 none, 1 fusion and constant folding, 2 also layout planning.
  int opt_level = 2;
  // ncnn models: the .bin weights file. Empty means the .param path with its extension replaced by .bin.
  std::string weights_path;

  // Kernels. The instruction set they may use: empty for the best this CPU has, or a cap ("ref", and
  // "avx2", "avx512" on x86-64 or "neon", "dotprod" on AArch64; never raised above what the CPU has).
  // Lowering it runs every path on one machine.
  std::string isa;
  // The algorithms a convolution may choose among: empty for all, or a comma-separated subset of
  // "winograd", "strassen", "direct", "indirect" (to bisect a wrong answer to an algorithm). "direct"
  // names the direct family (the direct, pointwise, first-layer and depthwise kernels). Float convs run
  // only what is listed, else the reference kernel. Int8 convs: without "indirect", the direct family
  // whatever else is listed; with "indirect" but not "direct", x86-64's indirect kernel
  // wherever it takes the conv, and the engine's own choice elsewhere (depthwise convs, and every conv on
  // AArch64, which has no indirect kernel).
  std::string conv_algorithms;
  // Winograd's output tile: 0 chooses per layer (2 or 4); 2, 4 or 6 forces it on every Winograd layer
  // (6 is faster on some cores and rounds about twice as badly as 4).
  int winograd_tile = 0;

  // Threads. How long, in microseconds, an idle worker (or a caller waiting for its workers) may spin
  // before it sleeps: spinning bridges the gap between two layers without a wake-up, but takes a core
  // from other work. -1 lets the engine choose (today 200); 0 never spins (the least idle CPU, slower
  // small layers); at most 1,000,000. Whatever the value, a thread spins only while the process's busy
  // pool threads fit in its cores, so sessions that outnumber the cores do not spin.
  int spin_microseconds = -1;

  // Tuning (`ninegrid tune`): the file of conv plans and layouts measured on this machine, used at load
  // time in place of the rules' guesses wherever it holds an entry for this CPU and a conv of the model.
  // Empty: the default file, $XDG_CACHE_HOME/ninegrid/tuning.cache (~/.cache/ninegrid/tuning.cache when
  // XDG_CACHE_HOME is unset); a missing file is no error. A file that is not a valid tuning cache, or
  // holds other CPUs' results only, is ignored with a warning (Model::warnings()).
  std::string tuning_cache;
  // false: read no tuning cache; every conv runs the rules' plan.
  bool use_tuning_cache = true;

  // Resource budget, checked when a session is planned, before anything is allocated or run: a model
  // or input shape that needs more is refused with an error naming the node and the size. The defaults
  // are far above what real models need; 0 removes a limit.
  int64_t max_tensor_bytes = int64_t(4) << 30;  // any one tensor
  int64_t max_arena_bytes = int64_t(8) << 30;   // a session's working memory for intermediate tensors
  int64_t max_file_bytes = int64_t(4) << 30;    // a model or weights file read by load()
};

// Name, element type and shape of a model input or output. Dimensions not known until the inputs are
// bound are -1.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::Float32;
  Shape shape;
  // The model's name for each dimension that is -1 in `shape` (ONNX's dim_param, e.g. "batch"), "" for
  // the others; empty when the model names none of them.
  std::vector<std::string> dim_names;
  // False for an output whose rank is not known before a run (its shape depends on the inputs' contents
  // and the model declares none); `shape` is then empty. Inputs always have a known rank.
  bool shape_known = true;
};

// The optimised graph, for tools that show it (`ninegrid info --optimized --dot`).
struct GraphValueInfo {
  std::string name;
  DataType dtype = DataType::Undefined;
  Shape shape;               // as inferred at load time; empty with shape_known false when not known
  bool shape_known = false;
  bool constant = false;     // a weight or a folded constant
  int64_t elements = 0;      // constants: how many elements
};
struct GraphNodeInfo {
  std::string name;
  std::string op_type;               // ONNX's names, ncnn's as "ng.<Layer>", layout transforms "ng.Reorder"
  std::vector<int> inputs, outputs;  // indices into ModelDescription::values; -1 for an omitted input
  std::vector<std::string> fused;    // work the optimiser moved into this node: "Add" (a residual), "Relu" ...
  std::string layout;                // storage of output 0: "NCHW", or blocked "NCHW16c", "NCHW8c"
};
struct ModelDescription {
  std::string format;                 // "onnx" or "ncnn"
  int opt_level = 2;
  std::string isa;                    // the kernels' instruction set, as Options::isa names it
  std::vector<GraphValueInfo> values;
  std::vector<GraphNodeInfo> nodes;   // in execution order
  std::vector<int> inputs, outputs;   // indices into values
};

// One step of a session's plan, for profiling (Session::profile).
struct StepProfile {
  std::string name;                 // the node's name
  std::string op_type;
  std::vector<std::string> fused;   // as GraphNodeInfo::fused
  std::string algorithm;            // the kernel and its instruction set, e.g. "winograd43/avx512"; "ref"
  bool tuned = false;               // the plan came from the tuning cache (Options::tuning_cache), not the rules
  std::string precision;            // arithmetic of its output: "fp32", "int8", or another type's name
  std::string layout;               // as GraphNodeInfo::layout
  std::vector<Shape> input_shapes;  // every input present, weights included
  std::vector<Shape> output_shapes;
  int64_t macs = 0;                 // multiply-accumulates (0 for ops that do none)
  int64_t bytes = 0;                // bytes of its inputs and outputs
  double time_ms = 0;               // wall time in the last run() with profiling on (0 otherwise)
};

class Session;
class ModelImpl;

class Model : public std::enable_shared_from_this<Model> {
 public:
  // Loads an ONNX file (.onnx) or an ncnn model (.param, with its .bin beside it or in
  // options.weights_path). The format is recognised from the file's contents. Throws Error.
  static std::shared_ptr<Model> load(const std::string& path, const Options& options = {});
  // The same from memory: an ONNX ModelProto's bytes.
  static std::shared_ptr<Model> load_onnx(const void* data, size_t size, const Options& options = {});
  // The same from memory: an ncnn .param text and its .bin weights.
  static std::shared_ptr<Model> load_ncnn(const std::string& param_text, const void* weights, size_t weights_size,
                                          const Options& options = {});

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const Options& options() const;
  // "onnx" or "ncnn".
  const std::string& format() const;
  // The instruction set the kernels use ("avx512", "avx2", "neon", "dotprod", "ref"): the best the CPU has, capped by
  // Options::isa.
  std::string isa() const;
  // The worker threads each session runs on, the calling thread included: Options::threads (0: one per
  // core), or fewer where the tuning cache measured this model faster on fewer.
  int threads() const;
  // The graph after optimisation: nodes, values, fused epilogues, layouts.
  ModelDescription describe() const;
  // What load() noticed but worked around, one message each: today a tuning cache it ignored (corrupt,
  // another version's, another CPU's) and why.
  const std::vector<std::string>& warnings() const;

  // A new session with its own working memory and threads. Throws Error if an input shape is unusable.
  std::unique_ptr<Session> create_session() const;

  explicit Model(std::unique_ptr<ModelImpl> impl);
  ~Model();

 private:
  friend struct InternalAccess;  // the library's own code and tests (runtime/model_impl.h)
  std::unique_ptr<ModelImpl> impl_;
};

class SessionImpl;

class Session {
 public:
  // Binds an input. The tensor's memory is read in place during run() (no copy). A borrowed tensor
  // (Tensor::wrap without an owner) is bound for the next run() only: run() releases it when it returns,
  // so the session never holds memory the caller may free; bind it again for the next run. Tensors that
  // own their storage stay bound until replaced. A shape different from the last run's re-plans the
  // session, and so do new contents of an input whose values decide shapes (a Reshape's target shape,
  // a Resize's sizes, an Expand's shape given as a model input; at most 4096 elements each).
  void set_input(const std::string& name, const Tensor& value);
  // Runs the model on the bound inputs. Throws Error on a missing input or a wrong shape or type.
  void run();
  // An output of the last run. Its storage belongs to the caller: the next run() writes new tensors.
  Tensor output(const std::string& name) const;

  // Convenience: bind these inputs, run, return every output by name. An input not in `inputs` must be
  // bound already by a tensor that owns its storage.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

  // Plans the session for these input shapes (every input with a dynamic shape must be given) without
  // running: kernels are chosen and weights packed, so the first run() does only the work. A model in
  // which an input's contents decide shapes (see set_input) cannot be planned from shapes alone: for it
  // prepare() checks the names and shapes and does nothing more, and the session plans at the first
  // run(), then again whenever those contents change.
  void prepare(const std::map<std::string, Shape>& input_shapes);
  // Worker threads, the calling thread included.
  int threads() const;

  // Profiling: with it on, run() times every step. profile() describes the current plan's steps (and
  // their times in the last profiled run); empty before the session is planned.
  void set_profiling(bool on);
  std::vector<StepProfile> profile() const;

  // A session is used by one thread at a time; a call made while another thread is inside one of these
  // methods on the same session throws Error instead of racing. Sessions of one model may run at once.

  explicit Session(std::unique_ptr<SessionImpl> impl);
  ~Session();

 private:
  friend struct InternalAccess;
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace ninegrid
