#include <cstring>

#include "runtime/session_impl.h"

namespace ninegrid {

SessionImpl::SessionImpl(std::shared_ptr<const Model> model)
    : model_(std::move(model)),
      pool_(model_->options().threads > 0 ? model_->options().threads : ThreadPool::default_threads()) {
  const Graph& g = this->model().graph();
  ops_.reserve(g.nodes.size());
  for (const Node& n : g.nodes) ops_.push_back(OpRegistry::instance().create(n));
  inputs_.resize(g.inputs.size());
  // Plan now when every input shape is known, so shape errors surface at session creation.
  std::vector<Shape> shapes;
  for (const ValueInfo& in : this->model().inputs()) {
    for (int64_t d : in.shape)
      if (d < 0) return;
    shapes.push_back(in.shape);
  }
  prepare(shapes);
}

void SessionImpl::prepare(const std::vector<Shape>& input_shapes) {
  if (planned_ && plan_.input_shapes == input_shapes) return;
  planned_ = false;
  plan_ = make_plan(model().graph(), input_shapes, ops_, &pool_);
  arena_ = Tensor::empty(DataType::UInt8, {static_cast<int64_t>(plan_.arena_bytes)});
  planned_ = true;
}

void SessionImpl::set_input(const std::string& name, const Tensor& value) {
  const auto& ins = model().inputs();
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ins[i].name != name) continue;
    if (value.dtype() != ins[i].dtype)
      throw Error("input '" + name + "' must be " + dtype_name(ins[i].dtype) + ", got " + dtype_name(value.dtype()));
    const Shape& want = ins[i].shape;
    bool ok = want.size() == value.shape().size();
    for (size_t d = 0; ok && d < want.size(); ++d) ok = want[d] < 0 || want[d] == value.shape()[d];
    if (!ok)
      throw Error("input '" + name + "' expects shape " + shape_str(want) + ", got " + shape_str(value.shape()));
    inputs_[i] = value;
    return;
  }
  std::string names;
  for (const auto& in : ins) names += (names.empty() ? "" : ", ") + in.name;
  throw Error("model has no input named '" + name + "' (inputs: " + names + ")");
}

void SessionImpl::bind_tensors() {
  const Graph& g = model().graph();
  tensors_.assign(g.values.size(), Tensor());
  uint8_t* arena = static_cast<uint8_t*>(arena_.data());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ValueSlot& s = plan_.slots[v];
    switch (s.storage) {
      case Storage::Constant: tensors_[v] = g.values[v].constant; break;
      case Storage::Folded: tensors_[v] = s.folded; break;
      case Storage::Arena: tensors_[v] = Tensor::wrap(s.desc.dtype, s.desc.shape, arena + s.offset); break;
      case Storage::FreshOutput: tensors_[v] = Tensor::empty(s.desc.dtype, s.desc.shape); break;
      default: break;
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) tensors_[g.inputs[i]] = inputs_[i];
  // Aliases follow their sources in step order.
  for (const PlanStep& st : plan_.steps)
    for (int v : st.outputs)
      if (v >= 0 && plan_.slots[v].storage == Storage::Alias) {
        const Tensor& src = tensors_[plan_.slots[v].alias_of];
        tensors_[v] = Tensor::wrap(plan_.slots[v].desc.dtype, plan_.slots[v].desc.shape, nullptr,
                                   const_cast<void*>(src.data()));
      }
}

void SessionImpl::run() {
  const auto& ins = model().inputs();
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!inputs_[i].defined()) throw Error("input '" + ins[i].name + "' was not set");
    shapes.push_back(inputs_[i].shape());
  }
  prepare(shapes);
  bind_tensors();
  if (profiling_) step_ms_.assign(plan_.steps.size(), 0.0);
  OpContext ctx;
  ctx.pool = &pool_;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const PlanStep& st = plan_.steps[s];
    ctx.inputs.clear();
    ctx.outputs.clear();
    for (int v : st.inputs) ctx.inputs.push_back(v >= 0 ? &tensors_[v] : nullptr);
    for (int v : st.outputs) ctx.outputs.push_back(v >= 0 ? &tensors_[v] : nullptr);
    if (profiling_) {
      auto t0 = std::chrono::steady_clock::now();
      st.op->run(ctx);
      step_ms_[s] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } else {
      st.op->run(ctx);
    }
  }
}

Tensor SessionImpl::output(const std::string& name) const {
  const Graph& g = model().graph();
  for (int o : g.outputs) {
    if (g.values[o].name != name) continue;
    if (tensors_.empty() || !tensors_[o].defined()) throw Error("output '" + name + "' is not available: call run() first");
    const Storage st = plan_.slots[o].storage;
    // Fresh outputs already belong to the caller; anything else (a constant, an input) is copied.
    return st == Storage::FreshOutput ? tensors_[o] : tensors_[o].clone();
  }
  throw Error("model has no output named '" + name + "'");
}

// ---- public wrappers ----

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
void Session::set_input(const std::string& name, const Tensor& value) { impl_->set_input(name, value); }
void Session::run() { impl_->run(); }
Tensor Session::output(const std::string& name) const { return impl_->output(name); }

std::map<std::string, Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  for (const auto& kv : inputs) impl_->set_input(kv.first, kv.second);
  impl_->run();
  std::map<std::string, Tensor> out;
  for (const ValueInfo& o : impl_->model().outputs()) out[o.name] = impl_->output(o.name);
  return out;
}

}  // namespace ninegrid
