// What a loaded model holds: the optimised graph and its interface. Immutable after load.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ninegrid/ninegrid.h"
#include "runtime/prepared_kernels.h"
#include "runtime/resolved_options.h"

namespace ninegrid {

class ModelImpl {
 public:
  // Takes an imported graph: sorts and validates it, applies options.input_shapes, runs the graph passes
  // for options.opt_level and checks every operator is supported. Throws Error.
  ModelImpl(Graph graph, Options options, std::string format);

  const Graph& graph() const { return graph_; }
  const Options& options() const { return options_; }
  const ResolvedOptions& resolved() const { return resolved_; }
  const std::string& format() const { return format_; }  // "onnx" or "ncnn"
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  // The kernels the model's ops have prepared, shared by its sessions (the one mutable part of a
  // model; thread-safe).
  PreparedKernels& prepared() const { return prepared_; }
  // Bytes of constants released at load (prepare_for_declared_shapes).
  int64_t released_bytes() const { return released_bytes_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The threads each session runs on (resolved().exec.threads): those asked for (Options::threads, 0 for
  // one per core), or fewer where the tuning cache measured this model faster on fewer
  // (runtime/thread_choice.h); and the key of that measurement.
  int threads() const { return resolved_.exec.threads; }
  int threads_asked() const { return threads_asked_; }
  const std::string& thread_fingerprint() const { return thread_fingerprint_; }

 private:
  // For a model whose plan cannot change (every input shape fixed, no input whose contents decide
  // shapes): prepares every op for the declared shapes once, keeping the kernels for the sessions, and
  // releases each constant as soon as every op reading it has packed it (Op::packed_input), so the
  // float weights and their packed copies never both stay in memory.
  void prepare_for_declared_shapes(const ValueInference& values, std::vector<std::unique_ptr<Op>>& ops);

  Graph graph_;
  Options options_;
  ResolvedOptions resolved_;
  std::string format_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  mutable PreparedKernels prepared_;
  int64_t released_bytes_ = 0;
  std::vector<std::string> warnings_;
  int threads_asked_ = 1;
  std::string thread_fingerprint_;
};

// While one is alive on a thread, models loaded on that thread skip prepare_for_declared_shapes: they
// release no constants and prepare nothing at load, so each session prepares its own ops and keeps the
// weights they read. The tuner (runtime/tuner.cpp) needs that: it builds other plans' kernels on a
// session's weights (ConvTunable::build), which an op that adopted the model's kernel does not have.
struct ModelLoadForTuning {
  ModelLoadForTuning();
  ~ModelLoadForTuning();
  ModelLoadForTuning(const ModelLoadForTuning&) = delete;
  ModelLoadForTuning& operator=(const ModelLoadForTuning&) = delete;
};

class SessionImpl;

// The implementation behind the public classes, for the library's own code and its tests.
struct InternalAccess {
  static const ModelImpl& impl(const Model& m) { return *m.impl_; }
  static SessionImpl& impl(Session& s) { return *s.impl_; }
};

}  // namespace ninegrid
