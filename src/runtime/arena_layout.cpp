#include "runtime/arena_layout.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ninegrid {

// Greedy offset assignment, largest first: each buffer goes at the lowest offset that does not overlap
// a buffer already placed whose lifetime intersects its own.
size_t assign_arena_offsets(std::vector<ArenaBuffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ArenaBuffer &x = buffers[a], &y = buffers[b];
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.first < y.first;
  });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t i : order) {
    ArenaBuffer& it = buffers[i];
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed) {
      const ArenaBuffer& p = buffers[j];
      if (p.first <= it.last && it.first <= p.last) busy.push_back({p.offset, p.bytes});
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (auto& b : busy) {
      if (offset + it.bytes <= b.first) break;
      offset = std::max(offset, b.first + b.second);
    }
    it.offset = offset;
    total = std::max(total, offset + it.bytes);
    placed.push_back(i);
  }
  return total;
}

}  // namespace ninegrid
