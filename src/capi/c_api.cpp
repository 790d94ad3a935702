// The C API: thin wrappers that turn exceptions into status codes and a per-thread message.
#include "ninegrid/ninegrid_c.h"

#include <exception>
#include <map>
#include <string>

#include "ninegrid/ninegrid.h"

struct ng_options {
  ninegrid::Options options;
};
struct ng_model {
  std::shared_ptr<ninegrid::Model> model;
};
struct ng_session {
  std::unique_ptr<ninegrid::Session> session;
  std::map<std::string, ninegrid::Tensor> outputs;  // keeps returned pointers alive until the next run
};

namespace {

thread_local std::string t_last_error;

template <class F>
ng_status guarded(F&& f) {
  try {
    f();
    t_last_error.clear();
    return NG_OK;
  } catch (const ninegrid::Error& e) {
    t_last_error = e.what();
  } catch (const std::exception& e) {
    t_last_error = std::string("internal error: ") + e.what();
  } catch (...) {
    t_last_error = "unknown internal error";
  }
  return NG_ERROR;
}

ng_status invalid(const char* what) {
  t_last_error = what;
  return NG_INVALID_ARGUMENT;
}

ninegrid::Shape to_shape(const int64_t* shape, int rank) {
  if (rank < 0 || rank > 16 || (rank > 0 && !shape)) throw ninegrid::Error("invalid shape (rank " + std::to_string(rank) + ")");
  return ninegrid::Shape(shape, shape + rank);
}

}  // namespace

extern "C" {

const char* ng_last_error(void) { return t_last_error.c_str(); }

ng_status ng_options_create(ng_options** out) {
  if (!out) return invalid("ng_options_create: out is NULL");
  return guarded([&] { *out = new ng_options(); });
}
ng_status ng_options_set_threads(ng_options* o, int threads) {
  if (!o) return invalid("options is NULL");
  if (threads < 0) return invalid("threads must be >= 0");
  o->options.threads = threads;
  return NG_OK;
}
ng_status ng_options_set_opt_level(ng_options* o, int level) {
  if (!o) return invalid("options is NULL");
  if (level < 0 || level > 2) return invalid("opt level must be 0, 1 or 2");
  o->options.opt_level = level;
  return NG_OK;
}
ng_status ng_options_set_input_shape(ng_options* o, const char* input, const int64_t* shape, int rank) {
  if (!o || !input) return invalid("options or input name is NULL");
  return guarded([&] { o->options.input_shapes[input] = to_shape(shape, rank); });
}
ng_status ng_options_set_weights_path(ng_options* o, const char* path) {
  if (!o || !path) return invalid("options or path is NULL");
  o->options.weights_path = path;
  return NG_OK;
}
void ng_options_free(ng_options* o) { delete o; }

ng_status ng_model_load(const char* path, const ng_options* options, ng_model** out) {
  if (!path || !out) return invalid("ng_model_load: path or out is NULL");
  *out = nullptr;
  return guarded([&] {
    auto m = ninegrid::Model::load(path, options ? options->options : ninegrid::Options{});
    *out = new ng_model{std::move(m)};
  });
}
void ng_model_free(ng_model* m) { delete m; }
int ng_model_input_count(const ng_model* m) { return m ? static_cast<int>(m->model->inputs().size()) : 0; }
int ng_model_output_count(const ng_model* m) { return m ? static_cast<int>(m->model->outputs().size()) : 0; }
const char* ng_model_input_name(const ng_model* m, int i) {
  if (!m || i < 0 || i >= ng_model_input_count(m)) return nullptr;
  return m->model->inputs()[i].name.c_str();
}
const char* ng_model_output_name(const ng_model* m, int i) {
  if (!m || i < 0 || i >= ng_model_output_count(m)) return nullptr;
  return m->model->outputs()[i].name.c_str();
}

ng_status ng_session_create(const ng_model* m, ng_session** out) {
  if (!m || !out) return invalid("ng_session_create: model or out is NULL");
  *out = nullptr;
  return guarded([&] { *out = new ng_session{m->model->create_session(), {}}; });
}
void ng_session_free(ng_session* s) { delete s; }

ng_status ng_session_set_input(ng_session* s, const char* name, ng_dtype dtype, const int64_t* shape, int rank,
                               const void* data) {
  if (!s || !name) return invalid("ng_session_set_input: session or name is NULL");
  return guarded([&] {
    auto t = ninegrid::Tensor::wrap(static_cast<ninegrid::DataType>(dtype), to_shape(shape, rank),
                                    const_cast<void*>(data));
    s->session->set_input(name, t);
  });
}

ng_status ng_session_run(ng_session* s) {
  if (!s) return invalid("ng_session_run: session is NULL");
  return guarded([&] {
    s->outputs.clear();
    s->session->run();
  });
}

ng_status ng_session_get_output(ng_session* s, const char* name, ng_dtype* dtype, const void** data,
                                const int64_t** shape, int* rank) {
  if (!s || !name || !data || !shape || !rank) return invalid("ng_session_get_output: NULL argument");
  return guarded([&] {
    auto it = s->outputs.find(name);
    if (it == s->outputs.end()) it = s->outputs.emplace(name, s->session->output(name)).first;
    const ninegrid::Tensor& t = it->second;
    if (dtype) *dtype = static_cast<ng_dtype>(t.dtype());
    *data = t.data();
    *shape = t.shape().data();
    *rank = t.rank();
  });
}

}  // extern "C"
