// The operator interface. One Op object exists per graph node per session. It is created from the node
// (validating attributes: errors name the node), asked for its output shapes whenever the input shapes
// change (infer: shapes and types only, cheap, also used by the graph passes and to fold constants),
// prepared when a session will run it with those shapes (prepare: algorithm choice, weight packing,
// indirection buffers), then run any number of times (run).
//
// Writing an operator:
//   class Relu final : public Op { ... };
//   NINEGRID_REGISTER_OP("Relu", Relu);
// The file goes in src/ops/ and its inner loops in src/kernels/ (ref/ for the plain reference).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ninegrid/tensor.h"
#include "ops/exec_settings.h"

namespace ninegrid {

class ThreadPool;
class ConvTunable;

// What infer() knows about a tensor: type and shape, and its contents when known before run time
// (weights, and values computed from weights and shapes, such as the shape input of a Reshape).
struct TensorDesc {
  DataType dtype = DataType::Undefined;
  Shape shape;
  const Tensor* value = nullptr;  // non-null when the contents are known at plan time
  bool present = true;            // false for an omitted optional input
};

// Thrown by infer() when the contents of input `input` decide the outputs' shapes (a Reshape's target, a
// Resize's sizes, a Range's bounds) but are not known. A typed error so that callers can act on it:
// value inference adds the value id, the session then takes the contents of the graph inputs that value
// is computed from out of the tensors bound for the run and plans again; the graph passes treat the
// model as one whose shapes are not fixed. The message is the one users see when nothing can supply them.
class ContentsNeeded : public Error {
 public:
  ContentsNeeded(const std::string& message, int input) : Error(message), input(input) {}
  int input;       // index into the node's inputs
  int value = -1;  // value id (set by infer_values)
  int node = -1;   // node index (set by infer_values)
};

struct OpContext {
  std::vector<const Tensor*> inputs;  // nullptr for omitted optional inputs
  std::vector<Tensor*> outputs;       // allocated with the inferred dtype and shape; nullptr if omitted
  ThreadPool* pool = nullptr;

  const Tensor& input(size_t i) const { return *inputs[i]; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  Tensor& output(size_t i) const { return *outputs[i]; }
};

class Op {
 public:
  explicit Op(const Node& node) : node_(node) {}
  virtual ~Op() = default;

  // Fills `out` (one entry per node output) with dtype and shape. Validates inputs' count, types and
  // shapes, throwing with error() on anything unusable. `out[i].value` may be left null. Prepares no
  // kernel, and drops what an earlier prepare() built for other shapes.
  virtual void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) = 0;
  // Builds what run() needs to be fast for the shapes of the last infer() (the same `in`): chooses the
  // kernel for settings.isa, packs constant weights. Not called for nodes folded at plan time.
  virtual void prepare(const std::vector<TensorDesc>& in, const ExecSettings& settings) {}
  // Computes the outputs. Called only after infer() with the same shapes; correct with or without
  // prepare() (without it, ops run their reference kernels: constant folding does that).
  virtual void run(OpContext& ctx) = 0;

  // If output `out_index` is the same bytes as an input (Reshape, Squeeze, Identity ...), that input's
  // index, so the planner can alias the buffers and run() may skip the copy; otherwise -1. When the
  // planner cannot alias (e.g. a graph input feeds a graph output) run() must still produce the output,
  // so ops that alias must copy when ctx.outputs[i]->data() != ctx.inputs[j]->data().
  virtual int aliases_input(int out_index) const { return -1; }
  // If the output is the inputs' bytes laid end to end (a Concat of one image along the channels), each
  // input's byte offset in it, for the inferred shapes `in`: the planner may then place an input's bytes
  // there, so its producer writes the output and run() skips that input, as it must skip every input
  // whose data already is its place in the output. Empty otherwise.
  virtual std::vector<size_t> input_offsets_in_output(const std::vector<TensorDesc>& in) const { return {}; }
  // If output `out_index` is one span of input 0's bytes (a Split of one image along the channels), that
  // span's byte offset for the inferred shapes `in`, so the planner can make the output a view of it and
  // run() may skip the copy (it must skip every output whose data already is its span); -1 otherwise.
  virtual int64_t output_offset_in_input(int out_index, const std::vector<TensorDesc>& in) const { return -1; }
  // Whether this op may be evaluated at plan time when all its inputs are known (false for random ops).
  virtual bool foldable() const { return true; }
  // Whether this op's outputs depend only on its inputs' shapes and types, never on their contents
  // (Shape, Size, EyeLike). The planner then evaluates it at plan time even when an input is a run-time
  // tensor, so the shape arithmetic downstream (Shape -> Gather -> Concat -> Reshape) folds to constants.
  // In that call ctx.inputs[i] is nullptr for every input whose contents are unknown: run() must take what
  // it needs from the shapes its last infer() saw.
  virtual bool value_from_shapes() const { return false; }
  // Sharing prepared kernels between the sessions of one model (runtime/prepared_kernels.h). After
  // prepare(): the part of what it built that run() only reads (packed weights), or null when there is
  // nothing worth sharing. It may depend only on the node, the inputs' types and shapes, the contents of
  // its known inputs and the settings, and must be safe to run from several threads at once.
  virtual std::shared_ptr<const void> prepared_state() const { return nullptr; }
  // Instead of prepare(), after infer() with the same inputs and settings: takes what prepared_state()
  // of another op of the same node returned.
  virtual void adopt_prepared_state(std::shared_ptr<const void> state) {}
  // Whether input `i` is packed: run() does not read it now that the op is prepared (its contents are
  // in the prepared state) and infer() reads only its type and shape. A model may then release a
  // constant that only such inputs read (its sessions adopt the prepared state instead of preparing).
  virtual bool packed_input(size_t i) const { return false; }

  // Multiply-accumulates for the last inferred shapes (for `ninegrid info` and the profiler).
  virtual int64_t macs() const { return 0; }
  // The algorithm and instruction set chosen for the last inferred shapes, e.g. "depthwise3x3/avx512"
  // (for `ninegrid info --optimized` and the profiler); empty for ops with a single implementation.
  virtual std::string algorithm() const { return ""; }
  // A 2-D conv running a vector kernel exposes its plan to the tuner (ops/conv_select.h); null otherwise.
  virtual ConvTunable* conv_tunable() { return nullptr; }

  const Node& node() const { return node_; }
  [[noreturn]] void error(const std::string& message) const { throw_node_error(node_, message); }


 protected:
  // Common checks, each throwing a node error.
  void expect_inputs(const std::vector<TensorDesc>& in, size_t min, size_t max) const;
  void expect_dtype(const TensorDesc& t, DataType dtype, const char* what) const;
  void expect_float(const TensorDesc& t, const char* what) const { expect_dtype(t, DataType::Float32, what); }
  // Normalises a possibly negative axis into [0, rank), throwing if out of range.
  int normalize_axis(int64_t axis, int rank) const;
  // Copies input `i`, an int64/int32 tensor, into a vector; throws ContentsNeeded if its contents are not
  // known.
  std::vector<int64_t> known_ints(const std::vector<TensorDesc>& in, size_t i, const char* what) const;
  // Throws ContentsNeeded for input `i`: `what` must be known when the session is planned.
  [[noreturn]] void contents_needed(size_t i, const std::string& what) const;

  Node node_;  // a copy: attributes stay valid for the op's lifetime
};

using OpFactory = std::function<std::unique_ptr<Op>(const Node&)>;

// op_type -> factory. Ops register at static-initialisation time with NINEGRID_REGISTER_OP.
class OpRegistry {
 public:
  static OpRegistry& instance();
  void add(const std::string& op_type, OpFactory factory);
  // Creates the op for a node; throws "unsupported operator" naming the node if none is registered.
  std::unique_ptr<Op> create(const Node& node) const;
  bool supports(const std::string& op_type) const { return factories_.count(op_type) != 0; }

 private:
  std::map<std::string, OpFactory> factories_;
};

struct OpRegistration {
  OpRegistration(const char* op_type, OpFactory factory) {
    OpRegistry::instance().add(op_type, std::move(factory));
  }
};

#define NINEGRID_CONCAT_INNER(a, b) a##b
#define NINEGRID_CONCAT(a, b) NINEGRID_CONCAT_INNER(a, b)
#define NINEGRID_REGISTER_OP(op_type, OpClass)                                   \
  static ::ninegrid::OpRegistration NINEGRID_CONCAT(ng_op_reg_, __COUNTER__)( \
      op_type, [](const ::ninegrid::Node& n) { return std::unique_ptr<::ninegrid::Op>(new OpClass(n)); })

}  // namespace ninegrid
