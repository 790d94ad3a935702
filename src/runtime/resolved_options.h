// The public Options checked and turned into what the layers below read: the ops' ExecSettings and
// the planner's ResourceLimits, and the session's thread pool settings.
#pragma once

#include <chrono>

#include "graph/infer_values.h"
#include "ninegrid/ninegrid.h"
#include "ops/exec_settings.h"

namespace ninegrid {

struct ResolvedOptions {
  ExecSettings exec;
  ResourceLimits limits;
  int64_t max_file_bytes = 0;  // model and weights files Model::load reads (0: no limit)
  std::chrono::microseconds spin{0};  // each session's ThreadPool spin limit
};

// Throws Error naming the field on a value out of range or an unknown name.
ResolvedOptions resolve_options(const Options& options);

}  // namespace ninegrid
