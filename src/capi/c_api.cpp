// The C API: thin wrappers that check their arguments, turn exceptions into status codes and a per-thread
// message, and keep what they hand out (names, output buffers, profile strings) alive as documented in
// ninegrid_c.h.
#include "ninegrid/ninegrid_c.h"

#include <atomic>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "ninegrid/ninegrid.h"

struct ng_options {
  ninegrid::Options options;
};
struct ng_model {
  std::shared_ptr<ninegrid::Model> model;
  std::string source;  // the file, or "<memory>", for error messages
  std::string isa;     // kept for ng_model_isa
  std::string warnings;  // kept for ng_model_warnings
};
struct ng_session {
  std::unique_ptr<ninegrid::Session> session;
  std::string source;                               // the model's, for error messages
  bool have_outputs = false;                        // the last run succeeded
  std::map<std::string, ninegrid::Tensor> outputs;  // keeps returned pointers alive until the next run
  std::vector<ninegrid::StepProfile> profile;       // the last ng_session_profile_count snapshot
  std::vector<std::string> fused;                   // per step of it, joined with commas
  mutable std::atomic<bool> busy{false};            // a call is inside; see Busy
};

namespace {

thread_local std::string t_last_error;

ng_status ok() {
  t_last_error.clear();
  return NG_OK;
}

ng_status invalid(const std::string& what) {
  t_last_error = what;
  return NG_INVALID_ARGUMENT;
}

// Runs f, mapping exceptions to a status and a message that starts with the C function and the file it
// works on. Bad input is reported by the library as ninegrid::Error (or refused here before the call);
// running out of memory is a plain error too. Only a bug in ninegrid reaches "internal error".
template <class F>
ng_status guarded(const char* function, const std::string& source, F&& f) {
  const std::string where = std::string(function) + (source.empty() ? "" : " (" + source + ")") + ": ";
  try {
    f();
    return ok();
  } catch (const ninegrid::Error& e) {
    t_last_error = where + e.what();
  } catch (const std::bad_alloc&) {
    t_last_error = where + "out of memory";
  } catch (const std::exception& e) {
    t_last_error = where + "internal error: " + e.what();
  } catch (...) {
    t_last_error = where + "unknown internal error";
  }
  return NG_ERROR;
}

bool known_dtype(int t) {
  switch (t) {
    case NG_FLOAT32: case NG_UINT8: case NG_INT8: case NG_UINT16: case NG_INT16: case NG_INT32: case NG_INT64:
    case NG_BOOL: case NG_FLOAT16: case NG_FLOAT64: case NG_UINT32: case NG_UINT64: case NG_BFLOAT16:
      return true;
  }
  return false;
}

constexpr int kMaxRank = 16;

// A shape from C: rank in [0, 16], `shape` non-NULL when rank > 0, dimensions non-negative, the element
// count representable. Returns an empty string when valid, else what is wrong.
std::string check_shape(const int64_t* shape, int rank, ninegrid::Shape* out) {
  if (rank < 0 || rank > kMaxRank)
    return "rank " + std::to_string(rank) + " is not between 0 and " + std::to_string(kMaxRank);
  if (rank > 0 && !shape) return "shape is NULL with rank " + std::to_string(rank);
  out->assign(shape, shape + rank);
  for (int64_t d : *out)
    if (d < 0) return "shape " + ninegrid::shape_str(*out) + " has a negative dimension (" + std::to_string(d) + ")";
  try {
    ninegrid::shape_numel(*out);
  } catch (const ninegrid::Error& e) {
    return e.what();
  }
  return "";
}

ng_status set_budget(ng_options* o, int64_t ninegrid::Options::*field, const char* function, int64_t bytes) {
  if (!o) return invalid(std::string(function) + ": options is NULL");
  if (bytes < 0) return invalid(std::string(function) + ": must be 0 (no limit) or a positive number of bytes, got " + std::to_string(bytes));
  o->options.*field = bytes;
  return ok();
}

// Marks a session busy for one C call. The wrapper's own state (outputs, profile snapshot) is no more
// thread-safe than the session, so a second thread's call fails here, as the C++ Session would fail it,
// before it touches anything.
class Busy {
 public:
  explicit Busy(const ng_session* s) : s_(s), entered_(!s->busy.exchange(true, std::memory_order_acquire)) {}
  ~Busy() {
    if (entered_) s_->busy.store(false, std::memory_order_release);
  }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;
  bool entered() const { return entered_; }

 private:
  const ng_session* s_;
  bool entered_;
};

ng_status busy_error(const char* function, const ng_session* s) {
  t_last_error = std::string(function) + " (" + s->source +
                 "): called while another thread is inside a call on the same session; a session runs one call at "
                 "a time (give each thread its own session: sessions of one model may run at once)";
  return NG_ERROR;
}

// Models from memory are held to the same size limit as model files (Options::max_file_bytes).
bool over_file_budget(size_t size, const ninegrid::Options& o) {
  return o.max_file_bytes > 0 && size > static_cast<uint64_t>(o.max_file_bytes);
}

ng_status too_large(const char* function, const char* what, size_t size, const ninegrid::Options& o) {
  t_last_error = std::string(function) + ": " + what + " is " + std::to_string(size) + " bytes, more than the limit of " +
                 std::to_string(o.max_file_bytes) + " bytes (max_file_bytes)";
  return NG_ERROR;
}

// One field of step `step` of the profile snapshot, or `fallback` (NULL session, step out of range, or
// another thread inside a call on the session).
template <class T, class F>
T read_step(const ng_session* s, int step, T fallback, F field) {
  if (!s) return fallback;
  Busy busy(s);
  if (!busy.entered() || step < 0 || static_cast<size_t>(step) >= s->profile.size()) return fallback;
  return field(s->profile[static_cast<size_t>(step)], static_cast<size_t>(step));
}

// Input or output i of the model, or NULL (NULL model, index out of range).
const ninegrid::ValueInfo* value_info(const ng_model* m, int i, bool input) {
  if (!m) return nullptr;
  const auto& infos = input ? m->model->inputs() : m->model->outputs();
  if (i < 0 || static_cast<size_t>(i) >= infos.size()) return nullptr;
  return &infos[static_cast<size_t>(i)];
}

int value_rank(const ninegrid::ValueInfo* v) {
  return v && v->shape_known ? static_cast<int>(v->shape.size()) : -1;
}

const int64_t* value_dims(const ninegrid::ValueInfo* v) {
  return v && v->shape_known && !v->shape.empty() ? v->shape.data() : nullptr;
}

const char* value_dim_name(const ninegrid::ValueInfo* v, int dim) {
  if (!v || !v->shape_known || dim < 0 || static_cast<size_t>(dim) >= v->shape.size()) return nullptr;
  static const char* const kNone = "";
  if (v->dim_names.size() != v->shape.size()) return kNone;
  return v->dim_names[static_cast<size_t>(dim)].c_str();
}

}  // namespace

extern "C" {

const char* ng_last_error(void) { return t_last_error.c_str(); }

const char* ng_version(void) { return ninegrid::version(); }

// ---- options ----

ng_status ng_options_create(ng_options** out) {
  if (!out) return invalid("ng_options_create: out is NULL");
  *out = nullptr;
  return guarded("ng_options_create", "", [&] { *out = new ng_options(); });
}
ng_status ng_options_set_threads(ng_options* o, int threads) {
  if (!o) return invalid("ng_options_set_threads: options is NULL");
  if (threads < 0) return invalid("ng_options_set_threads: threads must be >= 0, got " + std::to_string(threads));
  o->options.threads = threads;
  return ok();
}
ng_status ng_options_set_opt_level(ng_options* o, int level) {
  if (!o) return invalid("ng_options_set_opt_level: options is NULL");
  if (level < 0 || level > 2)
    return invalid("ng_options_set_opt_level: level must be 0, 1 or 2, got " + std::to_string(level));
  o->options.opt_level = level;
  return ok();
}
ng_status ng_options_set_input_shape(ng_options* o, const char* input, const int64_t* shape, int rank) {
  if (!o || !input) return invalid("ng_options_set_input_shape: options or input name is NULL");
  ninegrid::Shape s;
  std::string bad = check_shape(shape, rank, &s);
  if (!bad.empty()) return invalid(std::string("ng_options_set_input_shape: input '") + input + "': " + bad);
  return guarded("ng_options_set_input_shape", "", [&] { o->options.input_shapes[input] = s; });
}
ng_status ng_options_set_weights_path(ng_options* o, const char* path) {
  if (!o || !path) return invalid("ng_options_set_weights_path: options or path is NULL");
  return guarded("ng_options_set_weights_path", "", [&] { o->options.weights_path = path; });
}
ng_status ng_options_set_isa(ng_options* o, const char* isa) {
  if (!o || !isa) return invalid("ng_options_set_isa: options or isa is NULL");
  return guarded("ng_options_set_isa", "", [&] { o->options.isa = isa; });
}
ng_status ng_options_set_conv_algorithms(ng_options* o, const char* algorithms) {
  if (!o || !algorithms) return invalid("ng_options_set_conv_algorithms: options or algorithms is NULL");
  return guarded("ng_options_set_conv_algorithms", "", [&] { o->options.conv_algorithms = algorithms; });
}
ng_status ng_options_set_winograd_tile(ng_options* o, int tile) {
  if (!o) return invalid("ng_options_set_winograd_tile: options is NULL");
  if (tile != 0 && tile != 2 && tile != 4 && tile != 6)
    return invalid("ng_options_set_winograd_tile: tile must be 0 (chosen per layer), 2, 4 or 6, got " + std::to_string(tile));
  o->options.winograd_tile = tile;
  return ok();
}
ng_status ng_options_set_spin_microseconds(ng_options* o, int microseconds) {
  if (!o) return invalid("ng_options_set_spin_microseconds: options is NULL");
  if (microseconds < -1 || microseconds > 1000000)
    return invalid("ng_options_set_spin_microseconds: microseconds must be -1 (the engine chooses), 0 (never spin) "
                   "or up to 1000000, got " + std::to_string(microseconds));
  o->options.spin_microseconds = microseconds;
  return ok();
}
ng_status ng_options_set_tuning_cache(ng_options* o, const char* path) {
  if (!o || !path) return invalid("ng_options_set_tuning_cache: options or path is NULL");
  return guarded("ng_options_set_tuning_cache", "", [&] { o->options.tuning_cache = path; });
}
ng_status ng_options_set_use_tuning_cache(ng_options* o, int use) {
  if (!o) return invalid("ng_options_set_use_tuning_cache: options is NULL");
  if (use != 0 && use != 1)
    return invalid("ng_options_set_use_tuning_cache: use must be 0 or 1, got " + std::to_string(use));
  o->options.use_tuning_cache = use == 1;
  return ok();
}
ng_status ng_options_set_max_tensor_bytes(ng_options* o, int64_t bytes) {
  return set_budget(o, &ninegrid::Options::max_tensor_bytes, "ng_options_set_max_tensor_bytes", bytes);
}
ng_status ng_options_set_max_arena_bytes(ng_options* o, int64_t bytes) {
  return set_budget(o, &ninegrid::Options::max_arena_bytes, "ng_options_set_max_arena_bytes", bytes);
}
ng_status ng_options_set_max_file_bytes(ng_options* o, int64_t bytes) {
  return set_budget(o, &ninegrid::Options::max_file_bytes, "ng_options_set_max_file_bytes", bytes);
}
void ng_options_free(ng_options* o) { delete o; }

// ---- models ----

ng_status ng_model_load(const char* path, const ng_options* options, ng_model** out) {
  if (!out) return invalid("ng_model_load: out is NULL");
  *out = nullptr;
  if (!path) return invalid("ng_model_load: path is NULL");
  const ninegrid::Options o = options ? options->options : ninegrid::Options{};
  return guarded("ng_model_load", "", [&] {
    auto* model = new ng_model{ninegrid::Model::load(path, o), path, {}, {}};
    model->isa = model->model->isa();
    for (const std::string& w : model->model->warnings()) model->warnings += (model->warnings.empty() ? "" : "\n") + w;
    *out = model;
  });
}

ng_status ng_model_load_onnx_memory(const void* data, size_t size, const ng_options* options, ng_model** out) {
  if (!out) return invalid("ng_model_load_onnx_memory: out is NULL");
  *out = nullptr;
  if (!data && size > 0) return invalid("ng_model_load_onnx_memory: data is NULL");
  const ninegrid::Options o = options ? options->options : ninegrid::Options{};
  if (over_file_budget(size, o)) return too_large("ng_model_load_onnx_memory", "the model", size, o);
  return guarded("ng_model_load_onnx_memory", "", [&] {
    auto* model = new ng_model{ninegrid::Model::load_onnx(data, size, o), "<memory>", {}, {}};
    model->isa = model->model->isa();
    for (const std::string& w : model->model->warnings()) model->warnings += (model->warnings.empty() ? "" : "\n") + w;
    *out = model;
  });
}

ng_status ng_model_load_ncnn_memory(const char* param, size_t param_size, const void* weights, size_t weights_size,
                                    const ng_options* options, ng_model** out) {
  if (!out) return invalid("ng_model_load_ncnn_memory: out is NULL");
  *out = nullptr;
  if (!param && param_size > 0) return invalid("ng_model_load_ncnn_memory: param is NULL");
  if (!weights && weights_size > 0) return invalid("ng_model_load_ncnn_memory: weights is NULL");
  const ninegrid::Options o = options ? options->options : ninegrid::Options{};
  if (over_file_budget(param_size, o)) return too_large("ng_model_load_ncnn_memory", "the .param text", param_size, o);
  if (over_file_budget(weights_size, o)) return too_large("ng_model_load_ncnn_memory", "the weights", weights_size, o);
  return guarded("ng_model_load_ncnn_memory", "", [&] {
    const std::string text = param ? std::string(param, param_size) : std::string();
    auto* model = new ng_model{ninegrid::Model::load_ncnn(text, weights, weights_size, o), "<memory>", {}, {}};
    model->isa = model->model->isa();
    for (const std::string& w : model->model->warnings()) model->warnings += (model->warnings.empty() ? "" : "\n") + w;
    *out = model;
  });
}

void ng_model_free(ng_model* m) { delete m; }
int ng_model_input_count(const ng_model* m) { return m ? static_cast<int>(m->model->inputs().size()) : 0; }
int ng_model_output_count(const ng_model* m) { return m ? static_cast<int>(m->model->outputs().size()) : 0; }
const char* ng_model_input_name(const ng_model* m, int i) {
  if (!m || i < 0 || i >= ng_model_input_count(m)) return nullptr;
  return m->model->inputs()[static_cast<size_t>(i)].name.c_str();
}
const char* ng_model_output_name(const ng_model* m, int i) {
  if (!m || i < 0 || i >= ng_model_output_count(m)) return nullptr;
  return m->model->outputs()[static_cast<size_t>(i)].name.c_str();
}
ng_dtype ng_model_input_dtype(const ng_model* m, int i) {
  const ninegrid::ValueInfo* v = value_info(m, i, true);
  return v ? static_cast<ng_dtype>(v->dtype) : NG_UNDEFINED;
}
ng_dtype ng_model_output_dtype(const ng_model* m, int i) {
  const ninegrid::ValueInfo* v = value_info(m, i, false);
  return v ? static_cast<ng_dtype>(v->dtype) : NG_UNDEFINED;
}
int ng_model_input_rank(const ng_model* m, int i) { return value_rank(value_info(m, i, true)); }
int ng_model_output_rank(const ng_model* m, int i) { return value_rank(value_info(m, i, false)); }
const int64_t* ng_model_input_shape(const ng_model* m, int i) { return value_dims(value_info(m, i, true)); }
const int64_t* ng_model_output_shape(const ng_model* m, int i) { return value_dims(value_info(m, i, false)); }
const char* ng_model_input_dim_name(const ng_model* m, int i, int dim) {
  return value_dim_name(value_info(m, i, true), dim);
}
const char* ng_model_output_dim_name(const ng_model* m, int i, int dim) {
  return value_dim_name(value_info(m, i, false), dim);
}
const char* ng_model_format(const ng_model* m) { return m ? m->model->format().c_str() : nullptr; }
const char* ng_model_isa(const ng_model* m) { return m ? m->isa.c_str() : nullptr; }
const char* ng_model_warnings(const ng_model* m) { return m ? m->warnings.c_str() : nullptr; }

// ---- sessions ----

ng_status ng_session_create(const ng_model* m, ng_session** out) {
  if (!out) return invalid("ng_session_create: out is NULL");
  *out = nullptr;
  if (!m) return invalid("ng_session_create: model is NULL");
  return guarded("ng_session_create", m->source, [&] {
    auto* s = new ng_session();
    s->source = m->source;
    try {
      s->session = m->model->create_session();
    } catch (...) {
      delete s;
      throw;
    }
    *out = s;
  });
}
void ng_session_free(ng_session* s) { delete s; }
int ng_session_threads(const ng_session* s) { return s ? s->session->threads() : 0; }

ng_status ng_session_set_input(ng_session* s, const char* name, ng_dtype dtype, const int64_t* shape, int rank,
                               const void* data) {
  if (!s || !name) return invalid("ng_session_set_input: session or name is NULL");
  Busy busy(s);
  if (!busy.entered()) return busy_error("ng_session_set_input", s);
  const std::string where = std::string("ng_session_set_input: input '") + name + "': ";
  if (!known_dtype(static_cast<int>(dtype)))
    return invalid(where + "unknown dtype " + std::to_string(static_cast<int>(dtype)));
  ninegrid::Shape dims;
  std::string bad = check_shape(shape, rank, &dims);
  if (!bad.empty()) return invalid(where + bad);
  const auto t = static_cast<ninegrid::DataType>(dtype);
  int64_t bytes;
  if (__builtin_mul_overflow(ninegrid::shape_numel(dims), static_cast<int64_t>(ninegrid::dtype_size(t)), &bytes))
    return invalid(where + "shape " + ninegrid::shape_str(dims) + " has more bytes than can be counted");
  if (!data && bytes > 0) return invalid(where + "data is NULL for " + ninegrid::shape_str(dims));
  return guarded("ng_session_set_input", s->source, [&] {
    s->session->set_input(name, ninegrid::Tensor::wrap(t, dims, const_cast<void*>(data)));
  });
}

ng_status ng_session_run(ng_session* s) {
  if (!s) return invalid("ng_session_run: session is NULL");
  Busy busy(s);
  if (!busy.entered()) return busy_error("ng_session_run", s);
  s->outputs.clear();
  s->have_outputs = false;
  return guarded("ng_session_run", s->source, [&] {
    s->session->run();
    s->have_outputs = true;
  });
}

ng_status ng_session_get_output(ng_session* s, const char* name, ng_dtype* dtype, const void** data,
                                const int64_t** shape, int* rank) {
  if (!s || !name || !data || !shape || !rank)
    return invalid("ng_session_get_output: session, name, data, shape or rank is NULL");
  Busy busy(s);
  if (!busy.entered()) return busy_error("ng_session_get_output", s);
  if (!s->have_outputs)
    return guarded("ng_session_get_output", s->source, [&] {
      throw ninegrid::Error(std::string("output '") + name +
                            "' is not available: no successful ng_session_run since the session was created or "
                            "since the last run failed");
    });
  return guarded("ng_session_get_output", s->source, [&] {
    auto it = s->outputs.find(name);
    if (it == s->outputs.end()) it = s->outputs.emplace(name, s->session->output(name)).first;
    const ninegrid::Tensor& t = it->second;
    if (dtype) *dtype = static_cast<ng_dtype>(t.dtype());
    *data = t.data();
    *shape = t.shape().data();
    *rank = t.rank();
  });
}

// ---- profiling ----

ng_status ng_session_set_profiling(ng_session* s, int on) {
  if (!s) return invalid("ng_session_set_profiling: session is NULL");
  Busy busy(s);
  if (!busy.entered()) return busy_error("ng_session_set_profiling", s);
  return guarded("ng_session_set_profiling", s->source, [&] { s->session->set_profiling(on != 0); });
}

ng_status ng_session_profile_count(ng_session* s, int* count) {
  if (!s || !count) return invalid("ng_session_profile_count: session or count is NULL");
  Busy busy(s);
  if (!busy.entered()) return busy_error("ng_session_profile_count", s);
  *count = 0;
  return guarded("ng_session_profile_count", s->source, [&] {
    std::vector<ninegrid::StepProfile> steps = s->session->profile();
    std::vector<std::string> fused;
    for (const auto& st : steps) {
      std::string joined;
      for (const auto& f : st.fused) joined += (joined.empty() ? "" : ",") + f;
      fused.push_back(std::move(joined));
    }
    s->profile = std::move(steps);
    s->fused = std::move(fused);
    *count = static_cast<int>(s->profile.size());
  });
}

const char* ng_session_profile_name(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [](const ninegrid::StepProfile& p, size_t) { return p.name.c_str(); });
}
const char* ng_session_profile_op_type(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [](const ninegrid::StepProfile& p, size_t) { return p.op_type.c_str(); });
}
const char* ng_session_profile_fused(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [&](const ninegrid::StepProfile&, size_t i) { return s->fused[i].c_str(); });
}
const char* ng_session_profile_algorithm(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [](const ninegrid::StepProfile& p, size_t) { return p.algorithm.c_str(); });
}
const char* ng_session_profile_precision(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [](const ninegrid::StepProfile& p, size_t) { return p.precision.c_str(); });
}
const char* ng_session_profile_layout(const ng_session* s, int step) {
  return read_step<const char*>(s, step, nullptr, [](const ninegrid::StepProfile& p, size_t) { return p.layout.c_str(); });
}
double ng_session_profile_time_ms(const ng_session* s, int step) {
  return read_step<double>(s, step, -1.0, [](const ninegrid::StepProfile& p, size_t) { return p.time_ms; });
}
int64_t ng_session_profile_macs(const ng_session* s, int step) {
  return read_step<int64_t>(s, step, -1, [](const ninegrid::StepProfile& p, size_t) { return p.macs; });
}
int64_t ng_session_profile_bytes(const ng_session* s, int step) {
  return read_step<int64_t>(s, step, -1, [](const ninegrid::StepProfile& p, size_t) { return p.bytes; });
}

}  // extern "C"
