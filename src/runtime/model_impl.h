// What a loaded model holds: the optimised graph and its interface. Immutable after load.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ninegrid/ninegrid.h"
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
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Graph graph_;
  Options options_;
  ResolvedOptions resolved_;
  std::string format_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  std::vector<std::string> warnings_;
};

class SessionImpl;

// The implementation behind the public classes, for the library's own code and its tests.
struct InternalAccess {
  static const ModelImpl& impl(const Model& m) { return *m.impl_; }
  static SessionImpl& impl(Session& s) { return *s.impl_; }
};

}  // namespace ninegrid
