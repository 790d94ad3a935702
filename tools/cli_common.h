// What the model-running subcommands share: the options that say how to load a model (--shape,
// --threads, --weights, --opt-level), loading it with every input shape resolved, deterministic input
// data, output statistics, file-safe names and peak memory.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "ninegrid/ninegrid.h"

namespace ninegrid::cli {

struct ModelArgs {
  std::string model_path;
  std::vector<std::string> shapes;  // --shape values: "NAME=1x3x640x640" or a bare "1x3x640x640"
  int threads = 0;                  // 0 = one per core
  std::string weights;              // ncnn .bin; empty = beside the .param
  int opt_level = 2;
  // Kernel settings (Options::isa, conv_algorithms, winograd_tile); empty / -1: the environment's
  // NINEGRID_ISA, NINEGRID_CONV_ALGORITHMS, NINEGRID_WINOGRAD_TILE, else the library's default.
  std::string isa, conv_algorithms;
  int winograd_tile = -1;
  // Options::spin_microseconds; -1: the environment's NINEGRID_SPIN, else the library's choice.
  int spin_us = -1;
  // Options::tuning_cache (empty: the default file) and !Options::use_tuning_cache.
  std::string tuning_cache;
  bool no_tuning_cache = false;
  // Resource budget in MiB (Options::max_tensor_bytes, max_arena_bytes, max_file_bytes); -1: default.
  int max_tensor_mb = -1, max_arena_mb = -1, max_file_mb = -1;
};

// The Options these arguments (and the documented environment overrides) ask for.
Options options_from_args(const ModelArgs& args);

// Which of the shared options a subcommand offers.
struct ModelOptionSet {
  bool threads = true;
  bool opt_level = true;
  bool tuning_cache = true;  // --tuning-cache, --no-tuning-cache
};

// Registers MODEL and the shared options on `parser`, bound to `args`.
void add_model_options(ArgParser& parser, ModelArgs& args, ModelOptionSet which = {});

// "NAME=1x3x224x224" -> {"NAME", {1,3,224,224}}; a bare "1x3x224x224" -> {"", {...}}. Dimensions must be
// positive. Throws Error on anything else.
std::pair<std::string, Shape> parse_shape_arg(const std::string& text);

// A tensor the user supplied for an input (run --input NAME=FILE.npy).
struct GivenInput {
  std::string name;  // empty: the model's only input
  std::string path;
  Tensor value;
};
// "NAME=FILE.npy" or a bare "FILE.npy"; reads the file (at most max_file_bytes; 0: no limit). Throws
// Error naming the file on failure.
GivenInput read_input_arg(const std::string& text, int64_t max_file_bytes);

struct LoadedModel {
  std::shared_ptr<Model> model;
  std::unique_ptr<Session> session;  // planned for `input_shapes`; null when shapes are unresolved
  std::vector<Shape> input_shapes;   // per model input, every dimension concrete (when resolved)
  std::vector<ValueInfo> declared_inputs;  // as the model declares them (after --shape), -1 = dynamic
  double load_ms = 0;                // the final Model::load plus session creation and planning
  std::string unresolved;            // why shapes could not be resolved (only with require_shapes=false)
};

// Loads the model with every input shape concrete (the model's load-time warnings, such as an ignored
// tuning cache, go to stderr): --shape values first, then the shapes of `given`
// inputs, then the model's declared shapes with a dynamic leading (batch) dimension set to 1. Any other
// dynamic dimension is an error asking for --shape NAME=..., unless require_shapes is false, in which
// case the model is returned without a session and `unresolved` says why. `given` inputs are checked
// against the model (name, dtype, rank, fixed dimensions) and get their names filled in.
LoadedModel load_model(const ModelArgs& args, std::vector<GivenInput>& given, bool require_shapes = true);

// Deterministic pseudo-random contents for input number `index`: floats uniform in [0, 1) from a fixed
// linear congruential generator, integers in [0, 4), booleans 0/1. The same call gives the same bytes
// on every run and machine.
Tensor make_input(DataType dtype, const Shape& shape, size_t index);

// Binds the given inputs and fills the rest with make_input(); returns what was bound (kept alive by
// the caller while the session runs).
std::vector<Tensor> bind_inputs(const LoadedModel& loaded, const std::vector<GivenInput>& given);

struct TensorStats {
  bool numeric = false;  // false for types without a numeric summary
  double min = 0, mean = 0, max = 0;
  int64_t non_finite = 0;  // NaN and infinities, left out of min/mean/max
};
TensorStats tensor_stats(const Tensor& t);

// Replaces every character outside [A-Za-z0-9._-] with '_' ("a/b:0" -> "a_b_0"); never empty.
std::string file_safe_name(const std::string& name);

// Peak resident memory of this process so far, in MiB (VmHWM, or ru_maxrss where /proc is missing).
double peak_rss_mb();

// Milliseconds since an arbitrary fixed point, monotonic.
double now_ms();

}  // namespace ninegrid::cli
