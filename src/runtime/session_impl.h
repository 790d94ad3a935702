// A session: per-thread state for running one model (ops, plan, arena, thread pool).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "ninegrid/ninegrid.h"
#include "runtime/model_impl.h"
#include "runtime/plan.h"
#include "core/thread_pool.h"

namespace ninegrid {

class SessionImpl {
 public:
  SessionImpl(std::shared_ptr<const Model> model);

  void set_input(const std::string& name, const Tensor& value);
  void run();
  Tensor output(const std::string& name) const;

  // Makes sure a plan exists for these input shapes (one per graph input) without running.
  void prepare(const std::vector<Shape>& input_shapes);

  const ModelImpl& model() const { return model_->impl(); }
  const Plan& plan() const { return plan_; }
  bool has_plan() const { return planned_; }
  ThreadPool& pool() { return pool_; }

  // Per-step wall time of the last run, in milliseconds, when enabled.
  void set_profiling(bool on) { profiling_ = on; }
  const std::vector<double>& step_ms() const { return step_ms_; }

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
  std::vector<double> step_ms_;
};

}  // namespace ninegrid
