// The tuning cache: what `ninegrid tune` measured on a CPU, kept in a text file so that later loads (of
// this model or any other with the same conv shapes) use it without timing anything again.
//
// One file may hold several CPUs' results (a home directory shared between machines); each entry belongs
// to the CPU line above it (cpu_identity(): vendor, model, ISA, cache sizes). A load reads only this CPU's
// entries. The file is never trusted: every field is checked (a conv key must describe a valid conv, a
// plan must parse, times must be finite and positive, the entry count at the end must match), and a file
// with any fault is ignored whole, with a warning; the policy then checks every plan against its conv
// once more before using it (ops/conv_select.h).
//
//   ninegrid-tuning-cache 1
//   cpu AuthenticAMD|AMD EPYC 9R14|avx512|L1d 32K|L2 1024K|L3 32768K
//   conv 1 64 64 1 56 56 56 56 3 3 1 1 1 1 1 1 1 1 Relu 0 16 16 avx512 2 | winograd avx512 16 16 0 4 0 tiles | 812.5 901.2
//   reorder 64 3136 16 8 2 | 5.1
//   layout 9f3a12c0e4d5b6a7 | 3:16 7:8 12:16
//   threads 5be0c7d2a1f93e48 | 1
//   end 5
//
// conv: key (ops/conv_plan.h) | tuned plan | its time and the rules' plan's time in microseconds.
// reorder: channels, plane, from block, to block, threads | time in microseconds (the global search's
//          transform costs).
// layout: a graph's fingerprint | the output block the global search chose per conv node (node index).
// threads: a model's fingerprint (runtime/thread_choice.h; it includes the thread count asked for) | the
//          fewer threads that ran the whole model faster than the count asked for.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ops/conv_plan.h"

namespace ninegrid {

struct TunedConv {
  ConvPlan plan;
  double time_us = 0;       // the plan's measured time
  double rule_time_us = 0;  // the rules' plan's, measured in the same run
};

// One CPU's entries.
struct TuningEntries {
  std::map<std::string, TunedConv> convs;                  // by format_conv_key
  std::map<std::string, double> reorders;                  // by format_reorder_key, microseconds
  std::map<std::string, std::map<int, int64_t>> layouts;   // by graph fingerprint: node -> output block
  std::map<std::string, int> threads;                      // by model fingerprint: threads to run it on
  bool empty() const { return convs.empty() && reorders.empty() && layouts.empty() && threads.empty(); }
};

// A whole file: entries per CPU identity.
struct TuningCacheFile {
  std::map<std::string, TuningEntries> cpus;
};

// "channels plane from to threads", the reorder entries' key.
std::string format_reorder_key(int64_t channels, int64_t plane, int64_t from, int64_t to, int threads);

// $XDG_CACHE_HOME/ninegrid/tuning.cache, else $HOME/.cache/ninegrid/tuning.cache; empty when neither
// variable is set (then no file is read or written by default). The one place the library reads the
// environment: the XDG convention is how a program finds the user's cache directory.
std::string default_tuning_cache_path();

// Reads `path`. A missing file gives an empty result and no warning. A file that is not a valid tuning
// cache (wrong header or version, any malformed line, a count that does not match, too large) gives an
// empty result and a warning naming the file and what is wrong.
TuningCacheFile read_tuning_cache(const std::string& path, std::string* warning);

// This CPU's entries of `path` (read_tuning_cache), with a warning too when the file is valid but holds
// only other CPUs' entries.
TuningEntries read_tuning_entries(const std::string& path, std::string* warning);

// Writes the file (creating its directory), through a temporary file renamed over `path` so a reader
// never sees half a file. Throws Error when it cannot.
void write_tuning_cache(const std::string& path, const TuningCacheFile& file);

}  // namespace ninegrid
