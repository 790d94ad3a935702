#include "runtime/prepared_kernels.h"

#include <cstring>
#include <iterator>

namespace ninegrid {

std::string PreparedKernels::signature(const std::vector<Shape>& input_shapes, const std::vector<Tensor>& contents) {
  std::string s;
  auto put = [&s](int64_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<int64_t>(input_shapes.size()));
  for (const Shape& shape : input_shapes) {
    put(static_cast<int64_t>(shape.size()));
    for (int64_t d : shape) put(d);
  }
  for (size_t i = 0; i < contents.size(); ++i) {
    if (!contents[i].defined()) continue;
    put(static_cast<int64_t>(i));
    put(static_cast<int64_t>(contents[i].dtype()));
    put(static_cast<int64_t>(contents[i].nbytes()));
    s.append(static_cast<const char*>(contents[i].data()), contents[i].nbytes());
  }
  return s;
}

std::shared_ptr<const void> PreparedKernels::find(const std::string& signature, int node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = table_.find({signature, node});
  if (it == table_.end()) return nullptr;
  std::shared_ptr<const void> state = it->second.lock();
  if (state) ++reused_;
  return state;
}

void PreparedKernels::add(const std::string& signature, int node, const std::shared_ptr<const void>& state, bool pin) {
  if (!state) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::weak_ptr<const void>& slot = table_[{signature, node}];
  if (!slot.expired()) return;
  slot = state;
  ++added_;
  if (pin) pinned_.push_back(state);
  // Forget what no session uses any more (a dynamic-shape model planned for many shapes).
  if (added_ % 256 == 0)
    for (auto e = table_.begin(); e != table_.end();) e = e->second.expired() ? table_.erase(e) : std::next(e);
}

int64_t PreparedKernels::added() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return added_;
}

int64_t PreparedKernels::reused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reused_;
}

}  // namespace ninegrid
