// Global layout search (NeoCPU §3.3, DESIGN.md technique 11): which channel block each conv writes, chosen
// over the whole graph by dynamic programming, so that a conv faster with another block pays for the layout
// transforms its choice causes elsewhere.
//
// The graph is abstracted as the layout pass sees it (graph/passes/plan_layout.cpp, layout_problem()):
//   Conv     reads any block (its cost depends on its input's and its own output's block), writes one
//            of its choices (or, with a fused residual, the residual's block);
//   Follow   a layout-oblivious or -tolerant op: its output takes its inputs' common block, or when they
//            disagree the first input's block if it divides every input's channels, else plain; each
//            input in another block is transformed to it;
//   Plain    a layout-dependent reader (or a graph output): every input not plain is transformed.
// A transform of a value to a block is charged once however many readers share it, as the layout pass
// makes one per (value, block).
//
// The programme walks the nodes in topological order. Its state is the block of every live value (made,
// with readers still to come) and which transforms of it exist; a value leaves the state after its last
// reader. A chain keeps one live value, so the state stays as small as the blocks per value (2 under
// AVX-512); a branch (a residual skip, a detection head's siblings, an Inception concat) keeps several.
// The heuristic where that grows too large: after each node only the `beam` cheapest states survive
// (beam search). With a beam at least the number of states the exact programme ever holds, the result
// is exact; the tests check it on small graphs against brute force.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ninegrid {

struct LayoutProblem {
  enum class Kind { Conv, Follow, Plain };
  struct Value {
    int64_t channels = 1;
    int64_t initial_block = 1;  // graph inputs and values made outside the problem: their given block
    bool free = false;          // the same bytes in every layout ([N, C, 1, 1]): never transformed
  };
  struct Node {
    Kind kind = Kind::Plain;
    std::vector<int> inputs;  // values whose layout matters (Conv: its input X only)
    int output = -1;          // the value written (Conv, Follow), or -1
    // Conv: the blocks it may write (one: no choice) and its time for (input block, output block),
    // microseconds (a negative or infinite time: that pair is impossible).
    std::vector<int64_t> choices;
    std::function<double(int64_t in_block, int64_t out_block)> cost;
    int residual = -1;  // Conv with a fused residual: writes that value's block
    // Conv: the rules' choice (choices[0]) gives way to a narrower blocked input's block (a depthwise conv
    // keeps its input's block); only for costing the rules' assignment (layout_cost with 0).
    bool keep_narrower_input = false;
    // Follow: a block that does not divide this (a Concat's zero constants' channels) makes it plain.
    int64_t must_divide = 0;
    int tag = -1;       // the caller's (the graph node's index)
  };
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  // Time to transform value v from one block to another, microseconds.
  std::function<double(int value, int64_t from, int64_t to)> transform_cost;
};

struct LayoutSolution {
  std::vector<int64_t> block;  // per value
  double cost = 0;             // convs plus transforms, microseconds
  bool exact = true;           // no state was pruned
};

// The cheapest assignment of blocks (see above). `beam`: states kept after each node.
LayoutSolution solve_layout(const LayoutProblem& problem, size_t beam = 64);

// The cost of one given assignment of conv output blocks (per node; 0 for nodes that are not convs or
// take the rules' choice: their first, or a narrower input's block where keep_narrower_input says so),
// as solve_layout counts it; the block per value in *blocks if given.
double layout_cost(const LayoutProblem& problem, const std::vector<int64_t>& conv_blocks,
                   std::vector<int64_t>* blocks = nullptr);

class Graph;

// A fingerprint of the graph as the layout pass sees it (ops, attributes, value shapes and types, which
// values are constants), salted with `salt` (the block width, ISA cap and threads the layout was searched
// for): 16 hex digits. A searched layout (per node index) is stored under it and applies only to a graph
// with the same fingerprint.
std::string layout_fingerprint(const Graph& g, const std::string& salt);

}  // namespace ninegrid
