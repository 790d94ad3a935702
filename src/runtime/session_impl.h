// A session: per-thread state for running one model (ops, plan, arena, thread pool).
#pragma once

#include <atomic>
#include <memory>
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
  // values, lays out the arena, prepares every step's kernels.
  void prepare(const std::vector<Shape>& input_shapes);
  // The shapes of every input for prepare(): `given` by name, the rest as the model declares them.
  std::vector<Shape> input_shapes(const std::map<std::string, Shape>& given) const;

  const ModelImpl& model() const { return InternalAccess::impl(*model_); }
  const Plan& plan() const { return plan_; }
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
  void bind_tensors();

  std::shared_ptr<const Model> model_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Op>> ops_;
  Plan plan_;
  bool planned_ = false;
  std::vector<Tensor> inputs_;   // bound, per graph input
  std::vector<Tensor> tensors_;  // per value id, during and after a run
  Tensor arena_;
  bool profiling_ = false;
  std::vector<double> step_ms_;  // per step, of the last profiled run
  mutable std::atomic<bool> busy_{false};
};

}  // namespace ninegrid
