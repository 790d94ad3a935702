#include "runtime/layout_choice.h"

namespace ninegrid {

namespace {
thread_local LayoutCapture* g_capture = nullptr;
}  // namespace

std::string layout_salt(int max_block, const std::string& isa, int threads) {
  return "block " + std::to_string(max_block) + " isa " + isa + " threads " + std::to_string(threads);
}

LayoutCapture::LayoutCapture() { g_capture = this; }
LayoutCapture::~LayoutCapture() { g_capture = nullptr; }

LayoutCapture* active_layout_capture() { return g_capture; }

std::vector<int64_t> stored_conv_blocks(const Graph& g, const std::string& fingerprint,
                                        const std::map<std::string, std::map<int, int64_t>>& layouts) {
  auto it = layouts.find(fingerprint);
  if (it == layouts.end()) return {};
  std::vector<int64_t> blocks(g.nodes.size(), 0);
  for (const auto& [node, block] : it->second) {
    if (node < 0 || static_cast<size_t>(node) >= g.nodes.size() || g.nodes[static_cast<size_t>(node)].op_type != "Conv")
      return {};
    blocks[static_cast<size_t>(node)] = block;
  }
  return blocks;
}

}  // namespace ninegrid
