// The global layout search's results at load time: the tuning cache holds, per graph fingerprint, the
// output block the search chose for each conv node (runtime/tuning_cache.h); a load whose graph has that
// fingerprint (graph/layout_search.h) plans its layout with them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ninegrid {

// The salt of a graph's layout fingerprint: what the searched layout also depends on.
std::string layout_salt(int max_block, const std::string& isa, int threads);

// What the tuner needs from a load: the graph just before layout planning and its fingerprint. While a
// LayoutCapture is alive on a thread, model loads on that thread fill it in.
struct LayoutCapture {
  Graph graph;
  std::string fingerprint;
  bool captured = false;

  LayoutCapture();
  ~LayoutCapture();
  LayoutCapture(const LayoutCapture&) = delete;
  LayoutCapture& operator=(const LayoutCapture&) = delete;
};

// The capture active on this thread, or null.
LayoutCapture* active_layout_capture();

// The per-node blocks of `layouts` for this graph (empty when the fingerprint is not there, or an entry
// names a node that is not a Conv).
std::vector<int64_t> stored_conv_blocks(const Graph& g, const std::string& fingerprint,
                                        const std::map<std::string, std::map<int, int64_t>>& layouts);

}  // namespace ninegrid
