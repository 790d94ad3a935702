// Where each intermediate tensor lives in a session's arena: buffers whose lifetimes overlap get
// disjoint byte ranges, the others may share bytes, and the arena should be as small as it can be.
#pragma once

#include <cstddef>
#include <vector>

namespace ninegrid {

struct ArenaBuffer {
  size_t bytes = 0;     // a multiple of 64
  int first = 0;        // the step that writes it first
  int last = 0;         // the step that reads it last (>= first)
  size_t offset = 0;    // out: its place in the arena, a multiple of 64
};

// Assigns every buffer's offset; returns the arena's size in bytes. Greedy, largest first (equal sizes by
// first step, then by position in `buffers`): each buffer goes at the lowest offset that does not overlap
// a buffer already placed whose lifetime intersects its own. Takes O(n log n) for n buffers when those
// live together stack without gaps (chains, branches, n outputs live at once); in general the work per
// buffer grows with the number of separate busy byte ranges below the offset it gets.
size_t assign_arena_offsets(std::vector<ArenaBuffer>& buffers);

}  // namespace ninegrid
