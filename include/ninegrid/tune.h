// Schedule search (NeoCPU's, DESIGN.md technique 11): times every distinct conv of a model under each
// candidate plan (algorithm, vector width, Winograd tile, register tile, Strassen depth, thread split) on
// this CPU, in place in a session of the model (its real buffers, layouts and threads), searches the
// convs' channel blocks over the whole graph, and keeps what it found in the tuning cache
// (Options::tuning_cache), which every later load on this CPU uses instead of the rules' guesses.
//
//   ninegrid::TuneOptions o;
//   o.model.threads = 2;
//   ninegrid::TuneReport r = ninegrid::tune("retinaface.onnx", o);   // writes the cache
//   auto model = ninegrid::Model::load("retinaface.onnx", o.model);  // uses it
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ninegrid/ninegrid.h"

namespace ninegrid {

struct TuneOptions {
  // How the model is loaded and run while tuning, as later loads will (threads, input shapes, ISA cap,
  // allowed algorithms ...). Its tuning_cache names the file read and written (empty: the default);
  // use_tuning_cache false times every conv again even where the file holds it.
  Options model;
  // Stop starting new measurements after this many seconds (what was measured is kept; the rest keeps
  // the rules' plans).
  double budget_seconds = 120;
  // Search the convs' output channel blocks over the graph (global search); false keeps the rules' layout.
  bool search_layouts = true;
  // Write the results to the cache file; false only reports them.
  bool write_cache = true;
  // Called as work progresses: measurements done, the total expected, and what is being measured.
  std::function<void(int done, int total, const std::string& what)> progress;
};

// One distinct conv (a shape, epilogue, layout and thread count), possibly several layers.
struct TunedConvReport {
  std::vector<std::string> layers;  // the conv nodes it covers
  std::string conv;                 // "3x640x640 -> 8, 3x3 s2, Relu, 1>8"
  std::string rule_plan, tuned_plan;  // "winograd43/avx512 16>16", "direct/avx2 8>8 tile1 rows" ...
  double rule_us = 0, tuned_us = 0;   // each plan's median time in place
  int candidates = 0;                 // plans timed now
  bool from_cache = false;            // already in the cache: not timed again
  bool kept_rules = false;            // confirmed in the model: the tuned plan was no faster there
};

struct TuneReport {
  std::vector<TunedConvReport> convs;
  int layers = 0;             // conv layers running a vector kernel
  int timed = 0;              // distinct convs timed in this call
  int from_cache = 0;         // distinct convs the cache held already
  bool budget_exhausted = false;
  // The global search: convs whose output block it changed from the rules', and the graph's estimated
  // time (conv times plus layout transforms, microseconds) under the rules' blocks and its own.
  int layout_changes = 0;
  double layout_rule_us = 0, layout_tuned_us = 0;
  bool layout_kept = false;   // the searched layout was faster in the model and is in the cache
  // The whole model, rules against tuned plans, median latency over interleaved runs (milliseconds).
  double rule_model_ms = 0, tuned_model_ms = 0;
  // The whole model's thread count: the threads asked for (TuneOptions::model.threads, 0 for one per
  // core), the median latency with the tuned plans at them and at each halving down to one (threads,
  // milliseconds; empty when one was asked for), and the threads its sessions now run on: fewer than
  // asked only where fewer ran it faster by a margin (then the cache says so, and Model::threads() too).
  int threads_asked = 1, threads = 1;
  std::vector<std::pair<int, double>> model_ms_by_threads;
  double seconds = 0;         // the whole search
  std::string cache_path;     // the file written ("" when not written)
  std::vector<std::string> warnings;
};

// Tunes the model at `model_path` (ONNX or ncnn, as Model::load takes it; every input shape must be known,
// from the model or options.model.input_shapes). Throws Error when the model cannot be loaded or run, or
// the cache cannot be written.
TuneReport tune(const std::string& model_path, const TuneOptions& options);

}  // namespace ninegrid
