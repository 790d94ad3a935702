// The kernels a model's ops have prepared (packed weights, Op::prepared_state), shared by the model's
// sessions: N sessions of one model hold one copy of the packed weights, not N, and a session created
// after the first prepares nothing. Entries are keyed by a plan's signature (the input shapes and the
// contents of shape-driving inputs, which decide every op's inputs) and the node.
//
// An entry lives while a session uses it (the table holds it weakly), so a session that re-plans for
// new shapes does not keep the old shapes' kernels alive; the model pins the entries of the plan it
// prepared at load time, whose weights it may have released (runtime/model.cpp). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ninegrid/tensor.h"

namespace ninegrid {

class PreparedKernels {
 public:
  // A plan's signature: the shape of every graph input and the bytes of the given contents (per graph
  // input; undefined tensors for the inputs whose contents do not decide shapes).
  static std::string signature(const std::vector<Shape>& input_shapes, const std::vector<Tensor>& contents = {});

  // The state stored for (signature, node), or null.
  std::shared_ptr<const void> find(const std::string& signature, int node) const;
  // Stores a node's state for a signature (a state already stored for it stays: sessions planning at
  // once may both prepare; the first one wins). `pin`: kept for the model's lifetime.
  void add(const std::string& signature, int node, const std::shared_ptr<const void>& state, bool pin = false);

  // For tests and statistics: how many states were added (each one a prepare() that packed weights)
  // and how many times find() returned one (a prepare() saved).
  int64_t added() const;
  int64_t reused() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::weak_ptr<const void>> table_;
  std::vector<std::shared_ptr<const void>> pinned_;
  int64_t added_ = 0;
  mutable int64_t reused_ = 0;
};

}  // namespace ninegrid
