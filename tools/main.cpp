// `ninegrid`: one binary, one subcommand per task. Errors print one line and exit non-zero.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "commands.h"
#include "ninegrid/ninegrid.h"

namespace {

struct Subcommand {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Subcommand kCommands[] = {
    {"detect", ninegrid::cli::cmd_detect, "find faces in photos and draw them"},
    {"run", ninegrid::cli::cmd_run, "run a model once and write its outputs as .npy"},
    {"info", ninegrid::cli::cmd_info, "describe a model: inputs, outputs, operators, parameters, MACs"},
    {"bench", ninegrid::cli::cmd_bench, "time a model: load time, latency, peak memory"},
    {"profile", ninegrid::cli::cmd_profile, "per-layer time and roofline report"},
    {"quantize", ninegrid::cli::cmd_quantize, "quantise a float ONNX model to int8 (QDQ) with calibration images"},
    {"tune", ninegrid::cli::cmd_tune, "time each conv's candidate plans on this CPU and write the tuning cache"},
};

void usage(FILE* out) {
  std::fprintf(out,
               "ninegrid: a CNN inference engine for CPUs (ONNX and ncnn models)\n\n"
               "usage: ninegrid <command> [options]   (ninegrid <command> --help for details)\n"
               "       ninegrid --version\n\n"
               "commands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
}

// The library's errors name the option a setting lives in; say which flag sets it on the command line.
std::string with_flag_hint(const std::string& message) {
  static const std::pair<const char*, const char*> kFlags[] = {
      {"Options::max_tensor_bytes", "--max-tensor-mb"}, {"Options::max_arena_bytes", "--max-memory-mb"},
      {"Options::max_file_bytes", "--max-file-mb"},     {"Options::isa", "--isa"},
      {"Options::conv_algorithms", "--conv-algorithms"}, {"Options::winograd_tile", "--winograd-tile"},
      {"Options::spin_microseconds", "--spin"},
      {"FaceDetectorOptions::arch", "--arch"}};
  for (const auto& [option, flag] : kFlags)
    if (message.find(option) != std::string::npos) return message + " [set with " + flag + "]";
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("ninegrid %s\n", ninegrid::version());
    return 0;
  }
  for (const auto& c : kCommands) {
    if (cmd != c.name) continue;
    try {
      return c.fn(argc - 1, argv + 1);
    } catch (const ninegrid::Error& e) {
      std::fprintf(stderr, "ninegrid %s: error: %s\n", c.name, with_flag_hint(e.what()).c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ninegrid %s: internal error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "ninegrid: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return 2;
}
