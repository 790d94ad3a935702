// Times an MNN model (.mnn, fp32 or int8) the way bench/ort_runner.js times ONNX Runtime, for
// bench/compare.py --peers mnn; or saves its outputs as .npy for the conversion check.
//
//   mnn_runner MODEL.mnn [--threads T] [--runs R] [--warmup W] [--shape NAME=1x3x640x640]
//              [--input NAME=FILE.npy] [--save-outputs DIR] [--json] [--low-precision] [--profile]
//
// The session is set up as MNN's own benchmark (benchmark/benchmark.cpp) sets it up: CPU backend,
// Session_Release, Power_High, the model buffer released after the session is made; precision Normal (fp32
// on x86) unless --low-precision (MNN's benchmark default, Precision_Low, which lets MNN use fp16/bf16 where
// the build has it). Load time is createFromFile, createSession and the resize to the given shapes; a timed
// run is runSession plus copying every output to a plain host tensor in its own layout (what the benchmark's
// map/unmap of the output does).
//
// --profile: instead of the timing report, each op's median time over the runs (runSessionWithCallBackInfo in
// a debug session, as MNN's own timeProfile tool measures, one op at a time), one JSON line: {"ops": [{"name",
// "type", "median_ms"}, ...]} in execution order, to set beside `ninegrid profile --json` layer by layer.
#include <MNN/Interpreter.hpp>
#include <MNN/MNNForwardType.h>
#include <MNN/Tensor.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runner_common.h"

int main(int argc, char** argv) {
  try {
    const peer::Args a = peer::parse_args(argc, argv, {"--low-precision", "--profile"});
    if (a.model.size() != 1) throw std::runtime_error("usage: mnn_runner MODEL.mnn [options] (see the source)");

    const double t0 = peer::now_ms();
    std::shared_ptr<MNN::Interpreter> net(MNN::Interpreter::createFromFile(a.model[0].c_str()),
                                          MNN::Interpreter::destroy);
    if (!net) throw std::runtime_error("MNN cannot load " + a.model[0]);
    // Op callbacks run only in a debug session (what MNN's timeProfile tool sets too).
    net->setSessionMode(peer::has_flag(a, "--profile") ? MNN::Interpreter::Session_Debug
                                                       : MNN::Interpreter::Session_Release);
    MNN::ScheduleConfig config;
    config.type = MNN_FORWARD_CPU;
    config.numThread = a.threads;
    MNN::BackendConfig backend;
    backend.precision = peer::has_flag(a, "--low-precision") ? MNN::BackendConfig::Precision_Low
                                                             : MNN::BackendConfig::Precision_Normal;
    backend.power = MNN::BackendConfig::Power_High;
    config.backendConfig = &backend;
    MNN::Session* session = net->createSession(config);
    if (!session) throw std::runtime_error("MNN cannot create a session for " + a.model[0]);

    // Shapes: from --input, else --shape, else what the model declares.
    const std::map<std::string, MNN::Tensor*> inputs = net->getSessionInputAll(session);
    std::map<std::string, peer::Npy> given;  // by the model's input name
    for (const auto& in : inputs) {
      auto file = peer::find_tensor(a.inputs, in.first);
      if (file != a.inputs.end()) given[in.first] = peer::read_npy(file->second);
    }
    bool resized = false;
    for (const auto& in : inputs) {
      std::vector<int> dims;
      auto shape = peer::find_tensor(a.shapes, in.first);
      if (given.count(in.first)) dims = given[in.first].shape;
      else if (shape != a.shapes.end()) dims = shape->second;
      if (!dims.empty()) {
        if (dims != in.second->shape()) {
          net->resizeTensor(in.second, dims);
          resized = true;
        }
        continue;
      }
      for (int d : in.second->shape())
        if (d <= 0) throw std::runtime_error("input " + in.first + " has a dynamic shape: pass --shape " + in.first + "=...");
    }
    if (resized) net->resizeSession(session);
    net->releaseModel();
    const double load_ms = peer::now_ms() - t0;

    for (const auto& in : inputs) {
      // In the tensor's own layout: for an input the converter kept NHWC (BlazeFace's), that is the order
      // of the ONNX shape the values come in; a CAFFE host copy would transpose them.
      MNN::Tensor host(in.second, in.second->getDimensionType());
      const size_t n = static_cast<size_t>(host.elementSize());
      if (given.count(in.first)) {
        if (given[in.first].data.size() != n) throw std::runtime_error("input " + in.first + ": size");
        std::copy(given[in.first].data.begin(), given[in.first].data.end(), host.host<float>());
      } else {
        peer::fill_pattern(host.host<float>(), n);
      }
      in.second->copyFromHostTensor(&host);
    }

    const std::map<std::string, MNN::Tensor*> outputs = net->getSessionOutputAll(session);
    std::vector<std::pair<std::string, std::unique_ptr<MNN::Tensor>>> hosts;
    for (const auto& out : outputs)
      hosts.emplace_back(out.first, std::unique_ptr<MNN::Tensor>(new MNN::Tensor(out.second, out.second->getDimensionType())));

    auto run = [&]() {
      if (net->runSession(session) != MNN::NO_ERROR) throw std::runtime_error("MNN runSession failed");
      for (auto& h : hosts) outputs.at(h.first)->copyToHostTensor(h.second.get());
    };
    if (!a.save.empty()) {
      run();
      for (auto& h : hosts) {
        if (h.second->getType().code != halide_type_float) throw std::runtime_error("output " + h.first + " is not float");
        peer::write_npy(a.save + "/" + peer::file_name(h.first) + ".npy", h.second->shape(), h.second->host<float>());
      }
    }
    for (int i = 0; i < a.warmup; ++i) run();
    if (peer::has_flag(a, "--profile")) {
      std::vector<std::string> names, types;
      std::vector<std::vector<double>> op_times;
      size_t op = 0;
      double started = 0;
      MNN::TensorCallBackWithInfo before = [&](const std::vector<MNN::Tensor*>&, const MNN::OperatorInfo*) {
        started = peer::now_ms();
        return true;
      };
      MNN::TensorCallBackWithInfo after = [&](const std::vector<MNN::Tensor*>& outs, const MNN::OperatorInfo* info) {
        for (MNN::Tensor* t : outs) t->wait(MNN::Tensor::MAP_TENSOR_READ, true);
        const double ms = peer::now_ms() - started;
        if (op == names.size()) {
          names.push_back(info->name());
          types.push_back(info->type());
          op_times.emplace_back();
        }
        op_times[op++].push_back(ms);
        return true;
      };
      for (int i = 0; i < a.runs; ++i) {
        op = 0;
        if (net->runSessionWithCallBackInfo(session, before, after, true) != MNN::NO_ERROR)
          throw std::runtime_error("MNN runSessionWithCallBackInfo failed");
      }
      auto quoted = [](const std::string& v) {
        std::string q;
        for (char c : v) {
          if (c == '"' || c == '\\') q += '\\';
          if (static_cast<unsigned char>(c) >= 0x20) q += c;
        }
        return q;
      };
      std::printf("{\"ops\": [");
      for (size_t i = 0; i < names.size(); ++i) {
        std::vector<double>& t = op_times[i];
        std::sort(t.begin(), t.end());
        std::printf("%s{\"name\": \"%s\", \"type\": \"%s\", \"median_ms\": %.6f}", i ? ", " : "",
                    quoted(names[i]).c_str(), quoted(types[i]).c_str(), t[t.size() / 2]);
      }
      std::printf("]}\n");
      return 0;
    }
    std::vector<double> times;
    for (int i = 0; i < a.runs; ++i) {
      const double s = peer::now_ms();
      run();
      times.push_back(peer::now_ms() - s);
    }
    peer::report("mnn", a, load_ms, times);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mnn_runner: error: %s\n", e.what());
    return 1;
  }
}
