// ninegrid public API: load a model, create sessions, run them.
//
//   auto model = ninegrid::Model::load("retinaface.onnx");
//   auto session = model->create_session();
//   session->set_input("input", ninegrid::Tensor::wrap(ninegrid::DataType::Float32, {1, 3, 640, 640}, pixels));
//   session->run();
//   ninegrid::Tensor scores = session->output("scores");
//
// A Model is immutable once loaded and may be shared by any number of Sessions; each Session is used by
// one thread at a time, and different Sessions of one Model may run at once on different threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ninegrid/tensor.h"

namespace ninegrid {

struct Options {
  // Worker threads per session; 0 means one per available core.
  int threads = 0;
  // Shapes for inputs whose dimensions the model leaves dynamic (or to override them), by input name.
  std::map<std::string, Shape> input_shapes;
  // Graph optimisation: 0 none, 1 fusion and constant folding, 2 also layout planning.
  int opt_level = 2;
  // ncnn models: the .bin weights file. Empty means the .param path with its extension replaced by .bin.
  std::string weights_path;
};

// Name, element type and shape of a model input or output. Dimensions not known until the inputs are
// bound are -1.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::Float32;
  Shape shape;
};

class Session;
class ModelImpl;

class Model : public std::enable_shared_from_this<Model> {
 public:
  // Loads an ONNX file (.onnx) or an ncnn model (.param, with its .bin beside it or in
  // options.weights_path). The format is recognised from the file's contents. Throws Error.
  static std::shared_ptr<Model> load(const std::string& path, const Options& options = {});
  // The same from memory: an ONNX ModelProto's bytes.
  static std::shared_ptr<Model> load_onnx(const void* data, size_t size, const Options& options = {});
  // The same from memory: an ncnn .param text and its .bin weights.
  static std::shared_ptr<Model> load_ncnn(const std::string& param_text, const void* weights, size_t weights_size,
                                          const Options& options = {});

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const Options& options() const;

  // A new session with its own working memory and threads. Throws Error if an input shape is unusable.
  std::unique_ptr<Session> create_session() const;

  // Internal representation, for the tools in this repository.
  const ModelImpl& impl() const { return *impl_; }

  explicit Model(std::unique_ptr<ModelImpl> impl);
  ~Model();

 private:
  std::unique_ptr<ModelImpl> impl_;
};

class SessionImpl;

class Session {
 public:
  // Binds an input. The tensor's memory is read in place during run() (no copy), so it must stay alive
  // and unchanged until run() returns. A shape different from the last run's re-plans the session.
  void set_input(const std::string& name, const Tensor& value);
  // Runs the model on the bound inputs. Throws Error on a missing input or a wrong shape or type.
  void run();
  // An output of the last run. Its storage belongs to the caller: the next run() writes new tensors.
  Tensor output(const std::string& name) const;

  // Convenience: bind all inputs, run, return every output by name.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

  SessionImpl& impl() { return *impl_; }

  explicit Session(std::unique_ptr<SessionImpl> impl);
  ~Session();

 private:
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace ninegrid
