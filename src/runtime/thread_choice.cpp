#include "runtime/thread_choice.h"

#include <algorithm>

#include "graph/layout_search.h"

namespace ninegrid {

std::string model_thread_fingerprint(const Graph& g, const std::string& isa, int max_block, int opt_level,
                                     int threads_asked) {
  return layout_fingerprint(g, "model threads " + std::to_string(threads_asked) + " isa " + isa + " block " +
                                   std::to_string(max_block) + " opt " + std::to_string(opt_level));
}

int threads_to_run(const std::map<std::string, int>& entries, const std::string& fingerprint, int asked) {
  auto it = entries.find(fingerprint);
  if (it == entries.end() || it->second < 1) return asked;
  return std::min(asked, it->second);
}

}  // namespace ninegrid
