// The whole model's thread count from the tuning cache. Some models run slower on more threads (small
// layers whose split costs more than it saves, and each layer's data moving between cores that share no
// cache); no per-layer choice fixes that, since a layer run on one core between split ones moves its
// data to that core and back. So the tuner times the whole model at every count up to the one asked for
// (runtime/tuner.cpp), and where fewer ran it clearly faster the cache says so; a load asking for that
// many threads then runs its sessions on the fewer.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace ninegrid {

// The model's key in the cache's threads entries: the imported graph (ops, attributes, shapes; not the
// weights) and what else decides its speed, the thread count asked for included.
std::string model_thread_fingerprint(const Graph& g, const std::string& isa, int max_block, int opt_level,
                                     int threads_asked);

// The threads a load asking for `asked` runs on: the cache's count for `fingerprint` where it holds one
// (never more than asked), else `asked`.
int threads_to_run(const std::map<std::string, int>& entries, const std::string& fingerprint, int asked);

}  // namespace ninegrid
