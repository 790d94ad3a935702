// ninegrid run: run a model once on given or generated inputs, print a summary of every output and
// optionally write the outputs as .npy files.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "cli_common.h"
#include "commands.h"
#include "ninegrid/npy.h"

namespace ninegrid::cli {

namespace {

// DIR/<file-safe name>.npy, with a numeric suffix when two output names map to the same file.
std::string output_path(const std::string& dir, const std::string& name, std::set<std::string>& used) {
  std::string base = file_safe_name(name);
  std::string file = base;
  for (int k = 2; used.count(file); ++k) file = base + "_" + std::to_string(k);
  used.insert(file);
  return (std::filesystem::path(dir) / (file + ".npy")).string();
}

}  // namespace

int cmd_run(int argc, char** argv) {
  ModelArgs margs;
  std::vector<std::string> input_args;
  std::string output_dir;
  ArgParser p("run", "Run a model once and print each output's name, shape and min/mean/max.");
  add_model_options(p, margs);
  p.repeated("--input", "[NAME=]FILE.npy",
             "input values from a .npy file (dtype and shape must match the model); inputs not given are "
             "filled with a fixed pseudo-random pattern (floats in [0,1), integers in [0,4))",
             &input_args);
  p.option("--output-dir", "DIR",
           "write each output as DIR/<name>.npy, characters other than A-Z a-z 0-9 . _ - replaced by '_'; "
           "DIR is created if missing",
           &output_dir, "none: outputs are not written");
  p.epilog("example: ninegrid run model.onnx --input images=img.npy --output-dir out/");
  int exit_code;
  if (!p.parse(argc, argv, &exit_code)) return exit_code;

  std::vector<GivenInput> given;
  for (const std::string& a : input_args)
    given.push_back(read_input_arg(a, options_from_args(margs).max_file_bytes));

  LoadedModel loaded = load_model(margs, given);
  std::vector<Tensor> bound = bind_inputs(loaded, given);
  loaded.session->run();

  if (!output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) throw Error("cannot create output directory '" + output_dir + "': " + ec.message());
  }
  std::set<std::string> used_files;
  size_t name_w = 0;
  for (const ValueInfo& o : loaded.model->outputs()) name_w = std::max(name_w, o.name.size());
  for (const ValueInfo& o : loaded.model->outputs()) {
    Tensor t = loaded.session->output(o.name);
    TensorStats s = tensor_stats(t);
    std::printf("%-*s  %-7s %-16s", static_cast<int>(name_w), o.name.c_str(), dtype_name(t.dtype()),
                shape_str(t.shape()).c_str());
    if (s.numeric) std::printf("  min %.6g  mean %.6g  max %.6g", s.min, s.mean, s.max);
    if (s.non_finite) std::printf("  (%lld non-finite)", static_cast<long long>(s.non_finite));
    if (!output_dir.empty()) {
      std::string path = output_path(output_dir, o.name, used_files);
      write_npy(path, t);
      std::printf("  -> %s", path.c_str());
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace ninegrid::cli
