// The arena's offset assignment (runtime/arena_layout) timed on synthetic buffer sets and measured on
// real models, against the O(n^2) greedy it replaced (the same greedy, kept here as it was).
//
//   ninegrid_arena_bench [--n N] [--reference-n N] [--reference-chain] [--case I] [MODEL[,[NAME=]DxDxD...]] ...
//
// Synthetic sets of N buffers (default 200000) are assigned by assign_arena_offsets; the old greedy runs
// on the same kinds of sets with --reference-n buffers (default 20000), and on the N-buffer chain with
// --reference-chain (about a minute); --reference-n 0 skips it, --case I runs only the I-th set. For each model, the arena buffers of its plan (as the planner
// builds them) are laid out by both, with the lower bound max over steps of the bytes live at that step,
// and by two variants of the greedy's order (not used by the planner).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ninegrid/ninegrid.h"
#include "runtime/arena_layout.h"
#include "runtime/model_impl.h"
#include "runtime/plan.h"
#include "runtime/session_impl.h"

using namespace ninegrid;

namespace {

// The greedy as it was before runtime/arena_layout's segment tree (commit e5c2653): each buffer scans
// every placed buffer for those whose lifetime intersects its own.
size_t old_assign_arena_offsets(std::vector<ArenaBuffer>& buffers) {
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

using Assign = size_t (*)(std::vector<ArenaBuffer>&);

struct Timed {
  double ms;
  size_t bytes;
};

// The fastest of `runs` runs, each on a fresh copy.
Timed time_assign(Assign assign, const std::vector<ArenaBuffer>& buffers, int runs) {
  Timed best{1e300, 0};
  for (int r = 0; r < runs; ++r) {
    std::vector<ArenaBuffer> b = buffers;
    auto t0 = std::chrono::steady_clock::now();
    size_t bytes = assign(b);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = {std::min(best.ms, ms), bytes};
  }
  return best;
}

size_t max_live_bytes(const std::vector<ArenaBuffer>& buffers) {
  std::vector<std::pair<int, long long>> events;  // (step, +bytes at first, -bytes after last)
  for (const ArenaBuffer& b : buffers) {
    events.push_back({b.first, static_cast<long long>(b.bytes)});
    events.push_back({b.last + 1, -static_cast<long long>(b.bytes)});
  }
  std::sort(events.begin(), events.end());
  long long live = 0, most = 0;
  for (size_t i = 0; i < events.size();) {
    int step = events[i].first;
    for (; i < events.size() && events[i].first == step; ++i) live += events[i].second;
    most = std::max(most, live);
  }
  return static_cast<size_t>(most);
}

// The same lowest-offset rule in another order (O(n^2), for the variants measured on real models).
size_t greedy_in_order(std::vector<ArenaBuffer> buffers, const std::vector<size_t>& order) {
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t i : order) {
    ArenaBuffer& it = buffers[i];
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed)
      if (buffers[j].first <= it.last && it.first <= buffers[j].last)
        busy.push_back({buffers[j].offset, buffers[j].offset + buffers[j].bytes});
    std::sort(busy.begin(), busy.end());
    size_t y = 0;
    for (auto& r : busy) {
      if (y + it.bytes <= r.first) break;
      y = std::max(y, r.second);
    }
    it.offset = y;
    total = std::max(total, y + it.bytes);
    placed.push_back(i);
  }
  return total;
}

// Variants of the order: equal sizes longest-lived first; or by the most bytes live at any step of the
// buffer's lifetime, then by size (TFLite's "greedy by breadth" in spirit).
size_t longest_first_ties(const std::vector<ArenaBuffer>& b) {
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (b[x].bytes != b[y].bytes) return b[x].bytes > b[y].bytes;
    if (b[x].last - b[x].first != b[y].last - b[y].first) return b[x].last - b[x].first > b[y].last - b[y].first;
    return b[x].first != b[y].first ? b[x].first < b[y].first : x < y;
  });
  return greedy_in_order(b, order);
}

size_t breadth_first(const std::vector<ArenaBuffer>& b) {
  int steps = 0;
  for (const ArenaBuffer& x : b) steps = std::max(steps, x.last + 1);
  std::vector<size_t> live(steps, 0), widest(b.size(), 0);
  for (const ArenaBuffer& x : b)
    for (int t = x.first; t <= x.last; ++t) live[t] += x.bytes;
  for (size_t i = 0; i < b.size(); ++i)
    for (int t = b[i].first; t <= b[i].last; ++t) widest[i] = std::max(widest[i], live[t]);
  std::vector<size_t> order(b.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (widest[x] != widest[y]) return widest[x] > widest[y];
    if (b[x].bytes != b[y].bytes) return b[x].bytes > b[y].bytes;
    return b[x].first != b[y].first ? b[x].first < b[y].first : x < y;
  });
  return greedy_in_order(b, order);
}

ArenaBuffer buf(size_t bytes, int first, int last) {
  ArenaBuffer b;
  b.bytes = bytes;
  b.first = first;
  b.last = last;
  return b;
}

struct Synthetic {
  const char* name;
  std::function<std::vector<ArenaBuffer>(int n)> make;
};

std::vector<Synthetic> synthetic_sets() {
  return {
      {"chain (i written at step i, read at i+1), equal sizes",
       [](int n) {
         std::vector<ArenaBuffer> b;
         for (int i = 0; i < n; ++i) b.push_back(buf(4096, i, i + 1));
         return b;
       }},
      {"network-like chain: stages halving in size, 30% residual skips of 2-4 steps, 1% kept to the end",
       [](int n) {
         std::mt19937 rng(1);
         std::vector<ArenaBuffer> b;
         size_t bytes = 64 << 14;
         for (int i = 0; i < n; ++i) {
           if (rng() % 64 == 0) bytes = std::max<size_t>(64, bytes / 2);
           if (bytes == 64 && rng() % 64 == 0) bytes = 64 << 14;
           int r = static_cast<int>(rng() % 100);
           int last = r < 30 ? i + 2 + static_cast<int>(rng() % 3) : r == 99 ? n : i + 1;
           b.push_back(buf(bytes * (1 + rng() % 2), i, last));
         }
         return b;
       }},
      {"sliding window: each live 64 steps, random sizes",
       [](int n) {
         std::mt19937 rng(2);
         std::vector<ArenaBuffer> b;
         for (int i = 0; i < n; ++i) b.push_back(buf(64 * (1 + rng() % 256), i, i + 64));
         return b;
       }},
      {"sliding window: each live 1024 steps, random sizes",
       [](int n) {
         std::mt19937 rng(3);
         std::vector<ArenaBuffer> b;
         for (int i = 0; i < n; ++i) b.push_back(buf(64 * (1 + rng() % 256), i, i + 1024));
         return b;
       }},
      {"all live at once (a Split into n outputs, one Concat), equal sizes",
       [](int n) {
         std::vector<ArenaBuffer> b;
         for (int i = 0; i < n; ++i) b.push_back(buf(64, 0, 1));
         return b;
       }},
      {"Split into n/2, each output through its own Relu, Concat",
       [](int n) {
         std::vector<ArenaBuffer> b;
         int half = n / 2;
         for (int i = 0; i < half; ++i) b.push_back(buf(64, 0, i + 1));         // Split output i
         for (int i = 0; i < half; ++i) b.push_back(buf(64, i + 1, half + 1));  // Relu i
         return b;
       }},
      {"random: 90% live 0-3 steps, 10% up to 1000, sizes 64 B-1 MB",
       [](int n) {
         std::mt19937 rng(4);
         std::vector<ArenaBuffer> b;
         for (int i = 0; i < n; ++i) {
           int first = static_cast<int>(rng() % static_cast<unsigned>(n));
           int len = rng() % 10 == 0 ? static_cast<int>(rng() % 1000) : static_cast<int>(rng() % 4);
           b.push_back(buf(64 * (1 + rng() % 16384), first, first + len));
         }
         return b;
       }},
  };
}

std::vector<ArenaBuffer> plan_buffers(const Plan& plan) {
  // Lifetimes as the planner computes them: from the step writing a value to the last step reading it
  // or an alias of it.
  const auto& slots = plan.slots;
  auto root_of = [&](int v) {
    while (slots[v].storage == Storage::Alias) v = slots[v].alias_of;
    return v;
  };
  std::vector<int> first(slots.size(), -1), last(slots.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int v : plan.steps[s].outputs)
      if (v >= 0 && slots[v].storage == Storage::Arena) first[v] = last[v] = static_cast<int>(s);
    for (int v : plan.steps[s].inputs)
      if (v >= 0) {
        int r = root_of(v);
        if (slots[r].storage == Storage::Arena) last[r] = std::max(last[r], static_cast<int>(s));
      }
  }
  std::vector<ArenaBuffer> buffers;
  for (size_t v = 0; v < slots.size(); ++v)
    if (slots[v].storage == Storage::Arena) {
      size_t bytes = static_cast<size_t>(shape_numel(plan.desc(static_cast<int>(v)).shape)) * dtype_size(plan.desc(static_cast<int>(v)).dtype);
      buffers.push_back(buf((bytes + 63) / 64 * 64, first[v], last[v]));
    }
  return buffers;
}

Shape parse_dims(const std::string& text) {
  Shape s;
  size_t p = 0;
  while (p <= text.size()) {
    size_t x = text.find('x', p);
    if (x == std::string::npos) x = text.size();
    s.push_back(std::stoll(text.substr(p, x - p)));
    p = x + 1;
  }
  return s;
}

void measure_model(const std::string& arg) {
  std::vector<std::string> parts;
  for (size_t p = 0;;) {
    size_t c = arg.find(',', p);
    parts.push_back(arg.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) break;
    p = c + 1;
  }
  Options options;
  options.threads = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t eq = parts[i].find('=');
    std::string name = eq == std::string::npos ? "" : parts[i].substr(0, eq);
    if (name.empty()) name = Model::load(parts[0])->inputs().at(i - 1).name;
    options.input_shapes[name] = parse_dims(eq == std::string::npos ? parts[i] : parts[i].substr(eq + 1));
  }
  auto model = Model::load(parts[0], options);
  auto session = model->create_session();
  const Plan& plan = InternalAccess::impl(*session).plan();
  std::vector<ArenaBuffer> buffers = plan_buffers(plan);
  Timed now = time_assign(assign_arena_offsets, buffers, 5);
  Timed old = time_assign(old_assign_arena_offsets, buffers, 5);
  std::string name = parts[0].substr(parts[0].find_last_of('/') + 1);
  std::printf("%-40s %5zu buffers  arena %10zu B  old greedy %10zu B (%+.2f%%)  lower bound %10zu B  "
              "%.3f ms (old %.3f ms)  variants: longest first among equal sizes %10zu B, breadth first %10zu B%s\n",
              name.c_str(), buffers.size(), now.bytes, old.bytes,
              old.bytes ? 100.0 * (double(now.bytes) - double(old.bytes)) / double(old.bytes) : 0.0,
              max_live_bytes(buffers), now.ms, old.ms, longest_first_ties(buffers), breadth_first(buffers),
              now.bytes == plan.arena_bytes ? "" : "  (differs from the plan's arena!)");
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200000, reference_n = 20000, only = -1;
  bool reference_chain = false;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (a == "--reference-n" && i + 1 < argc) reference_n = std::atoi(argv[++i]);
    else if (a == "--reference-chain") reference_chain = true;
    else if (a == "--case" && i + 1 < argc) only = std::atoi(argv[++i]);
    else if (a == "--help" || a == "-h") {
      std::puts("ninegrid_arena_bench [--n N] [--reference-n N] [--reference-chain] [MODEL[,[NAME=]DxDxD...]] ...");
      return 0;
    } else models.push_back(a);
  }
  if (models.empty()) {
    std::printf("synthetic sets: time to assign (fastest of 3), arena bytes / lower bound\n");
    const std::vector<Synthetic> sets = synthetic_sets();
    for (int c = 0; c < static_cast<int>(sets.size()); ++c) {
      if (only >= 0 && c != only) continue;
      const Synthetic& s = sets[c];
      std::vector<ArenaBuffer> big = s.make(n);
      Timed now = time_assign(assign_arena_offsets, big, 3);
      std::printf("%d. %s\n", c, s.name);
      std::printf("  n=%-7d new %9.2f ms  arena/bound %.4f\n", n, now.ms, double(now.bytes) / double(max_live_bytes(big)));
      if (reference_n > 0) {
        std::vector<ArenaBuffer> small = s.make(reference_n);
        Timed now_small = time_assign(assign_arena_offsets, small, 3);
        Timed old_small = time_assign(old_assign_arena_offsets, small, 1);
        std::printf("  n=%-7d new %9.2f ms  old %10.1f ms  same arena: %s\n", reference_n, now_small.ms, old_small.ms,
                    now_small.bytes == old_small.bytes ? "yes" : "NO");
      }
      if (c == 0 && reference_chain) {
        Timed old = time_assign(old_assign_arena_offsets, big, 1);
        std::printf("  n=%-7d old %10.1f ms  same arena: %s\n", n, old.ms, old.bytes == now.bytes ? "yes" : "NO");
      }
    }
  }
  for (const std::string& m : models) {
    try {
      measure_model(m);
    } catch (const std::exception& e) {
      std::printf("%s: %s\n", m.c_str(), e.what());
    }
  }
  return 0;
}
