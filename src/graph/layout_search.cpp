#include "graph/layout_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "ir/graph.h"
#include "ninegrid/tensor.h"

namespace ninegrid {

namespace {

// Blocks as 2-bit codes; a value's transforms made so far as a 4-bit mask of target codes.
constexpr int64_t kBlocks[4] = {1, 4, 8, 16};

int code_of(int64_t block) {
  for (int c = 0; c < 4; ++c)
    if (kBlocks[c] == block) return c;
  throw Error("layout search: block " + std::to_string(block) + " is not 1, 4, 8 or 16");
}

// One live value: its block code and its transforms' mask.
struct Live {
  int value;
  uint8_t code, made;
  bool operator==(const Live& o) const { return value == o.value && code == o.code && made == o.made; }
  bool operator<(const Live& o) const {
    return value != o.value ? value < o.value : code != o.code ? code < o.code : made < o.made;
  }
};

struct State {
  std::vector<Live> live;  // sorted by value
  double cost = 0;
  std::vector<int64_t> blocks;  // per value, filled in as values are made (for the answer)
};

Live* find_live(std::vector<Live>& live, int value) {
  auto it = std::lower_bound(live.begin(), live.end(), value, [](const Live& l, int v) { return l.value < v; });
  return it != live.end() && it->value == value ? &*it : nullptr;
}

// The programme; `forced` (per node, 0: free) fixes conv choices, for layout_cost.
LayoutSolution run(const LayoutProblem& pb, size_t beam, const std::vector<int64_t>* forced) {
  const size_t nv = pb.values.size();
  std::vector<int> last_use(nv, -1);
  std::vector<bool> made_inside(nv, false);
  for (size_t i = 0; i < pb.nodes.size(); ++i) {
    const LayoutProblem::Node& n = pb.nodes[i];
    for (int v : n.inputs)
      if (v >= 0) last_use[static_cast<size_t>(v)] = static_cast<int>(i);
    if (n.residual >= 0) last_use[static_cast<size_t>(n.residual)] = static_cast<int>(i);
    if (n.output >= 0) made_inside[static_cast<size_t>(n.output)] = true;
  }
  State start;
  start.blocks.assign(nv, 1);
  for (size_t v = 0; v < nv; ++v) {
    start.blocks[v] = pb.values[v].initial_block;
    if (!made_inside[v] && last_use[v] >= 0)
      start.live.push_back({static_cast<int>(v), static_cast<uint8_t>(code_of(pb.values[v].initial_block)), 0});
  }
  std::vector<State> states = {start};
  bool exact = true;

  for (size_t i = 0; i < pb.nodes.size(); ++i) {
    const LayoutProblem::Node& n = pb.nodes[i];
    std::map<std::vector<Live>, State> next;
    auto block_of = [&](State& s, int v) -> int64_t {
      Live* l = find_live(s.live, v);
      return l ? kBlocks[l->code] : pb.values[static_cast<size_t>(v)].initial_block;
    };
    // Transforms value v to `to` in state s (charged once per (value, block)).
    auto transform = [&](State& s, int v, int64_t to) {
      if (pb.values[static_cast<size_t>(v)].free) return;
      Live* l = find_live(s.live, v);
      if (!l || kBlocks[l->code] == to) return;
      const uint8_t bit = static_cast<uint8_t>(1u << code_of(to));
      if (l->made & bit) return;
      l->made |= bit;
      s.cost += pb.transform_cost(v, kBlocks[l->code], to);
    };
    // -1: the rules' choice (layout_cost's 0).
    std::vector<int64_t> options = {0};
    if (n.kind == LayoutProblem::Kind::Conv && n.residual < 0) {
      options = n.choices;
      if (forced) options = {(*forced)[i] > 0 ? (*forced)[i] : -1};
      if (n.choices.empty()) throw Error("layout search: a conv with no block to choose");
    }
    for (const State& from : states) {
      for (int64_t option : options) {
        State s = from;
        int64_t out = 1;
        switch (n.kind) {
          case LayoutProblem::Kind::Conv: {
            const int64_t in = n.inputs.empty() || n.inputs[0] < 0 ? 1 : block_of(s, n.inputs[0]);
            out = n.residual >= 0 ? block_of(s, n.residual) : option;
            if (option < 0) {
              out = n.choices.front();
              if (n.keep_narrower_input && out > 1 && in > 1 && in < out) out = in;
            }
            const double c = n.cost ? n.cost(in, out) : 0.0;
            if (!(c >= 0) || std::isinf(c)) continue;
            s.cost += c;
            break;
          }
          case LayoutProblem::Kind::Follow: {
            int64_t common = -1;
            bool agree = true;
            for (int v : n.inputs) {
              if (v < 0) continue;
              const int64_t b = block_of(s, v);
              if (common < 0) common = b;
              else if (b != common) agree = false;
            }
            out = common < 0 ? 1 : common;
            if (!agree)
              for (int v : n.inputs)
                if (v >= 0 && pb.values[static_cast<size_t>(v)].channels % out != 0) out = 1;
            if (n.must_divide > 0 && n.must_divide % out != 0) out = 1;
            for (int v : n.inputs)
              if (v >= 0) transform(s, v, out);
            break;
          }
          case LayoutProblem::Kind::Plain:
            for (int v : n.inputs)
              if (v >= 0) transform(s, v, 1);
            break;
        }
        // Inputs read for the last time leave the state; the output joins it.
        std::vector<Live> live;
        for (const Live& l : s.live)
          if (last_use[static_cast<size_t>(l.value)] > static_cast<int>(i)) live.push_back(l);
        if (n.output >= 0) {
          s.blocks[static_cast<size_t>(n.output)] = out;
          if (last_use[static_cast<size_t>(n.output)] > static_cast<int>(i)) {
            live.push_back({n.output, static_cast<uint8_t>(code_of(out)), 0});
            std::sort(live.begin(), live.end());
          }
        }
        s.live = live;
        auto it = next.find(s.live);
        if (it == next.end() || s.cost < it->second.cost) next[s.live] = std::move(s);
      }
    }
    if (next.empty()) throw Error("layout search: no assignment of blocks is possible");
    states.clear();
    for (auto& kv : next) states.push_back(std::move(kv.second));
    if (states.size() > beam) {
      std::nth_element(states.begin(), states.begin() + static_cast<long>(beam), states.end(),
                       [](const State& a, const State& b) { return a.cost < b.cost; });
      states.resize(beam);
      exact = false;
    }
  }
  const State* best = &states.front();
  for (const State& s : states)
    if (s.cost < best->cost) best = &s;
  LayoutSolution out;
  out.block = best->blocks;
  out.cost = best->cost;
  out.exact = exact;
  return out;
}

}  // namespace

LayoutSolution solve_layout(const LayoutProblem& problem, size_t beam) {
  return run(problem, std::max<size_t>(beam, 1), nullptr);
}

double layout_cost(const LayoutProblem& problem, const std::vector<int64_t>& conv_blocks, std::vector<int64_t>* blocks) {
  std::vector<int64_t> forced(problem.nodes.size(), 0);
  for (size_t i = 0; i < problem.nodes.size() && i < conv_blocks.size(); ++i) forced[i] = conv_blocks[i];
  LayoutSolution s = run(problem, 1, &forced);
  if (blocks) *blocks = s.block;
  return s.cost;
}

namespace {

// FNV-1a, 64 bits.
struct Hash {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void text(const std::string& s) {
    const uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  }
  void number(int64_t v) { bytes(&v, sizeof v); }
};

}  // namespace

std::string layout_fingerprint(const Graph& g, const std::string& salt) {
  Hash h;
  h.text(salt);
  h.number(static_cast<int64_t>(g.values.size()));
  for (const Value& v : g.values) {
    h.number(static_cast<int64_t>(v.dtype));
    h.number(v.shape_known ? 1 : 0);
    for (int64_t d : v.shape) h.number(d);
    h.number(v.is_constant() ? 1 : 0);
  }
  for (const Node& n : g.nodes) {
    h.text(n.op_type);
    for (int i : n.inputs) h.number(i);
    h.number(-7);
    for (int o : n.outputs) h.number(o);
    for (const auto& [name, a] : n.attrs.all()) {
      h.text(name);
      h.number(static_cast<int64_t>(a.kind));
      h.number(a.i);
      h.bytes(&a.f, sizeof a.f);
      h.text(a.s);
      for (int64_t x : a.ints) h.number(x);
      for (float x : a.floats) h.bytes(&x, sizeof x);
      for (const std::string& x : a.strings) h.text(x);
    }
  }
  for (int v : g.inputs) h.number(v);
  for (int v : g.outputs) h.number(v);
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h.h));
  return out;
}

}  // namespace ninegrid
