// A session: per-thread state for running one model (ops, plan, arena, thread pool).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"
#include "runtime/plan.h"

namespace ninegrid {

class SessionImpl {
 public:
  explicit SessionImpl(std::shared_ptr<const Model> model);

  void set_input(const std::string& name, const Tensor& value);
  // Runs on the bound inputs, then releases the borrowed ones (Session::set_input).
  void run();
  // Unbinds every input whose memory the session does not own.
  void release_borrowed_inputs();
  Tensor output(const std::string& name) const;

  // Makes sure a plan exists for these input shapes (one per graph input) without running: infers
  // values, lays out the arena, prepares every step's kernels. Does nothing when a shape depends on an
  // input's contents (see plan_for): the first run plans.
  void prepare(const std::vector<Shape>& input_shapes);
  // Makes sure a plan exists for the bound inputs (their shapes, and the contents of those that decide
  // shapes) without running: what run() would plan. Throws Error on an input not bound.
  void prepare_for_bound_inputs();
  // The shapes of every input for prepare(): `given` by name, the rest as the model declares them.
  std::vector<Shape> input_shapes(const std::map<std::string, Shape>& given) const;

  const ModelImpl& model() const { return InternalAccess::impl(*model_); }
  const Plan& plan() const { return plan_; }
  // Per value id, the tensors of the last run (the tuner times convs on them in place).
  const std::vector<Tensor>& tensors() const { return tensors_; }
  // How many plans this session has made (for tests: a run with the same shapes and shape-driving
  // contents as the last must not plan again).
  int plans_made() const { return plans_made_; }
  // The graph inputs (indices into graph.inputs) whose contents decide shapes, as far as planning has
  // found them.
  std::vector<int> shape_driving_inputs() const;
  ThreadPool& pool() { return pool_; }

  void set_profiling(bool on) { profiling_ = on; }
  std::vector<StepProfile> profile() const;

  // Marks the session busy for one public call; a second thread's call meanwhile throws Error.
  class Use {
   public:
    Use(const SessionImpl& s, const char* method);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    const SessionImpl& s_;
  };

 private:
  // A graph input whose contents an op needs to infer shapes (a Reshape's target shape given as an
  // input), and the first node that needed them (for errors).
  struct ShapeDrivingInput {
    int input;            // index into graph.inputs
    std::string node;     // "node 'r' (Reshape)"
    std::string through;  // the value that node needed, computed from this input
  };

  // Plans for `input_shapes`. The contents of shape-driving inputs are taken from `bound` (per graph
  // input, the tensors bound for a run); an op that needs contents not known yet makes the graph inputs
  // they are computed from shape-driving, and planning starts again. Without `bound` (prepare() with
  // shapes only) a model with shape-driving inputs is left unplanned: returns false.
  bool plan_for(const std::vector<Shape>& input_shapes, const std::vector<Tensor>* bound);
  // Adds the graph inputs that the value `e` asks for is computed from, or throws when none can supply it.
  void learn_shape_driving_inputs(const ContentsNeeded& e);
  // Whether the plan was made for these shapes and the bound inputs' shape-driving contents.
  bool plan_matches(const std::vector<Shape>& input_shapes) const;
  void bind_tensors();

  std::shared_ptr<const Model> model_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Op>> ops_;
  Plan plan_;
  bool planned_ = false;
  int plans_made_ = 0;
  std::vector<ShapeDrivingInput> shape_driving_;  // empty for nearly every model: no cost per run
  std::vector<Tensor> inputs_;   // bound, per graph input
  std::vector<Tensor> tensors_;  // per value id, during and after a run
  Tensor arena_;
  bool profiling_ = false;
  std::vector<double> step_ms_;  // per step, of the last profiled run
  mutable std::atomic<bool> busy_{false};
};

}  // namespace ninegrid
