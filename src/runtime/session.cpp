#include <chrono>
#include <cstring>

#include "core/checked_math.h"
#include "ops/conv_select.h"
#include "runtime/describe.h"
#include "runtime/session_impl.h"

namespace ninegrid {

SessionImpl::SessionImpl(std::shared_ptr<const Model> model)
    : model_(std::move(model)),
      pool_(InternalAccess::impl(*model_).threads(), InternalAccess::impl(*model_).resolved().spin) {
  const Graph& g = this->model().graph();
  ops_ = create_ops(g);
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

SessionImpl::Use::Use(const SessionImpl& s, const char* method) : s_(s) {
  if (s_.busy_.exchange(true, std::memory_order_acquire))
    throw Error(std::string("Session::") + method +
                " was called while another thread is inside a call on the same session; a session runs one "
                "call at a time (give each thread its own session: sessions of one model may run at once)");
}

SessionImpl::Use::~Use() { s_.busy_.store(false, std::memory_order_release); }

namespace {

// A shape-driving input's contents are copied into the plan and compared with the bound tensor on every
// run, and everything computed from them is folded when planning: meant for a Reshape's target shape, a
// Resize's sizes, a Range's bounds, not for images.
constexpr int64_t kMaxShapeDrivingElements = 4096;

}  // namespace

void SessionImpl::prepare(const std::vector<Shape>& input_shapes) {
  if (planned_ && plan_.input_shapes == input_shapes) return;
  plan_for(input_shapes, nullptr);
}

std::vector<int> SessionImpl::shape_driving_inputs() const {
  std::vector<int> out;
  for (const ShapeDrivingInput& d : shape_driving_) out.push_back(d.input);
  return out;
}

bool SessionImpl::plan_matches(const std::vector<Shape>& input_shapes) const {
  if (!planned_ || plan_.input_shapes != input_shapes) return false;
  const Graph& g = model().graph();
  for (const ShapeDrivingInput& d : shape_driving_) {
    const Tensor& planned = plan_.values.values[g.inputs[d.input]].folded;
    const Tensor& bound = inputs_[d.input];
    // Same dtype (set_input checks it) and shape, so the same byte count.
    if (!planned.defined() || std::memcmp(planned.data(), bound.data(), bound.nbytes()) != 0) return false;
  }
  return true;
}

void SessionImpl::learn_shape_driving_inputs(const ContentsNeeded& e) {
  const Graph& g = model().graph();
  if (e.value < 0 || e.node < 0) throw e;
  std::vector<int> fresh;
  for (int i : input_ancestors(g, ops_, e.value)) {
    bool known = false;
    for (const ShapeDrivingInput& d : shape_driving_) known = known || d.input == i;
    if (!known) fresh.push_back(i);
  }
  if (fresh.empty()) {
    // Computed inside the graph from tensors only a run produces (or from inputs whose contents were
    // given, through a node that cannot be evaluated while planning): no input's contents can stand in.
    const int producer = g.producers()[e.value];
    throw Error(std::string(e.what()) +
                (producer >= 0 ? " ('" + g.values[e.value].name + "' is computed at run time by " +
                                     g.nodes[producer].describe() + ")"
                               : ""));
  }
  for (int i : fresh) shape_driving_.push_back({i, g.nodes[e.node].describe(), g.values[e.value].name});
}

bool SessionImpl::plan_for(const std::vector<Shape>& input_shapes, const std::vector<Tensor>* bound) {
  planned_ = false;
  step_ms_.clear();  // times belong to the old plan's steps
  tensors_.clear();
  arena_ = Tensor();
  const Graph& g = model().graph();
  const ResolvedOptions& o = model().resolved();
  ValueInference values;
  for (;;) {
    std::vector<Tensor> contents;  // per graph input: defined for the shape-driving ones
    if (!shape_driving_.empty()) {
      if (!bound) return false;
      contents.resize(g.inputs.size());
      // Copies: the plan outlives borrowed inputs, and folded views of these share their bytes.
      for (const ShapeDrivingInput& d : shape_driving_) {
        const Tensor& t = (*bound)[d.input];
        if (t.numel() > kMaxShapeDrivingElements)
          throw Error(d.node + " needs the contents of input '" + g.values[g.inputs[d.input]].name +
                      "' to plan its output shape (through '" + d.through + "'), but that input has " +
                      std::to_string(t.numel()) + " elements (shape " + shape_str(t.shape()) +
                      "); an input whose contents decide shapes may have at most " +
                      std::to_string(kMaxShapeDrivingElements) + ", since the session plans again whenever they change");
        contents[d.input] = t.clone();
      }
    }
    try {
      values = infer_values(g, input_shapes, ops_, o.limits, contents);
      break;
    } catch (const ContentsNeeded& e) {
      learn_shape_driving_inputs(e);
    }
  }
  std::vector<Tensor> contents;  // the shape-driving inputs' contents: with the shapes, the plan's signature
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (values.values[g.inputs[i]].folded.defined()) {
      contents.resize(g.inputs.size());
      contents[i] = values.values[g.inputs[i]].folded;
    }
  const std::string signature = PreparedKernels::signature(input_shapes, contents);
  plan_ = make_plan(g, input_shapes, std::move(values), ops_, o.limits);
  PreparedKernels& shared = model().prepared();
  std::vector<TensorDesc> in;
  for (const PlanStep& st : plan_.steps) {
    // Kernels another session (or the model, at load) prepared for the same plan: packed weights are
    // shared, not packed again.
    if (std::shared_ptr<const void> state = shared.find(signature, st.node)) {
      st.op->adopt_prepared_state(std::move(state));
      continue;
    }
    for (int v : st.inputs)
      if (v >= 0 && g.values[v].constant_released)
        throw Error(g.nodes[st.node].describe() + ": its weights '" + g.values[v].name +
                    "' were released after packing, but this plan has no packed kernel for it (internal error)");
    in.clear();
    for (int v : st.inputs) {
      if (v < 0) {
        in.emplace_back();
        in.back().present = false;
      } else {
        in.push_back(plan_.desc(v));
      }
    }
    st.op->prepare(in, o.exec);
    shared.add(signature, st.node, st.op->prepared_state());
  }
  try {
    arena_ = Tensor::empty(DataType::UInt8, {static_cast<int64_t>(plan_.arena_bytes)});
  } catch (const Error& e) {
    throw Error(std::string("cannot allocate the session's working memory: ") + e.what());
  }
  planned_ = true;
  ++plans_made_;
  return true;
}

std::vector<Shape> SessionImpl::input_shapes(const std::map<std::string, Shape>& given) const {
  const auto& ins = model().inputs();
  for (const auto& kv : given) {
    bool found = false;
    for (const ValueInfo& in : ins) found = found || in.name == kv.first;
    if (!found) throw Error("model has no input named '" + kv.first + "'");
  }
  std::vector<Shape> shapes;
  for (const ValueInfo& in : ins) {
    auto it = given.find(in.name);
    const Shape& s = it != given.end() ? it->second : in.shape;
    bool ok = s.size() == in.shape.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = s[d] >= 0 && (in.shape[d] < 0 || in.shape[d] == s[d]);
    if (!ok)
      throw Error(it == given.end() ? "input '" + in.name + "' has dynamic shape " + shape_str(in.shape) +
                                          ": give its shape"
                                    : "input '" + in.name + "' expects shape " + shape_str(in.shape) + ", got " +
                                          shape_str(s));
    shapes.push_back(s);
  }
  return shapes;
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

void SessionImpl::release_borrowed_inputs() {
  for (Tensor& t : inputs_)
    if (t.borrowed()) t = Tensor();
  // The tensors of the last run may point at them too (graph inputs, and views of them).
  for (size_t i = 0; i < model().graph().inputs.size() && !tensors_.empty(); ++i) {
    const int v = model().graph().inputs[i];
    if (tensors_[v].borrowed()) tensors_[v] = Tensor();
  }
}

void SessionImpl::bind_tensors() {
  const Graph& g = model().graph();
  tensors_.assign(g.values.size(), Tensor());
  uint8_t* arena = static_cast<uint8_t*>(arena_.data());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ValueSlot& s = plan_.slots[v];
    const TensorDesc& d = plan_.desc(static_cast<int>(v));
    switch (s.storage) {
      case Storage::Constant: tensors_[v] = g.values[v].constant; break;
      case Storage::Folded: tensors_[v] = plan_.values.values[v].folded; break;
      case Storage::Arena: tensors_[v] = Tensor::wrap(d.dtype, d.shape, arena + s.offset); break;
      case Storage::FreshOutput: tensors_[v] = Tensor::empty(d.dtype, d.shape); break;
      default: break;
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) tensors_[g.inputs[i]] = inputs_[i];
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ValueSlot& s = plan_.slots[v];
    if (s.storage != Storage::Alias) continue;
    const TensorDesc& d = plan_.desc(static_cast<int>(v));
    tensors_[v] = Tensor::wrap(d.dtype, d.shape, nullptr,
                               static_cast<uint8_t*>(const_cast<void*>(tensors_[s.alias_of].data())) + s.offset);
  }
}

void SessionImpl::prepare_for_bound_inputs() {
  const auto& ins = model().inputs();
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!inputs_[i].defined())
      throw Error("input '" + ins[i].name + "' was not set (a borrowed tensor is bound for one run only)");
    shapes.push_back(inputs_[i].shape());
  }
  if (!plan_matches(shapes)) plan_for(shapes, &inputs_);
}

void SessionImpl::run() {
  struct Release {  // borrowed inputs are bound for one run, however it ends
    SessionImpl& s;
    ~Release() { s.release_borrowed_inputs(); }
  } release{*this};
  prepare_for_bound_inputs();
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

std::vector<StepProfile> SessionImpl::profile() const {
  std::vector<StepProfile> out;
  if (!planned_) return out;
  const Graph& g = model().graph();
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& st = plan_.steps[i];
    const Node& n = g.nodes[st.node];
    StepProfile p;
    p.name = n.name;
    p.op_type = n.op_type;
    p.fused = fused_ops(n);
    p.algorithm = st.op->algorithm();
    if (p.algorithm.empty()) p.algorithm = "ref";
    if (const ConvTunable* conv = st.op->conv_tunable()) p.tuned = conv->tuned();
    p.layout = output_layout(n);
    for (int v : st.inputs)
      if (v >= 0) {
        p.input_shapes.push_back(plan_.desc(v).shape);
        p.bytes += tensor_bytes(plan_.desc(v).dtype, plan_.desc(v).shape);
      }
    for (int v : st.outputs)
      if (v >= 0) {
        p.output_shapes.push_back(plan_.desc(v).shape);
        p.bytes += tensor_bytes(plan_.desc(v).dtype, plan_.desc(v).shape);
      }
    const int first_out = st.outputs.empty() ? -1 : st.outputs[0];
    p.precision = first_out >= 0 ? precision_name(plan_.desc(first_out).dtype) : "";
    p.macs = st.op->macs();
    p.time_ms = i < step_ms_.size() ? step_ms_[i] : 0.0;
    out.push_back(std::move(p));
  }
  return out;
}

// ---- public wrappers: each call marks the session busy for its duration ----

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

void Session::set_input(const std::string& name, const Tensor& value) {
  SessionImpl::Use use(*impl_, "set_input");
  impl_->set_input(name, value);
}

void Session::run() {
  SessionImpl::Use use(*impl_, "run");
  impl_->run();
}

Tensor Session::output(const std::string& name) const {
  SessionImpl::Use use(*impl_, "output");
  return impl_->output(name);
}

std::map<std::string, Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  SessionImpl::Use use(*impl_, "run");
  try {
    for (const auto& kv : inputs) impl_->set_input(kv.first, kv.second);
  } catch (...) {
    impl_->release_borrowed_inputs();  // none of this call's borrowed inputs outlives it
    throw;
  }
  impl_->run();
  std::map<std::string, Tensor> out;
  for (const ValueInfo& o : impl_->model().outputs()) out[o.name] = impl_->output(o.name);
  return out;
}

void Session::prepare(const std::map<std::string, Shape>& input_shapes) {
  SessionImpl::Use use(*impl_, "prepare");
  impl_->prepare(impl_->input_shapes(input_shapes));
}

int Session::threads() const { return impl_->pool().size(); }

void Session::set_profiling(bool on) {
  SessionImpl::Use use(*impl_, "set_profiling");
  impl_->set_profiling(on);
}

std::vector<StepProfile> Session::profile() const {
  SessionImpl::Use use(*impl_, "profile");
  return impl_->profile();
}

}  // namespace ninegrid
