#include "runtime/arena_layout.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace ninegrid {

// The greedy, largest first: each buffer goes at the lowest offset that does not overlap a buffer already
// placed whose lifetime intersects its own. Equal sizes go by first step, then by index, so the layout
// is a function of the buffers alone.
//
// Finding the lowest free offset means looking at the byte ranges of the placed buffers live at some
// step of the new buffer's lifetime. Scanning every placed buffer for them costs O(n) per buffer, and
// even collecting only the overlapping ones costs O(n) per buffer when n buffers are live at once (a
// Split into n outputs that one Concat reads). So the placed buffers are kept in a segment tree over
// time whose nodes hold unions of byte ranges, merged as they are added:
//  - cover(v): the union of the ranges of the buffers whose lifetime decomposes onto node v (v's steps
//    lie within the lifetime, its parent's do not);
//  - below(v): the union of the ranges of the buffers stored at v or at any node under it.
// The placed buffers live during [a, b] are those stored under the O(log T) nodes that decompose [a, b]
// (their below sets) and those stored at the O(log T) nodes whose steps straddle a or b (their cover
// sets: a buffer stored there covers all of that node's steps, some of which are in [a, b]). The lowest
// offset y where [y, y + bytes) misses all these sets is found by walking their ranges in order of their
// beginnings, moving y past each range that blocks it. Buffers that stack without gaps merge into one
// range, so the cost per buffer grows with the number of separate busy ranges below its offset (at most
// the number of placed buffers live beside it, often far fewer), times O(log n).

namespace {

struct Range {
  size_t begin, end;  // [begin, end), begin < end
};

// The segment tree over time steps [0, leaves), leaves a power of two; node 1 is the root, node v has
// children 2v and 2v + 1, and step t is leaf leaves + t. Each node has two sets of byte ranges, each kept
// sorted, disjoint and with touching ranges merged, in one shared pool of ranges: a set is a block of
// the pool whose capacity is its size rounded up to a power of two, moved to the pool's end when it
// outgrows it.
class TimeTree {
 public:
  explicit TimeTree(int steps) {
    while (leaves_ < steps) leaves_ *= 2;
    nodes_.assign(2 * static_cast<size_t>(leaves_), Node{});
    while ((1 << levels_) < leaves_) ++levels_;
    covers_at_level_.assign(levels_ + 1, 0);
  }

  void reserve(size_t ranges) { pool_.reserve(ranges); }

  // Records that [begin, end) is busy during steps [a, b].
  void insert(int a, int b, size_t begin, size_t end) {
    const Range r{begin, end};
    for (int l = a + leaves_, h = b + leaves_ + 1; l < h; l >>= 1, h >>= 1) {
      if (l & 1) insert_at(l++, r);
      if (h & 1) insert_at(--h, r);
    }
  }

  // The lowest offset at which `bytes` bytes miss every range busy at some step in [a, b].
  size_t lowest_fit(int a, int b, size_t bytes) {
    // The sets to look at: below() of the nodes that decompose [a, b], and cover() of the nodes
    // holding step a or b that are not inside [a, b] (those are the ancestors of the former).
    found_.clear();
    for (int l = a + leaves_, h = b + leaves_ + 1; l < h; l >>= 1, h >>= 1) {
      if (l & 1) add_found(below(l++));
      if (h & 1) add_found(below(--h));
    }
    const int la = a + leaves_, lb = b + leaves_;
    for (int k = 0; k <= levels_; ++k) {
      if (covers_at_level_[k] == 0) continue;
      const int va = la >> k, vb = lb >> k;
      const int lo = (va << k) - leaves_, hi = lo + (1 << k) - 1;
      if (lo < a || hi > b) add_found(nodes_[va].cover);
      if (vb != va) {
        const int lo_b = (vb << k) - leaves_, hi_b = lo_b + (1 << k) - 1;
        if (lo_b < a || hi_b > b) add_found(nodes_[vb].cover);
      }
    }
    // Merge the sets' ranges in order of their beginnings (a heap of one cursor per set), moving y past
    // each range that intersects [y, y + bytes), until the next range begins at or after y + bytes.
    // Ranges ending at or before y no longer matter: a cursor on one jumps past all of them.
    auto later = [](const Cursor& x, const Cursor& y) { return x.begin > y.begin; };
    std::make_heap(found_.begin(), found_.end(), later);
    size_t y = 0;
    while (!found_.empty()) {
      std::pop_heap(found_.begin(), found_.end(), later);
      Cursor& c = found_.back();
      const Range& r = pool_[c.at];
      if (y + bytes <= r.begin) break;
      y = std::max(y, r.end);
      // Usually the next range; else search.
      if (++c.at < c.stop && pool_[c.at].end <= y)
        c.at = static_cast<uint32_t>(
            std::lower_bound(pool_.begin() + c.at + 1, pool_.begin() + c.stop, y,
                             [](const Range& x, size_t v) { return x.end <= v; }) -
            pool_.begin());
      if (c.at == c.stop) {
        found_.pop_back();
      } else {
        c.begin = pool_[c.at].begin;
        std::push_heap(found_.begin(), found_.end(), later);
      }
    }
    return y;
  }

 private:
  struct Set {
    uint32_t start = 0, size = 0;  // pool_[start, start + size)
  };
  struct Node {
    Set cover, below;
  };
  struct Cursor {
    size_t begin;       // pool_[at].begin
    uint32_t at, stop;  // the next range to look at, and the set's end, in pool_
  };

  static uint32_t capacity(uint32_t size) {
    uint32_t c = 1;
    while (c < size) c *= 2;
    return c;
  }

  void add_found(const Set& s) {
    if (s.size > 0) found_.push_back(Cursor{pool_[s.start].begin, s.start, s.start + s.size});
  }

  // A leaf's below() is its cover(): no node under it.
  const Set& below(int v) const { return v >= leaves_ ? nodes_[v].cover : nodes_[v].below; }

  // Adds r to cover(v), and to below() of v and of its ancestors up to the first that already holds all
  // of r (the ones above it hold it too).
  void insert_at(int v, const Range& r) {
    Set& cover = nodes_[v].cover;
    if (cover.size == 0) {
      int level = 0;
      while ((v << level) < leaves_) ++level;
      ++covers_at_level_[level];
    }
    if (!add(cover, r)) return;
    for (v = v >= leaves_ ? v >> 1 : v; v >= 1; v >>= 1)
      if (!add(nodes_[v].below, r)) break;
  }

  // Adds r to the set; false if the set already held all of it.
  bool add(Set& s, const Range& r) {
    Range* first = pool_.data() + s.start;
    Range* last = first + s.size;
    // The first range ending at or after r.begin: it and those after it beginning at or before r.end
    // merge with r.
    Range* lo = std::lower_bound(first, last, r.begin, [](const Range& x, size_t v) { return x.end < v; });
    if (lo != last && lo->begin <= r.end) {
      if (lo->begin <= r.begin && r.end <= lo->end) return false;
      Range* hi = lo;
      size_t end = r.end;
      while (hi != last && hi->begin <= r.end) end = std::max(end, (hi++)->end);
      *lo = Range{std::min(r.begin, lo->begin), end};
      std::copy(hi, last, lo + 1);
      s.size -= static_cast<uint32_t>(hi - lo - 1);
      return true;
    }
    const size_t at = static_cast<size_t>(lo - first);
    if (s.size == 0 || s.size == capacity(s.size)) {  // full: move to a block twice the size
      const size_t start = pool_.size();
      pool_.resize(start + capacity(s.size + 1));
      std::copy(pool_.begin() + s.start, pool_.begin() + s.start + s.size, pool_.begin() + start);
      s.start = static_cast<uint32_t>(start);
    }
    Range* base = pool_.data() + s.start;
    std::copy_backward(base + at, base + s.size, base + s.size + 1);
    base[at] = r;
    ++s.size;
    return true;
  }

  int leaves_ = 1, levels_ = 0;  // leaves_ == 1 << levels_; leaves are at level 0, the root at levels_
  std::vector<Node> nodes_;
  std::vector<int> covers_at_level_;  // how many nodes of each level have a cover() that is not empty
  std::vector<Range> pool_;
  std::vector<Cursor> found_;
};

}  // namespace

size_t assign_arena_offsets(std::vector<ArenaBuffer>& buffers) {
  const size_t n = buffers.size();
  if (n == 0) return 0;

  // Steps as dense indices that keep their order: shifted when the steps span few more values than
  // there are buffers (the planner's case), ranked otherwise.
  int lo = buffers[0].first, hi = buffers[0].last;
  for (const ArenaBuffer& b : buffers) {
    lo = std::min({lo, b.first, b.last});
    hi = std::max({hi, b.first, b.last});
  }
  std::vector<int> first(n), last(n);
  int steps = 0;
  if (static_cast<int64_t>(hi) - lo < 4 * static_cast<int64_t>(n) + 64) {
    for (size_t i = 0; i < n; ++i) {
      first[i] = buffers[i].first - lo;
      last[i] = buffers[i].last - lo;
    }
    steps = hi - lo + 1;
  } else {
    std::vector<int> values;
    values.reserve(2 * n);
    for (const ArenaBuffer& b : buffers) {
      values.push_back(b.first);
      values.push_back(b.last);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    auto rank = [&](int v) { return static_cast<int>(std::lower_bound(values.begin(), values.end(), v) - values.begin()); };
    for (size_t i = 0; i < n; ++i) {
      first[i] = rank(buffers[i].first);
      last[i] = rank(buffers[i].last);
    }
    steps = static_cast<int>(values.size());
  }

  struct Key {
    size_t bytes;
    int first;
    uint32_t index;
  };
  std::vector<Key> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = {buffers[i].bytes, buffers[i].first, static_cast<uint32_t>(i)};
  std::sort(order.begin(), order.end(), [](const Key& x, const Key& y) {
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.first != y.first) return x.first < y.first;
    return x.index < y.index;
  });

  TimeTree tree(steps);
  tree.reserve(8 * n);
  size_t total = 0;
  for (const Key& k : order) {
    ArenaBuffer& b = buffers[k.index];
    if (b.bytes == 0) {  // takes no bytes, overlaps nothing
      b.offset = 0;
      continue;
    }
    const int a = first[k.index], z = last[k.index];
    b.offset = tree.lowest_fit(a, z, b.bytes);
    tree.insert(a, z, b.offset, b.offset + b.bytes);
    total = std::max(total, b.offset + b.bytes);
  }
  return total;
}

}  // namespace ninegrid
