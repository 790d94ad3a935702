#include "ops/op.h"

namespace ninegrid {

void Op::expect_inputs(const std::vector<TensorDesc>& in, size_t min, size_t max) const {
  size_t n = in.size();
  while (n > 0 && !in[n - 1].present) --n;  // trailing omitted optionals do not count
  if (n < min || n > max) {
    std::string want = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    error("expects " + want + " inputs, got " + std::to_string(n));
  }
  for (size_t i = 0; i < min; ++i)
    if (!in[i].present) error("required input #" + std::to_string(i) + " is missing");
}

void Op::expect_dtype(const TensorDesc& t, DataType dtype, const char* what) const {
  if (t.dtype != dtype)
    error(std::string(what) + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.dtype));
}

int Op::normalize_axis(int64_t axis, int rank) const {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

void Op::contents_needed(size_t i, const std::string& what) const {
  // Plans are made per input shape (and per contents of the small graph inputs that decide shapes), so a
  // value that decides an output shape must not depend on tensors computed at run time. Saying
  // "unsupported" lets tools tell this limitation apart from a broken model.
  throw ContentsNeeded(node_.describe() + ": " + what +
                           " must be known when the session is planned (a constant, computed from shapes, or "
                           "computed from the contents of small model inputs); taking it from tensors computed "
                           "at run time is unsupported",
                       static_cast<int>(i));
}

std::vector<int64_t> Op::known_ints(const std::vector<TensorDesc>& in, size_t i, const char* what) const {
  const TensorDesc& t = in[i];
  if (!t.value) contents_needed(i, what);
  const Tensor& v = *t.value;
  std::vector<int64_t> out(static_cast<size_t>(v.numel()));
  if (v.dtype() == DataType::Int64) {
    const int64_t* p = v.data_as<int64_t>();
    out.assign(p, p + v.numel());
  } else if (v.dtype() == DataType::Int32) {
    const int32_t* p = v.data_as<int32_t>();
    for (int64_t i = 0; i < v.numel(); ++i) out[i] = p[i];
  } else {
    error(std::string(what) + " must be int64 or int32, got " + dtype_name(v.dtype()));
  }
  return out;
}

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(const std::string& op_type, OpFactory factory) { factories_[op_type] = std::move(factory); }

std::unique_ptr<Op> OpRegistry::create(const Node& node) const {
  auto it = factories_.find(node.op_type);
  if (it == factories_.end()) throw_node_error(node, "unsupported operator '" + node.op_type + "'");
  return it->second(node);
}

}  // namespace ninegrid
